// POST /v1/auth/sso/start is limited per client address (SSO_START_ATTEMPTS_PER_ADDRESS per fixed
// 15-minute window, counted in the database), whatever the answer; then 429 rate_limited in the API's
// error shape with Retry-After, and nothing is stored. Addresses are told apart through X-Forwarded-For
// from a trusted proxy (127.0.0.1).
import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { startLimitWindowSeconds } from '../../src/modules/sso/sign-in.ts';
import { api } from '../support/http.ts';
import { inOneWindow } from '../support/rate-windows.ts';
import { appRedirectUri, pkcePair, startOidcWorld, type OidcWorld } from './oidc-support.ts';

const perAddress = 3;
const freshAddress = () => `203.0.${randomInt(0, 256)}.${randomInt(1, 255)}`;

describe('SSO start: limited per client address', () => {
  let world: OidcWorld;
  before(async () => {
    world = await startOidcWorld({ app: { ssoStartAttemptsPerAddress: perAddress, trustedProxies: ['127.0.0.1'] } });
  });
  after(async () => {
    await world?.close();
  });

  const startFrom = (address: string, body: Record<string, unknown> = {}) =>
    api(world.app.url).post(
      '/v1/auth/sso/start',
      {
        email: world.tenant.member.email,
        redirectUri: appRedirectUri,
        codeChallenge: pkcePair().challenge,
        codeChallengeMethod: 'S256',
        ...body,
      },
      { headers: { 'x-forwarded-for': address } },
    );
  const requestsInProgress = async () =>
    Number((await world.app.db.query('SELECT count(*) AS n FROM sso_sign_in_requests')).rows[0].n);

  it('every answer counts (200, 404 sso_not_configured, 400 for a refused redirect URI); past the limit, 429 rate_limited with Retry-After, and nothing is stored', async () => {
    await inOneWindow(startLimitWindowSeconds, async () => {
      const address = freshAddress();
      assert.equal((await startFrom(address)).status, 200);
      assert.equal((await startFrom(address, { email: 'someone@elsewhere.example' })).status, 404);
      assert.equal((await startFrom(address, { redirectUri: 'https://evil.example/cb' })).status, 400);
      const before = await requestsInProgress();
      const refused = await startFrom(address);
      assert.equal(refused.status, 429, refused.text);
      assert.equal(refused.body.error, 'rate_limited');
      assert.equal(typeof refused.body.message, 'string');
      assert.equal(refused.body.authorizationUrl, undefined);
      const retryAfter = Number(refused.headers.get('retry-after'));
      assert.ok(retryAfter > 0 && retryAfter <= startLimitWindowSeconds, String(retryAfter));
      assert.equal(await requestsInProgress(), before, 'a refused start stores no sign-in');
      // Another address is not affected.
      assert.equal((await startFrom(freshAddress())).status, 200);
    });
  });
});
