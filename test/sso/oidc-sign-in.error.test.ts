import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { api } from '../support/http.ts';
import { followRedirects } from '../support/oidc-idp.ts';
import {
  accountOf,
  appRedirectUri,
  browserFetch,
  pkcePair,
  signInAtIdp,
  startInBrowser,
  startOidcWorld,
  type OidcWorld,
} from './oidc-support.ts';

describe('OIDC sign-in: refusals and bad input', () => {
  let world: OidcWorld;
  before(async () => {
    world = await startOidcWorld();
  });
  after(async () => {
    await world?.close();
  });

  const start = (body: Record<string, unknown>) =>
    api(world.app.url).post('/v1/auth/sso/start', {
      email: world.tenant.member.email,
      redirectUri: appRedirectUri,
      codeChallenge: pkcePair().challenge,
      codeChallengeMethod: 'S256',
      ...body,
    });

  it('SSO cannot be required before a sign-in has succeeded on the connection (409 sso_not_ready)', async () => {
    const current = (await api(world.app.url, world.tenant.owner.token).get('/v1/sso/connection')).body.connection;
    assert.equal(current.ssoReady, false);
    const put = await api(world.app.url, world.tenant.owner.token).put('/v1/sso/connection', {
      domain: current.domain,
      issuer: current.issuer,
      clientId: current.clientId,
      ssoRequired: true,
    });
    assert.equal(put.status, 409, put.text);
    assert.equal(put.body.error, 'sso_not_ready');
  });

  it('start: a domain without a verified SSO connection is 404 sso_not_configured', async () => {
    const response = await start({ email: 'someone@elsewhere.example' });
    assert.equal(response.status, 404);
    assert.equal(response.body.error, 'sso_not_configured');
  });

  it('start: redirect URIs outside the allowed ones, and bad PKCE parameters, are 400 with details', async () => {
    const base = world.app.config.publicUrl;
    const port = new URL(base).port;
    for (const redirectUri of [
      'https://evil.example/cb',
      'http://127.0.0.1.evil.example/cb',
      'javascript:alert(1)',
      'http://127.0.0.1:9/cb#frag',
      'not a uri',
      // Orgplane's own URLs, but the console's two pages exactly: its OIDC callback above all, on any loopback name.
      `${base}/v1/auth/sso/oidc/callback?state=x`,
      `${base}/desktop/done`,
      `${base}/sso/callback?next=/`,
      `http://localhost:${port}/sso-done`,
      `http://[::1]:${port}/cb`,
    ]) {
      const response = await start({ redirectUri });
      assert.equal(response.status, 400, redirectUri);
      assert.deepEqual(response.body.details[0].path, ['redirectUri']);
    }
    for (const redirectUri of [
      'http://[::1]:5555/cb',
      'orgplane://sso/done',
      `${base}/sso/callback`,
      `${base}/sso/test-done`,
    ]) {
      assert.equal((await start({ redirectUri })).status, 200, redirectUri);
    }
    assert.equal((await start({ codeChallengeMethod: 'plain' })).status, 400);
    assert.equal((await start({ codeChallenge: 'short' })).status, 400);
    assert.equal((await start({ email: 'not-an-email' })).status, 400);
  });

  it('callback: no state, or a state already used, is a readable page (400), not JSON', async () => {
    const none = await fetch(`${world.app.url}/v1/auth/sso/oidc/callback?code=x`);
    assert.equal(none.status, 400);
    assert.match(none.headers.get('content-type') ?? '', /text\/html/);
    assert.match(await none.text(), /expired or was already used/);
    const browser = await startInBrowser(world, world.tenant.member.email);
    world.idp.signInAs(accountOf(world.tenant.member));
    const reached = await followRedirects(
      browser.idpUrl,
      `${world.app.config.publicUrl}/v1/auth/sso/oidc/callback`,
      browser.jar,
    );
    const first = await browserFetch(browser.jar, reached.location!);
    assert.equal(first.status, 303);
    const replay = await browserFetch(browser.jar, reached.location!);
    assert.equal(replay.status, 400);
    assert.match(replay.headers.get('content-type') ?? '', /text\/html/);
  });

  it('the link: no request, an unknown one, or one whose sign-in expired or was used, is a readable page (400) that sets no cookie', async () => {
    const link = `${world.app.url}/v1/auth/sso/authorize`;
    const expired = await start({});
    await world.app.db.query(`UPDATE sso_sign_in_requests SET expires_at = now() - interval '1 second'`);
    const used = await startInBrowser(world, world.tenant.member.email);
    world.idp.signInAs(accountOf(world.tenant.member));
    assert.ok((await followRedirects(used.idpUrl, appRedirectUri, used.jar)).location, 'the sign-in completed');
    for (const url of [
      link,
      `${link}?request=`,
      `${link}?request=${'x'.repeat(43)}`,
      `${link}?request=${'x'.repeat(600)}`,
      `${link}?request=a&request=b`,
      expired.body.authorizationUrl,
      used.authorizationUrl,
    ]) {
      const response = await browserFetch(used.jar, url);
      assert.equal(response.status, 400, url);
      assert.match(response.headers.get('content-type') ?? '', /text\/html/, url);
      assert.match(await response.text(), /expired or was already used/, url);
      assert.equal(response.headers.get('set-cookie'), null, url);
    }
  });

  it("an e-mail the IdP did not verify, or one outside the verified domain, is refused with a page and recorded as the connection's last error", async () => {
    const unverified = await signInAtIdp(world, world.tenant.member.email, {
      ...accountOf(world.tenant.member),
      email_verified: false,
    });
    assert.equal(unverified.status, 403);
    assert.match(unverified.text, /did not confirm your e-mail address/);
    let connection = (await api(world.app.url, world.tenant.owner.token).get('/v1/sso/connection')).body.connection;
    assert.equal(connection.lastError.category, 'email_not_verified');
    const outside = await signInAtIdp(world, world.tenant.member.email, {
      sub: 'outsider-sub',
      email: 'someone@other.example',
      email_verified: true,
    });
    assert.equal(outside.status, 403);
    connection = (await api(world.app.url, world.tenant.owner.token).get('/v1/sso/connection')).body.connection;
    assert.equal(connection.lastError.category, 'email_outside_domain');
  });

  it('an unknown person is refused while just-in-time provisioning is off, and no account is created', async () => {
    const email = 'unknown.person@example.test';
    const flow = await signInAtIdp(world, email, { sub: 'unknown-sub', email, email_verified: true });
    assert.equal(flow.status, 403);
    assert.match(flow.text, /not a member/);
    const { rows } = await world.app.db.query('SELECT 1 FROM users WHERE email = $1', [email]);
    assert.equal(rows.length, 0);
  });

  it('a suspended member is refused', async () => {
    const { admin, orgId } = world.tenant;
    await world.app.db.query(`UPDATE members SET status = 'suspended' WHERE organization_id = $1 AND id = $2`, [
      orgId,
      admin.memberId,
    ]);
    try {
      const flow = await signInAtIdp(world, admin.email, accountOf(admin));
      assert.equal(flow.status, 403);
      assert.match(flow.text, /suspended/);
    } finally {
      await world.app.db.query(`UPDATE members SET status = 'active' WHERE organization_id = $1 AND id = $2`, [
        orgId,
        admin.memberId,
      ]);
    }
  });

  it('token: a code is single use, bound to its verifier (a wrong one spends it), and invalid bodies are 400', async () => {
    const flow = await signInAtIdp(world, world.tenant.member.email, accountOf(world.tenant.member));
    const wrong = await api(world.app.url).post('/v1/auth/sso/token', {
      code: flow.code,
      codeVerifier: pkcePair().verifier,
    });
    assert.equal(wrong.status, 400);
    assert.equal(wrong.body.error, 'invalid_grant');
    const after = await api(world.app.url).post('/v1/auth/sso/token', { code: flow.code, codeVerifier: flow.verifier });
    assert.equal(after.status, 400, 'the wrong verifier spent the code');
    const again = await signInAtIdp(world, world.tenant.member.email, accountOf(world.tenant.member));
    assert.equal(
      (await api(world.app.url).post('/v1/auth/sso/token', { code: again.code, codeVerifier: again.verifier })).status,
      200,
    );
    assert.equal(
      (await api(world.app.url).post('/v1/auth/sso/token', { code: again.code, codeVerifier: again.verifier })).status,
      400,
    );
    for (const body of [
      {},
      { code: 'x' },
      { code: 'x', codeVerifier: 'short' },
      { code: 'x', codeVerifier: 'c'.repeat(43), extra: 1 },
    ]) {
      assert.equal((await api(world.app.url).post('/v1/auth/sso/token', body)).status, 400, JSON.stringify(body));
    }
  });

  it("a step-up code refreshes only the same person's session: another person's bearer or none is 401", async () => {
    const { member, admin } = world.tenant;
    const flow = await signInAtIdp(world, member.email, accountOf(member), { reauthenticate: true });
    const asOther = await api(world.app.url, admin.token).post('/v1/auth/sso/token', {
      code: flow.code,
      codeVerifier: flow.verifier,
    });
    assert.equal(asOther.status, 401);
    const flow2 = await signInAtIdp(world, member.email, accountOf(member), { reauthenticate: true });
    const anonymous = await api(world.app.url).post('/v1/auth/sso/token', {
      code: flow2.code,
      codeVerifier: flow2.verifier,
    });
    assert.equal(anonymous.status, 401);
  });
});
