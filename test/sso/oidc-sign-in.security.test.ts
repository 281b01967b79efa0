// Completing an OIDC sign-in for someone else. The attacker is another organization's admin with an
// identity provider of her own (attacker-support.ts): she must not be able to have a victim's sign-in
// code sent anywhere she can read it, and a sign-in's authorization URL completed in any browser but the
// one that started it signs nobody in.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { api } from '../support/http.ts';
import { followRedirects, type CookieJar } from '../support/oidc-idp.ts';
import { bindingCookie } from '../../src/platform/browser-binding.ts';
import { ssoBrowserCookie } from '../../src/modules/sso/sign-in.ts';
import { startAttacker, type Attacker } from './attacker-support.ts';
import {
  accountOf,
  appRedirectUri,
  browserFetch,
  identityProviderUrl,
  pkcePair,
  startInBrowser,
  startOidcWorld,
  type OidcWorld,
} from './oidc-support.ts';

describe('OIDC sign-in: a sign-in is completed only for the redirect URI and the browser that started it', () => {
  let world: OidcWorld;
  let attacker: Attacker;
  before(async () => {
    world = await startOidcWorld();
    attacker = await startAttacker(world.app, world.dns, world.tenant);
  });
  after(async () => {
    await attacker?.close();
    await world?.close();
  });

  const callbackUrl = () => `${world.app.config.publicUrl}/v1/auth/sso/oidc/callback`;
  const start = (email: string, redirectUri: string, challenge: string) =>
    api(world.app.url).post('/v1/auth/sso/start', {
      email,
      redirectUri,
      codeChallenge: challenge,
      codeChallengeMethod: 'S256',
    });

  it("another organization's admin cannot have a victim's code sent through orgplane's own callback to her identity provider", async () => {
    const victim = world.tenant.member;
    // Her own sign-in, for her own domain: a state whose callback exchanges codes at her provider.
    const trap = await attacker.ownCallback();
    // A sign-in for the victim, with her PKCE challenge, returning to orgplane's callback with that state.
    const pkce = pkcePair();
    const started = await start(victim.email, trap, pkce.challenge);
    let session: { userId: string; organizationId: string } | undefined;
    if (started.status === 200) {
      // She opens the authorization URL herself and sends the victim where it leads: the genuine
      // authorization URL of the victim's own identity provider. The victim signs in there.
      const genuine = await identityProviderUrl(world.app, started.body.authorizationUrl, attacker.jar);
      world.idp.signInAs(accountOf(victim));
      const seen = attacker.idp.receivedCodes.length;
      await followRedirects(genuine, 'about:nowhere');
      // Whatever orgplane sent her provider's token endpoint, she tries as a sign-in code with her verifier.
      for (const code of attacker.idp.receivedCodes.slice(seen)) {
        const exchanged = await api(world.app.url).post('/v1/auth/sso/token', { code, codeVerifier: pkce.verifier });
        if (exchanged.status === 200)
          session = { userId: exchanged.body.user.id, organizationId: exchanged.body.organizationId };
      }
    }
    assert.equal(session, undefined, 'the attacker signed in as the victim');
    assert.equal(started.status, 400, started.text);
    assert.deepEqual(started.body.details[0].path, ['redirectUri']);
  });

  it("the provider's answer brought back by another browser is refused (403 browser_mismatch page) before its code is exchanged; the starter's browser completes it", async () => {
    const { member } = world.tenant;
    const pkce = pkcePair();
    const started = await start(member.email, appRedirectUri, pkce.challenge);
    assert.equal(started.status, 200, started.text);
    const starter: CookieJar = new Map();
    const genuine = await identityProviderUrl(world.app, started.body.authorizationUrl, starter);
    world.idp.signInAs(accountOf(member));
    // The provider's answer, as it sends the browser back to orgplane's callback (state and code).
    const answer = await followRedirects(genuine, callbackUrl());
    assert.ok(answer.location?.includes('code='), answer.text);
    const seen = world.idp.receivedCodes.length;

    const elsewhere = await fetch(answer.location!, { redirect: 'manual' });
    assert.equal(elsewhere.status, 403, 'a browser without the binding cookie is refused');
    assert.match(elsewhere.headers.get('content-type') ?? '', /text\/html/);
    assert.match(await elsewhere.text(), /started in another browser/);
    const forged = await fetch(answer.location!, {
      redirect: 'manual',
      headers: { cookie: `orgplane_sso=${'A'.repeat(43)}` },
    });
    assert.equal(forged.status, 403, 'nor does a made-up cookie pass');
    assert.equal(world.idp.receivedCodes.length, seen, "the provider's code never reached its token endpoint");
    const connection = (await api(world.app.url, world.tenant.owner.token).get('/v1/sso/connection')).body.connection;
    assert.equal(connection.lastError.category, 'browser_mismatch');

    const own = await fetch(answer.location!, {
      redirect: 'manual',
      headers: { cookie: [...starter].map(([k, v]) => `${k}=${v}`).join('; ') },
    });
    assert.equal(own.status, 303, await own.text());
    const code = new URL(own.headers.get('location')!).searchParams.get('code');
    const exchanged = await api(world.app.url).post('/v1/auth/sso/token', { code, codeVerifier: pkce.verifier });
    assert.equal(exchanged.status, 200, exchanged.text);
    assert.equal(exchanged.body.user.id, member.userId);
  });

  it('the link sets the binding cookie (HttpOnly, Path=/v1/auth/sso/, ten minutes, SameSite=Lax over http) and sends the browser to the IdP; only a hash is stored', async () => {
    const started = await start(world.tenant.member.email, appRedirectUri, pkcePair().challenge);
    const opened = await fetch(started.body.authorizationUrl, { redirect: 'manual' });
    assert.equal(opened.status, 303);
    assert.equal(new URL(opened.headers.get('location')!).origin, new URL(world.idp.issuer).origin, 'on to the IdP');
    assert.equal(opened.headers.get('cache-control'), 'no-store');
    assert.equal(opened.headers.get('referrer-policy'), 'no-referrer');
    const cookie = opened.headers.get('set-cookie')!;
    assert.match(cookie, /^orgplane_sso=[A-Za-z0-9_-]{43}; /);
    assert.deepEqual(cookie.split('; ').slice(1).sort(), [
      'HttpOnly',
      'Max-Age=600',
      'Path=/v1/auth/sso/',
      'SameSite=Lax',
    ]);
    const secret = cookie.split(';')[0]!.split('=')[1]!;
    const request = new URL(started.body.authorizationUrl).searchParams.get('request')!;
    const { rows } = await world.app.db.query(
      'SELECT authorize_hash, authorization_url_sealed, browser_binding_hash FROM sso_sign_in_requests',
    );
    const stored = JSON.stringify(rows);
    for (const plain of [
      secret,
      request,
      opened.headers.get('location')!,
      new URL(opened.headers.get('location')!).searchParams.get('state')!,
    ]) {
      assert.ok(!stored.includes(plain), "neither the secret, the link's id nor the IdP's URL is stored in the clear");
    }
    assert.ok(
      rows.some((row: { browser_binding_hash: string | null }) =>
        /^[0-9a-f]{64}$/.test(row.browser_binding_hash ?? ''),
      ),
    );
  });

  it("behind https the cookie is SameSite=None and Secure (a SAML IdP posts from another site), its path under PUBLIC_URL's", () => {
    const cookie = bindingCookie(ssoBrowserCookie, 'https://example.com/orgplane', 'n'.repeat(43), 600);
    assert.deepEqual(cookie.split('; ').slice(1).sort(), [
      'HttpOnly',
      'Max-Age=600',
      'Path=/orgplane/v1/auth/sso/',
      'SameSite=None',
      'Secure',
    ]);
  });

  it('the link opened by another browser after the first one is refused (403 browser_mismatch page); the first may open it again', async () => {
    const browser = await startInBrowser(world, world.tenant.member.email);
    const other = await fetch(browser.authorizationUrl, { redirect: 'manual' });
    assert.equal(other.status, 403);
    assert.match(other.headers.get('content-type') ?? '', /text\/html/);
    assert.match(await other.text(), /started in another browser/);
    assert.equal(other.headers.get('set-cookie'), null);
    const again = await browserFetch(browser.jar, browser.authorizationUrl);
    assert.equal(again.status, 303);
    assert.equal(again.headers.get('location'), browser.idpUrl);
  });

  it('two sign-ins in progress in one browser share its secret, and both complete there', async () => {
    const { member, admin } = world.tenant;
    const first = await startInBrowser(world, member.email);
    const secret = first.jar.get('orgplane_sso');
    assert.ok(secret);
    const pkce = pkcePair();
    const started = await start(admin.email, appRedirectUri, pkce.challenge);
    const secondIdpUrl = await identityProviderUrl(world.app, started.body.authorizationUrl, first.jar);
    assert.equal(first.jar.get('orgplane_sso'), secret, 'the carried secret is kept');
    for (const [url, person, verifier] of [
      [secondIdpUrl, admin, pkce.verifier],
      [first.idpUrl, member, first.verifier],
    ] as const) {
      world.idp.signInAs(accountOf(person));
      // A fresh IdP session each time (its own cookies would remember the last person), orgplane's cookie kept.
      const jar = new Map([...first.jar].filter(([name]) => name === 'orgplane_sso'));
      const reached = await followRedirects(url, appRedirectUri, jar);
      assert.ok(reached.location, reached.text);
      const exchanged = await api(world.app.url).post('/v1/auth/sso/token', {
        code: new URL(reached.location).searchParams.get('code'),
        codeVerifier: verifier,
      });
      assert.equal(exchanged.status, 200, exchanged.text);
      assert.equal(exchanged.body.user.id, person.userId);
    }
  });
});
