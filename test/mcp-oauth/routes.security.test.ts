// MCP OAuth routes, security: who may start an authorization or disconnect, other
// organizations, malformed and tampered ids and states, and secrets that must never leave.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { api } from '../support/http.ts';
import { startTestApp } from '../support/app.ts';
import { createTenant } from '../support/fixtures.ts';
import { deriveStateKey, signState, verifyState } from '../../src/modules/mcp-connections/oauth/state.ts';
import {
  browserOf,
  connectThroughOAuth,
  createOAuthConnection,
  followAuthorization,
  startAuthorization,
  useOAuthWorld,
} from './helpers.ts';
import type { OAuthMcpServer } from '../support/oauth-mcp-server/index.ts';

const world = useOAuthWorld();
let s: OAuthMcpServer;
before(async () => {
  s = await world.server();
});

test('authorize: anonymous and garbage tokens are 401; a malformed id is 400; an unknown id is 404', async () => {
  const connection = await createOAuthConnection(world, s.url);
  const anonymous = await api(world.app.url).post(`/v1/mcp-connections/${connection.id}/oauth/authorize`);
  assert.equal(anonymous.status, 401);
  assert.equal(anonymous.body.error, 'unauthorized');
  const garbage = await api(world.app.url, 'ops_not-a-session').post(
    `/v1/mcp-connections/${connection.id}/oauth/authorize`,
  );
  assert.equal(garbage.status, 401);
  const malformed = await api(world.app.url, world.tenant.member.token).post(
    '/v1/mcp-connections/emc_nope/oauth/authorize',
  );
  assert.equal(malformed.status, 400);
  assert.equal(malformed.body.error, 'invalid_request');
  const unknown = await api(world.app.url, world.tenant.member.token).post(
    '/v1/mcp-connections/emc_01jqz3v6b8e9f0g1h2j3k4m5n6/oauth/authorize',
  );
  assert.equal(unknown.status, 404);
  assert.equal(unknown.body.error, 'connection_not_found');
});

test("another organization's admin and an outsider cannot authorize or disconnect: 404 / 403, no hint", async () => {
  const connection = await createOAuthConnection(world, s.url);
  const other = await startAuthorization(world, world.tenant.otherAdmin, connection.id);
  assert.equal(other.status, 404);
  assert.equal(other.body.error, 'connection_not_found');
  const outsider = await startAuthorization(world, world.tenant.outsider, connection.id);
  assert.equal(outsider.status, 403);
  const otherDelete = await api(world.app.url, world.tenant.otherAdmin.token).delete(
    `/v1/mcp-connections/${connection.id}/credentials`,
  );
  assert.equal(otherDelete.status, 404);
  assert.equal((await api(world.app.url).delete(`/v1/mcp-connections/${connection.id}/credentials`)).status, 401);
  assert.equal(s.stats.authorizations.length, 0);
});

test('a member without access to a per_member connection does not see it (404); a member cannot connect a shared identity (403)', async () => {
  const restricted = await createOAuthConnection(world, s.url, {
    access: { orgWide: false, memberIds: [world.tenant.admin.memberId] },
  });
  const hidden = await startAuthorization(world, world.tenant.member, restricted.id);
  assert.equal(hidden.status, 404);
  const shared = await createOAuthConnection(world, s.url, { credentialMode: 'shared' });
  const refused = await startAuthorization(world, world.tenant.member, shared.id);
  assert.equal(refused.status, 403);
  assert.equal(refused.body.error, 'forbidden');
  const allowed = await startAuthorization(world, world.tenant.owner, shared.id);
  assert.equal(allowed.status, 200);
});

test('callback: missing, forged and tampered states are 400 and reach no token endpoint', async () => {
  const connection = await createOAuthConnection(world, s.url);
  const before = s.stats.tokenRequests.length;
  const base = `/v1/mcp-connections/${connection.id}/oauth/callback`;
  const none = await api(world.app.url).get(`${base}?code=abc`);
  assert.equal(none.status, 400);
  // Signed with another key (another deployment, or a guess).
  const forged = signState(
    {
      v: 1,
      id: 'moa_x',
      org: world.tenant.orgId,
      cid: connection.id,
      idf: 'x',
      mid: world.tenant.member.memberId,
      sub: 'member',
      mode: 'isolated-v1',
      exp: Math.floor(Date.now() / 1000) + 600,
    },
    deriveStateKey('not the server secret'),
  );
  const forgedResponse = await api(world.app.url).get(`${base}?code=abc&state=${encodeURIComponent(forged)}`);
  assert.equal(forgedResponse.status, 400);
  assert.equal(forgedResponse.body.error, 'invalid_state');

  // A real state whose payload is altered to name the admin instead of the member.
  const authorize = await startAuthorization(world, world.tenant.member, connection.id);
  const redirect = await followAuthorization(authorize.body.authorizationUrl);
  const state = redirect.searchParams.get('state')!;
  const decoded = verifyState(state, deriveStateKey(world.app.config.secretKey!));
  assert.ok(decoded.ok);
  const [, sig] = state.split('.');
  const altered = Buffer.from(
    JSON.stringify({ ...(decoded.ok && decoded.payload), mid: world.tenant.admin.memberId }),
  ).toString('base64url');
  const tampered = await api(world.app.url).get(
    `${base}?code=${redirect.searchParams.get('code')}&state=${altered}.${sig}`,
  );
  assert.equal(tampered.status, 400);
  assert.equal(tampered.body.error, 'invalid_state');
  assert.equal(s.stats.tokenRequests.length, before);
  // Oversized and odd query values are a clear 400, never a 500.
  const huge = await api(world.app.url).get(`${base}?state=${'a'.repeat(5000)}`);
  assert.equal(huge.status, 400);
  const malformedPath = await api(world.app.url).get(`/v1/mcp-connections/not-an-id/oauth/callback?state=x`);
  assert.equal(malformedPath.status, 400);
});

test('a member removed from the connection between authorize and callback gets nothing stored', async () => {
  const connection = await createOAuthConnection(world, s.url, {
    access: { orgWide: false, memberIds: [world.tenant.member.memberId] },
  });
  const authorize = await startAuthorization(world, world.tenant.member, connection.id);
  assert.equal(authorize.status, 200);
  const redirect = await followAuthorization(authorize.body.authorizationUrl);
  const replaced = await api(world.app.url, world.tenant.admin.token).put(
    `/v1/mcp-connections/${connection.id}/access`,
    { access: { orgWide: false, memberIds: [] } },
  );
  assert.equal(replaced.status, 200, replaced.text);
  const callback = await api(world.app.url).get(`${redirect.pathname}${redirect.search}`, {
    headers: browserOf(authorize),
  });
  assert.equal(callback.status, 403);
  const { rows } = await world.app.db.query(
    'SELECT count(*)::int AS n FROM mcp_connection_credentials WHERE connection_id = $1',
    [connection.id],
  );
  assert.equal(rows[0].n, 0);
});

test('tokens and secrets never appear in responses or logs; stored tokens are encrypted', async () => {
  const connection = await createOAuthConnection(world, s.url);
  const { callback, redirect } = await connectThroughOAuth(world, world.tenant.member, connection.id);
  assert.equal(callback.status, 200);
  const issued = s.stats.tokenRequests.at(-1)!;
  assert.equal(issued.outcome, 'issued');
  const { rows } = await world.app.db.query(
    'SELECT secret_sealed FROM mcp_connection_credentials WHERE connection_id = $1',
    [connection.id],
  );
  const sealed: string = rows[0].secret_sealed;
  assert.match(sealed, /^v\d+:/);
  const token = await world.app.app.mcpOAuth.accessToken(
    world.tenant.orgId,
    connection.id,
    world.tenant.member.memberId,
  );
  assert.equal(token.status, 'ok');
  const accessToken = (token as { accessToken: string }).accessToken;
  assert.ok(!sealed.includes(accessToken));
  assert.ok(!callback.text.includes(accessToken));
  const listed = await api(world.app.url, world.tenant.member.token).get('/v1/mcp-connections');
  assert.ok(!listed.text.includes(accessToken));
  const logs = world.app.logText();
  assert.ok(!logs.includes(accessToken), 'access token in logs');
  assert.ok(!logs.includes(redirect.searchParams.get('code')!), 'authorization code in logs');
  // The DCR client secret is stored sealed too.
  const clients = await world.app.db.query(
    'SELECT client_secret_sealed FROM mcp_oauth_registered_clients WHERE connection_id = $1',
    [connection.id],
  );
  const registered = s.stats.registrations.find((r) => clients.rows.length > 0 && r.client_secret)!;
  assert.ok(
    registered.client_secret && !String(clients.rows[0].client_secret_sealed).includes(registered.client_secret),
  );
  // The PKCE verifier of a pending authorization is sealed.
  const pending = await startAuthorization(world, world.tenant.member, connection.id);
  assert.equal(pending.status, 200);
  const verifiers = await world.app.db.query(
    'SELECT code_verifier_sealed FROM mcp_oauth_pending_authorizations WHERE connection_id = $1',
    [connection.id],
  );
  assert.match(verifiers.rows[0].code_verifier_sealed, /^v\d+:/);
});

test('the client metadata document is public and names only public values', async () => {
  const doc = await api(world.app.url).get('/oauth/client-metadata.json');
  assert.equal(doc.status, 200);
  assert.equal(doc.body.token_endpoint_auth_method, 'none');
  assert.ok(!('client_secret' in doc.body));
});

test('starting authorizations is rate limited per member (429 rate_limited with Retry-After); others are unaffected', async () => {
  const connection = await createOAuthConnection(world, s.url);
  let limited: Awaited<ReturnType<typeof startAuthorization>> | undefined;
  // The window is fixed (counted in the database): if a window boundary passes during the loop
  // the count starts again, so allow two windows' worth before calling it a failure.
  for (let attempt = 0; attempt < 61 && !limited; attempt += 1) {
    const response = await startAuthorization(world, world.tenant.admin, connection.id);
    if (response.status === 429) limited = response;
    else assert.equal(response.status, 200, response.text);
  }
  assert.ok(limited, 'more than 30 authorizations within a minute are refused');
  assert.equal(limited.body.error, 'rate_limited');
  assert.ok(Number(limited.headers.get('retry-after')) > 0);
  assert.equal((await startAuthorization(world, world.tenant.member, connection.id)).status, 200);
});

test('discovery goes through the guarded client: without a loopback allowance the server is not dialed (SSRF)', async () => {
  const strictApp = await startTestApp({ allowedPrivateNetworks: [] });
  try {
    const tenant = await createTenant(strictApp.url);
    const created = await api(strictApp.url, tenant.admin.token).post('/v1/mcp-connections', {
      name: 'Internal',
      url: s.url,
      authType: 'oauth',
      credentialMode: 'per_member',
      access: { orgWide: true },
    });
    assert.equal(created.status, 201, created.text);
    const before = s.stats.mcpRequests + s.stats.metadataFetches.length;
    const response = await api(strictApp.url, tenant.member.token).post(
      `/v1/mcp-connections/${created.body.id}/oauth/authorize`,
    );
    assert.equal(response.status, 502, response.text);
    assert.equal(response.body.error, 'oauth_discovery_failed');
    assert.equal(response.body.diagnostic.code, 'address_blocked');
    assert.equal(response.body.diagnostic.actionOwner, 'network_admin');
    assert.equal(response.body.diagnostic.highestPassed, 'configured');
    assert.equal(s.stats.mcpRequests + s.stats.metadataFetches.length, before, 'nothing reached the server');
  } finally {
    await strictApp.close();
  }
});
