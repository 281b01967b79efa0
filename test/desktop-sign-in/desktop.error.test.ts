// The desktop sign-in's documented errors: a redirect URI a sign-in may not use (for a code, or for the
// cancellation), a body that is not valid, and every way a code is refused (400 invalid_grant): unknown,
// used, expired, another verifier, another redirect URI. A refused code is spent all the same, and
// nothing is signed in.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { useTenantApp } from '../support/harness.ts';
import { authorizeBody, codeOf, loopbackRedirect, pkcePair } from './support.ts';

const t = useTenantApp();
const invalidGrant = (response: { status: number; body: { error: string } }) =>
  assert.deepEqual([response.status, response.body.error], [400, 'invalid_grant']);

async function authorized() {
  const pkce = pkcePair();
  const response = await t.as(t.tenant.member.token).post('/v1/auth/desktop/authorize', authorizeBody(pkce.challenge));
  assert.equal(response.status, 200, response.text);
  return { ...pkce, code: codeOf(response.body.redirectTo) };
}

/** Redirect URIs the desktop app may not use: elsewhere, and every URL of orgplane's own (its console's SSO pages too). */
const refusedRedirects = () => {
  const base = t.app.config.publicUrl;
  const port = new URL(base).port;
  return [
    'https://attacker.example/callback',
    'http://192.168.1.5:8080/cb',
    'http://127.0.0.1:5000/cb#fragment',
    'http://user:pw@127.0.0.1:5000/cb',
    'not a uri',
    `${base}/v1/auth/sso/oidc/callback?state=x`,
    `${base}/sso/callback`,
    `${base}/desktop/done`,
    `http://localhost:${port}/callback`,
    `http://[::1]:${port}/callback`,
  ];
};

test("a redirect URI that is not loopback (on another port than orgplane's), the app's scheme or configured is 400 invalid_request naming it; no code is made", async () => {
  for (const redirectUri of refusedRedirects()) {
    const refused = await t
      .as(t.tenant.member.token)
      .post('/v1/auth/desktop/authorize', authorizeBody(pkcePair().challenge, { redirectUri }));
    assert.equal(refused.status, 400, redirectUri);
    assert.equal(refused.body.error, 'invalid_request');
    assert.deepEqual(
      refused.body.details.map((detail: { path: string[] }) => detail.path),
      [['redirectUri']],
      redirectUri,
    );
  }
  const { rows } = await t.app.db.query('SELECT count(*)::int AS n FROM desktop_sign_in_codes');
  assert.equal(rows[0].n, 0);
});

test('bodies that are not valid are 400 invalid_request: a short challenge, another method, unknown fields', async () => {
  for (const body of [
    authorizeBody('short'),
    authorizeBody(pkcePair().challenge, { codeChallengeMethod: 'plain' }),
    authorizeBody(pkcePair().challenge, { extra: true }),
    authorizeBody(pkcePair().challenge, { state: 'x'.repeat(513) }),
  ]) {
    const refused = await t.as(t.tenant.member.token).post('/v1/auth/desktop/authorize', body);
    assert.deepEqual([refused.status, refused.body.error], [400, 'invalid_request'], JSON.stringify(body));
  }
  const malformed = await t
    .as()
    .post('/v1/auth/desktop/token', { code: 'x', codeVerifier: 'short', redirectUri: loopbackRedirect });
  assert.deepEqual([malformed.status, malformed.body.error], [400, 'invalid_request']);
});

test('a code is refused (400 invalid_grant) when unknown, used, with another verifier or redirect URI, and a refused code is spent', async () => {
  invalidGrant(
    await t.as().post('/v1/auth/desktop/token', {
      code: 'never-issued',
      codeVerifier: pkcePair().verifier,
      redirectUri: loopbackRedirect,
    }),
  );

  const used = await authorized();
  assert.equal(
    (
      await t
        .as()
        .post('/v1/auth/desktop/token', { code: used.code, codeVerifier: used.verifier, redirectUri: loopbackRedirect })
    ).status,
    200,
  );
  invalidGrant(
    await t
      .as()
      .post('/v1/auth/desktop/token', { code: used.code, codeVerifier: used.verifier, redirectUri: loopbackRedirect }),
  );

  const wrongVerifier = await authorized();
  invalidGrant(
    await t.as().post('/v1/auth/desktop/token', {
      code: wrongVerifier.code,
      codeVerifier: pkcePair().verifier,
      redirectUri: loopbackRedirect,
    }),
  );
  invalidGrant(
    await t.as().post('/v1/auth/desktop/token', {
      code: wrongVerifier.code,
      codeVerifier: wrongVerifier.verifier,
      redirectUri: loopbackRedirect,
    }),
  );

  const wrongRedirect = await authorized();
  invalidGrant(
    await t.as().post('/v1/auth/desktop/token', {
      code: wrongRedirect.code,
      codeVerifier: wrongRedirect.verifier,
      redirectUri: 'http://127.0.0.1:53118/callback',
    }),
  );
});

test('an expired code is 400 invalid_grant', async () => {
  const expired = await authorized();
  await t.app.db.query(`UPDATE desktop_sign_in_codes SET expires_at = now() - interval '1 second'`);
  invalidGrant(
    await t.as().post('/v1/auth/desktop/token', {
      code: expired.code,
      codeVerifier: expired.verifier,
      redirectUri: loopbackRedirect,
    }),
  );
});

test('cancel: a redirect URI the app may not use, or a body that is not valid, is 400 invalid_request; nothing is answered to send the browser to', async () => {
  for (const redirectUri of refusedRedirects()) {
    const refused = await t.as(t.tenant.member.token).post('/v1/auth/desktop/cancel', { redirectUri, state: 's' });
    assert.deepEqual([refused.status, refused.body.error], [400, 'invalid_request'], redirectUri);
    assert.deepEqual(
      refused.body.details.map((detail: { path: string[] }) => detail.path),
      [['redirectUri']],
      redirectUri,
    );
    assert.equal(refused.body.redirectTo, undefined);
  }
  for (const body of [
    {},
    { redirectUri: '' },
    { redirectUri: loopbackRedirect, state: 'x'.repeat(513) },
    { redirectUri: loopbackRedirect, extra: true },
    { redirectUri: 'x'.repeat(2049) },
  ]) {
    const refused = await t.as().post('/v1/auth/desktop/cancel', body);
    assert.deepEqual(
      [refused.status, refused.body.error],
      [400, 'invalid_request'],
      JSON.stringify(body).slice(0, 100),
    );
  }
});
