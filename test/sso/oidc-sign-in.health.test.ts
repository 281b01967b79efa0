// The SSO connection's health for OIDC, against oidc-provider on loopback:
// GET /v1/sso/connection shows lastSignInAt and lastError {category, message, occurredAt}, never a
// token, code or state; an IdP that refuses the code, and one that cannot be reached, each leave their category.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { api } from '../support/http.ts';
import { followRedirects } from '../support/oidc-idp.ts';
import {
  accountOf,
  browserFetch,
  signInAtIdp,
  startInBrowser,
  startOidcWorld,
  type OidcWorld,
} from './oidc-support.ts';

describe("OIDC sign-in: the connection's health", () => {
  let world: OidcWorld;
  before(async () => {
    world = await startOidcWorld();
  });
  after(async () => {
    await world?.close();
  });

  const connection = async () => {
    const response = await api(world.app.url, world.tenant.owner.token).get('/v1/sso/connection');
    assert.equal(response.status, 200, response.text);
    return response.body.connection;
  };
  const callbackUrl = () => `${world.app.config.publicUrl}/v1/auth/sso/oidc/callback`;
  /**
   * Starts a sign-in in a browser and lets the IdP log the member in; the callback URL the IdP sends that
   * browser to (with its code and state), not followed, and the browser.
   */
  async function reachCallback() {
    const browser = await startInBrowser(world, world.tenant.member.email);
    world.idp.signInAs(accountOf(world.tenant.member));
    const reached = await followRedirects(browser.idpUrl, callbackUrl(), browser.jar);
    assert.ok(reached.location, reached.text);
    return { callback: new URL(reached.location), jar: browser.jar };
  }

  it('a new connection has neither; a success sets lastSignInAt; a refusal sets lastError with its time and keeps lastSignInAt', async () => {
    const fresh = await connection();
    assert.equal(fresh.lastSignInAt, null);
    assert.equal(fresh.lastError, null);
    const flow = await signInAtIdp(world, world.tenant.member.email, accountOf(world.tenant.member));
    assert.ok(flow.code);
    const signedIn = await connection();
    assert.ok(Date.parse(signedIn.lastSignInAt) > 0);
    assert.equal(signedIn.lastError, null);
    const before = Date.now();
    assert.equal(
      (
        await signInAtIdp(world, world.tenant.member.email, {
          ...accountOf(world.tenant.member),
          email_verified: false,
        })
      ).status,
      403,
    );
    const refused = await connection();
    assert.equal(refused.lastSignInAt, signedIn.lastSignInAt);
    assert.equal(refused.lastError.category, 'email_not_verified');
    assert.match(refused.lastError.message, /verified/);
    assert.ok(Date.parse(refused.lastError.occurredAt) >= before - 5_000);
    assert.equal(refused.lastError.at, refused.lastError.occurredAt);
    assert.deepEqual(Object.keys(refused.lastError).sort(), ['at', 'category', 'message', 'occurredAt']);
  });

  it('an IdP that refuses the code (a wrong client secret) is token_rejected, and neither the code nor the state is in the error', async () => {
    const { owner } = world.tenant;
    const current = await connection();
    const put = (clientSecret: string) =>
      api(world.app.url, owner.token).put('/v1/sso/connection', {
        domain: current.domain,
        issuer: current.issuer,
        clientId: current.clientId,
        clientSecret,
      });
    assert.equal((await put('not-the-client-secret')).status, 200);
    try {
      const { callback, jar } = await reachCallback();
      const page = await browserFetch(jar, callback);
      assert.equal(page.status, 403);
      const { lastError } = await connection();
      assert.equal(lastError.category, 'token_rejected');
      const shown = JSON.stringify(lastError);
      for (const secret of [
        callback.searchParams.get('code')!,
        callback.searchParams.get('state')!,
        'not-the-client-secret',
      ])
        assert.ok(!shown.includes(secret));
    } finally {
      assert.equal((await put(world.idp.clientSecret)).status, 200);
    }
  });

  it('an IdP that cannot be reached when the code is exchanged is provider_unavailable: a 502 page, and the error says so', async () => {
    const { callback, jar } = await reachCallback();
    await world.idp.close();
    const page = await browserFetch(jar, callback);
    assert.equal(page.status, 502);
    assert.match(page.headers.get('content-type') ?? '', /text\/html/);
    const { lastError } = await connection();
    assert.equal(lastError.category, 'provider_unavailable');
    assert.match(lastError.message, /could not be reached/);
    assert.ok(!lastError.message.includes(callback.searchParams.get('code')!));
  });
});
