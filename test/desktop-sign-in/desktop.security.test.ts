// The desktop sign-in's security: only a signed-in person, recently authenticated, gets a code (not
// anonymous, not a revoked or tampered session, not an API key, not a stale session: 403 reauth); a
// code speaks for the person who got it and no one else; a code is never stored, only its hash; the
// app's session is no fresher than the browser's that got the code, so a chain of codes cannot keep
// an authentication fresh; and a code goes only where the desktop app waits, never to a page of
// orgplane's own that would hand it on (the attacker: another organization's admin with an identity
// provider of her own, test/sso/attacker-support.ts).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { hashToken } from '../../src/platform/tokens.ts';
import { ageSession, reauthBody } from '../identity/reauth-support.ts';
import { startAttacker, type Attacker } from '../sso/attacker-support.ts';
import { startDnsServer } from '../support/dns-server.ts';
import { createOrganization, signUp } from '../support/fixtures.ts';
import { useTenantApp } from '../support/harness.ts';
import { followRedirects } from '../support/oidc-idp.ts';
import { authorizeBody, codeOf, loopbackRedirect, pkcePair } from './support.ts';

// The attacker's domain is verified through this DNS server, and her identity provider is on loopback.
const dns = await startDnsServer();
const t = useTenantApp({ config: { dnsServers: [dns.address], allowedPrivateNetworks: ['127.0.0.1/32'] } });
let attacker: Attacker;
before(async () => {
  await t.ready;
  attacker = await startAttacker(t.app, dns, t.tenant);
});
after(async () => {
  await attacker?.close();
  await dns.close();
});

test('anonymous, a tampered or a signed-out session, an API key: 401; nothing is made', async () => {
  const body = authorizeBody(pkcePair().challenge);
  assert.equal((await t.as().post('/v1/auth/desktop/authorize', body)).status, 401);
  const token = t.tenant.member.token;
  assert.equal(
    (await t.as(token.slice(0, -1) + (token.endsWith('A') ? 'B' : 'A')).post('/v1/auth/desktop/authorize', body))
      .status,
    401,
  );
  const leaving = await signUp(t.app.url, 'desktop-leaving');
  await t.as(leaving.token).post('/v1/auth/sign-out');
  assert.equal((await t.as(leaving.token).post('/v1/auth/desktop/authorize', body)).status, 401);

  const key = await t
    .as(t.tenant.owner.token)
    .post(`/v1/orgs/${t.tenant.orgId}/api-keys`, { name: 'ci', role: 'admin' });
  assert.equal(key.status, 201, key.text);
  const byKey = await fetch(`${t.app.url}/v1/auth/desktop/authorize`, {
    method: 'POST',
    headers: { 'x-api-key': key.body.key, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  assert.equal(byKey.status, 401, 'an API key is not a session: the route does not take one');
  const { rows } = await t.app.db.query('SELECT count(*)::int AS n FROM desktop_sign_in_codes');
  assert.equal(rows[0].n, 0);
});

test('a session whose person authenticated long ago gets 403 reauth: the console asks them again before handing out a session', async () => {
  const stale = await signUp(t.app.url, 'desktop-stale');
  await ageSession(t.app, stale.token);
  const refused = await t.as(stale.token).post('/v1/auth/desktop/authorize', authorizeBody(pkcePair().challenge));
  assert.equal(refused.status, 403);
  assert.deepEqual({ error: refused.body.error, reason: refused.body.reason }, reauthBody);
});

test('a code gives the session of the person who got it, in their organization, and only the hash is stored', async () => {
  const { otherAdmin, otherOrgId } = t.tenant;
  const pkce = pkcePair();
  const authorized = await t.as(otherAdmin.token).post('/v1/auth/desktop/authorize', authorizeBody(pkce.challenge));
  const code = codeOf(authorized.body.redirectTo);
  const { rows } = await t.app.db.query('SELECT code_hash FROM desktop_sign_in_codes');
  assert.deepEqual(
    rows.map((row: { code_hash: string }) => row.code_hash),
    [hashToken(code)],
    'the code itself is not stored',
  );
  const exchanged = await t
    .as(t.tenant.member.token)
    .post('/v1/auth/desktop/token', { code, codeVerifier: pkce.verifier, redirectUri: loopbackRedirect });
  assert.equal(exchanged.status, 200, exchanged.text);
  assert.equal(exchanged.body.user.id, otherAdmin.userId, 'whoever calls, the code speaks for its own person');
  assert.equal(exchanged.body.organizationId, otherOrgId);
  const org = await t.as(exchanged.body.sessionToken).get('/v1/org');
  assert.equal(org.body.organization.id, otherOrgId, 'and sees only that organization');
});

/** The browser session of a new organization's owner, its code redeemed: the app's session token. */
async function desktopSessionOf(browserToken: string): Promise<string> {
  const pkce = pkcePair();
  const authorized = await t.as(browserToken).post('/v1/auth/desktop/authorize', authorizeBody(pkce.challenge));
  assert.equal(authorized.status, 200, authorized.text);
  const exchanged = await t.as().post('/v1/auth/desktop/token', {
    code: codeOf(authorized.body.redirectTo),
    codeVerifier: pkce.verifier,
    redirectUri: loopbackRedirect,
  });
  assert.equal(exchanged.status, 200, exchanged.text);
  return exchanged.body.sessionToken;
}

test("the app's session is as old as the browser's authentication: a browser session about to go stale cannot mint a fresh one (an API key: 403 reauth)", async () => {
  const person = await signUp(t.app.url, 'desktop-aging');
  const orgId = await createOrganization(t.app.url, person, 'Aging');
  // The person signed in 870 s ago: the browser session is still fresh (REAUTH_MAX_AGE_SECONDS is 900),
  // for half a minute more, and gets a code.
  await ageSession(t.app, person.token, 870);
  const desktop = await desktopSessionOf(person.token);

  // A minute later: every session of the person is a minute older.
  await t.app.db.query(
    `UPDATE sessions SET authenticated_at = authenticated_at - interval '60 seconds' WHERE user_id = $1`,
    [person.userId],
  );
  const byBrowser = await t
    .as(person.token)
    .post(`/v1/orgs/${orgId}/api-keys`, { name: 'from the browser', role: 'member' });
  assert.equal(byBrowser.status, 403, byBrowser.text);
  const byDesktop = await t.as(desktop).post(`/v1/orgs/${orgId}/api-keys`, { name: 'from the app', role: 'member' });
  assert.equal(
    byDesktop.status,
    403,
    `the app's session is as stale as the browser's: ${byDesktop.status} ${byDesktop.text}`,
  );
  assert.deepEqual({ error: byDesktop.body.error, reason: byDesktop.body.reason }, reauthBody);
  const { rows } = await t.app.db.query('SELECT count(*)::int AS n FROM api_keys WHERE organization_id = $1', [orgId]);
  assert.equal(rows[0].n, 0, 'no key was made');
  const [browserMe, desktopMe] = await Promise.all([t.as(person.token).get('/v1/me'), t.as(desktop).get('/v1/me')]);
  assert.equal(
    desktopMe.body.session.authenticatedAt,
    browserMe.body.session.authenticatedAt,
    "the app's session says when the person last authenticated",
  );
});

test("a chain of codes (the app's session authorizing another app) keeps the first authentication time; re-authenticating is the only way to refresh it", async () => {
  const person = await signUp(t.app.url, 'desktop-chain');
  await createOrganization(t.app.url, person, 'Chain');
  await ageSession(t.app, person.token, 600);
  const first = await desktopSessionOf(person.token);
  const second = await desktopSessionOf(first);
  const times = await Promise.all(
    [person.token, first, second].map(async (token) => (await t.as(token).get('/v1/me')).body.session.authenticatedAt),
  );
  assert.equal(new Set(times).size, 1, `one authentication time along the chain: ${times.join(', ')}`);
  assert.ok(Date.now() - Date.parse(times[0]) >= 600_000, 'the one the person signed in with');
});

test('cancel needs no session (the person may cancel whether signed in or not), hands out nothing, and never answers another site', async () => {
  const body = { redirectUri: loopbackRedirect, state: 's' };
  const token = t.tenant.member.token;
  for (const caller of [undefined, token, token.slice(0, -1) + (token.endsWith('A') ? 'B' : 'A')]) {
    const answer = await t.as(caller).post('/v1/auth/desktop/cancel', body);
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.body.redirectTo, `${loopbackRedirect}?error=access_denied&state=s`);
  }
  // A link naming the attacker's site as the app: nothing to send the browser to.
  const open = await t
    .as()
    .post('/v1/auth/desktop/cancel', { redirectUri: 'https://attacker.example/phish', state: 's' });
  assert.deepEqual([open.status, open.body.error, open.body.redirectTo], [400, 'invalid_request', undefined]);
});

test("a desktop link whose redirect URI is orgplane's own SSO callback cannot hand another organization's admin the session of the person who confirms", async () => {
  const { owner } = t.tenant;
  // A sign-in in progress of her own domain, whose callback exchanges codes at her identity provider.
  const redirectUri = await attacker.ownCallback();
  const pkce = pkcePair();
  // The console's /desktop/sign-in page as her link opens it (no state of its own, so hers stays in
  // the redirect URI): the owner confirms, and the browser goes where authorize says.
  const authorized = await t
    .as(owner.token)
    .post('/v1/auth/desktop/authorize', authorizeBody(pkce.challenge, { redirectUri, state: undefined }));
  let session: { userId: string } | undefined;
  if (authorized.status === 200) {
    const seen = attacker.idp.receivedCodes.length;
    await followRedirects(authorized.body.redirectTo, 'about:nowhere');
    for (const code of attacker.idp.receivedCodes.slice(seen)) {
      const exchanged = await t.as().post('/v1/auth/desktop/token', { code, codeVerifier: pkce.verifier, redirectUri });
      if (exchanged.status === 200) session = { userId: exchanged.body.user.id };
    }
  }
  assert.equal(session, undefined, "the attacker got the owner's session");
  assert.equal(authorized.status, 400, authorized.text);
  assert.deepEqual(
    authorized.body.details.map((detail: { path: string[] }) => detail.path),
    [['redirectUri']],
  );
});
