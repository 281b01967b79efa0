import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hashToken } from '../../src/platform/tokens.ts';
import { signUp } from '../support/fixtures.ts';
import { useTenantApp } from '../support/harness.ts';
import { inOneWindow } from '../support/rate-windows.ts';
import { ageSession } from './reauth-support.ts';

// The sign-in limits' window (src/modules/users/service.ts), which re-authentication shares.
const signInWindowSeconds = 15 * 60;

describe('POST /v1/auth/reauthenticate: errors', () => {
  const t = useTenantApp({ tenant: false });

  it('a wrong password is 403 invalid_credentials (the session stays valid) and the session is not refreshed', async () => {
    const user = await signUp(t.app.url, 'wrong');
    await ageSession(t.app, user.token);
    const before = (await t.as(user.token).get('/v1/me')).body.session.authenticatedAt;
    const refused = await t.as(user.token).post('/v1/auth/reauthenticate', { password: 'not-the-password' });
    assert.equal(refused.status, 403, refused.text);
    assert.equal(refused.body.error, 'invalid_credentials');
    const me = await t.as(user.token).get('/v1/me');
    assert.equal(me.status, 200);
    assert.equal(me.body.session.authenticatedAt, before);
  });

  it('invalid bodies are 400 invalid_request with details', async () => {
    const user = await signUp(t.app.url, 'invalid');
    for (const body of [{}, { password: '' }, { password: 12 }, { password: 'x'.repeat(257) }]) {
      const response = await t.as(user.token).post('/v1/auth/reauthenticate', body);
      assert.equal(response.status, 400, JSON.stringify(body));
      assert.equal(response.body.error, 'invalid_request');
      assert.ok(response.body.details.length > 0);
    }
    const notJson = await t.as(user.token).post('/v1/auth/reauthenticate', undefined, {
      raw: '{"password',
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(notJson.status, 400);
  });

  it('wrong passwords count against the sign-in limits: then 429 with Retry-After, even with the right password', async () => {
    // The limits count in fixed 15-minute windows: 11 attempts that a window's end cuts in two start
    // counting again halfway (the 11th was then a 200), so they run again, whole, in the next window.
    await inOneWindow(signInWindowSeconds, async () => {
      const user = await signUp(t.app.url, 'guesser');
      for (let attempt = 0; attempt < 10; attempt++) {
        assert.equal(
          (await t.as(user.token).post('/v1/auth/reauthenticate', { password: `guess-${attempt}` })).status,
          403,
        );
      }
      const limited = await t.as(user.token).post('/v1/auth/reauthenticate', { password: user.password });
      assert.equal(limited.status, 429, limited.text);
      assert.equal(limited.body.error, 'rate_limited');
      assert.ok(Number(limited.headers.get('retry-after')) > 0);
    });
  });

  it('an account without a password (SSO only) gets 403 password_not_set', async () => {
    const user = await signUp(t.app.url, 'ssoonly');
    await t.app.db.query('UPDATE users SET password_hash = NULL WHERE id = $1', [user.userId]);
    const refused = await t.as(user.token).post('/v1/auth/reauthenticate', { password: user.password });
    assert.equal(refused.status, 403, refused.text);
    assert.equal(refused.body.error, 'password_not_set');
  });

  it('a session revoked or expired since gets 401', async () => {
    const user = await signUp(t.app.url, 'expired');
    await t.app.db.query(`UPDATE sessions SET expires_at = now() - interval '1 second' WHERE token_hash = $1`, [
      hashToken(user.token),
    ]);
    const response = await t.as(user.token).post('/v1/auth/reauthenticate', { password: user.password });
    assert.equal(response.status, 401);
  });
});
