// The OAuth callback is bound to the browser that called authorize: its response sets an HttpOnly,
// SameSite=Lax cookie holding a nonce whose hash the pending authorization keeps. A browser without
// it (an authorization URL shared with someone else) is refused 403 browser_mismatch, with a page
// for a person, and nothing is stored; the authorization stays for its own browser.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { api } from '../support/http.ts';
import { bindingCookie, bindingNonceOf } from '../../src/modules/mcp-connections/oauth/browser-binding.ts';
import {
  browserOf,
  createOAuthConnection,
  followAuthorization,
  getConnection,
  startAuthorization,
  useOAuthWorld,
} from './helpers.ts';

const world = useOAuthWorld();
const html = { accept: 'text/html,application/xhtml+xml' };

async function credentialCount(connectionId: string): Promise<number> {
  const { rows } = await world.app.db.query(
    'SELECT count(*)::int AS n FROM mcp_connection_credentials WHERE connection_id = $1',
    [connectionId],
  );
  return rows[0].n;
}

test('authorize sets the binding cookie: HttpOnly, SameSite=Lax, scoped to the connection paths, ten minutes, not Secure on http', async () => {
  const s = await world.server();
  const connection = await createOAuthConnection(world, s.url);
  const authorize = await startAuthorization(world, world.tenant.member, connection.id);
  assert.equal(authorize.status, 200, authorize.text);
  const cookie = authorize.headers.get('set-cookie')!;
  assert.match(cookie, /^orgplane_mcp_oauth=[A-Za-z0-9_-]{43}; /);
  const attributes = cookie.split('; ').slice(1);
  assert.deepEqual(attributes.sort(), ['HttpOnly', 'Max-Age=600', 'Path=/v1/mcp-connections/', 'SameSite=Lax']);
  // Only a hash is stored with the pending authorization.
  const nonce = cookie.split(';')[0]!.split('=')[1]!;
  const { rows } = await world.app.db.query(
    'SELECT browser_binding_hash FROM mcp_oauth_pending_authorizations WHERE connection_id = $1',
    [connection.id],
  );
  assert.equal(rows.length, 1);
  assert.notEqual(rows[0].browser_binding_hash, nonce);
  assert.match(rows[0].browser_binding_hash, /^[0-9a-f]{64}$/);
});

test("behind https, the cookie is Secure and its path follows PUBLIC_URL's", () => {
  const cookie = bindingCookie('https://example.com/orgplane', 'n'.repeat(43), 600);
  assert.match(cookie, /; Secure$/);
  assert.match(cookie, /; Path=\/orgplane\/v1\/mcp-connections\/;/);
  // A malformed or foreign cookie value is no nonce.
  assert.equal(bindingNonceOf('orgplane_mcp_oauth=short'), null);
  assert.equal(bindingNonceOf(`other=${'n'.repeat(43)}`), null);
  assert.equal(bindingNonceOf(`a=b; orgplane_mcp_oauth=${'n'.repeat(43)}`), 'n'.repeat(43));
});

test('another browser (no cookie, or another one) completing a shared authorization URL: 403 browser_mismatch, a page, nothing stored; the starter then completes it', async () => {
  const s = await world.server();
  const connection = await createOAuthConnection(world, s.url);
  const { member } = world.tenant;
  const authorize = await startAuthorization(world, member, connection.id);
  const redirect = await followAuthorization(authorize.body.authorizationUrl);
  const callback = `${redirect.pathname}${redirect.search}`;

  const noCookie = await api(world.app.url).get(callback);
  assert.equal(noCookie.status, 403, noCookie.text);
  assert.equal(noCookie.body.error, 'browser_mismatch');
  // Someone else's browser, which started an authorization of its own and so carries a cookie of its own.
  const otherStart = await startAuthorization(world, world.tenant.admin, connection.id);
  const otherBrowser = await api(world.app.url).get(callback, { headers: browserOf(otherStart, html) });
  assert.equal(otherBrowser.status, 403);
  assert.match(otherBrowser.headers.get('content-type')!, /^text\/html/);
  assert.match(otherBrowser.text, /started in another browser/);
  assert.match(otherBrowser.text, /<code id="code">browser_mismatch<\/code>/);
  // A forged cookie value.
  const forged = await api(world.app.url).get(callback, {
    headers: { cookie: `orgplane_mcp_oauth=${'A'.repeat(43)}` },
  });
  assert.equal(forged.status, 403);
  assert.equal(await credentialCount(connection.id), 0);
  assert.equal(
    s.stats.tokenRequests.filter((r) => r.grantType === 'authorization_code').length,
    0,
    'the code never reached the token endpoint',
  );

  const own = await api(world.app.url).get(callback, { headers: browserOf(authorize) });
  assert.equal(own.status, 200, own.text);
  assert.equal((await getConnection(world, member, connection.id)).connectedForMe, true);
});

test('two authorizations in progress in one browser share its nonce, and both complete there', async () => {
  const s = await world.server();
  const first = await createOAuthConnection(world, s.url);
  const second = await createOAuthConnection(world, s.url, { name: 'Second' });
  const { member } = world.tenant;
  const one = await startAuthorization(world, member, first.id);
  const cookie = browserOf(one);
  const two = await api(world.app.url, member.token).post(
    `/v1/mcp-connections/${second.id}/oauth/authorize`,
    undefined,
    { headers: cookie },
  );
  assert.equal(two.status, 200, two.text);
  assert.equal(browserOf(two).cookie, cookie.cookie, 'the carried nonce is kept');
  for (const started of [two, one]) {
    const redirect = await followAuthorization(started.body.authorizationUrl);
    const back = await api(world.app.url).get(`${redirect.pathname}${redirect.search}`, { headers: cookie });
    assert.equal(back.status, 200, back.text);
  }
});

test('the state is checked before the browser: a forged state is 400 invalid_state whatever cookie comes with it', async () => {
  const s = await world.server();
  const connection = await createOAuthConnection(world, s.url);
  const authorize = await startAuthorization(world, world.tenant.member, connection.id);
  const forged = await api(world.app.url).get(
    `/v1/mcp-connections/${connection.id}/oauth/callback?code=c&state=abc.def`,
    { headers: browserOf(authorize) },
  );
  assert.equal(forged.status, 400);
  assert.equal(forged.body.error, 'invalid_state');
});
