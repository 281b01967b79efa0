// Sign-up is limited per client address and per target e-mail, counted in the database (so across
// processes), answered like sign-in's limits: 429 rate_limited with Retry-After and RateLimit-*.
// Client addresses are told apart through X-Forwarded-For from a trusted proxy (127.0.0.1).
import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { signUpLimits } from '../../src/modules/users/service.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { uniqueEmail } from '../support/fixtures.ts';
import { inOneWindow as inOneSignUpWindow } from '../support/rate-windows.ts';
import { api, type ApiResponse } from '../support/http.ts';

const perAddress = 3;

// The limits count in fixed one-hour windows: a run cut in two by a window's end is run again, whole
// (with fresh addresses), in the next window (test/support/rate-windows.ts).
const inOneWindow = (run: () => Promise<void>) => inOneSignUpWindow(signUpLimits.windowSeconds, run);

const freshAddress = () => `198.51.${randomInt(0, 256)}.${randomInt(1, 255)}`;

describe('sign-up limits', () => {
  let app: TestApp;
  let second: TestApp;
  before(async () => {
    app = await startTestApp({ signUpAttemptsPerAddress: perAddress, trustedProxies: ['127.0.0.1'] });
    // another process on the same database
    second = await startTestApp(
      { signUpAttemptsPerAddress: perAddress, trustedProxies: ['127.0.0.1'] },
      { shareDatabaseWith: app },
    );
  });
  after(async () => {
    await second?.close();
    await app?.close();
  });

  const signUpFrom = (address: string, email: string, on: TestApp = app): Promise<ApiResponse> =>
    api(on.url).post(
      '/v1/auth/sign-up',
      { email, password: 'a long password', name: 'Prober' },
      { headers: { 'x-forwarded-for': address } },
    );

  const assertLimited = (response: ApiResponse) => {
    assert.equal(response.status, 429, response.text);
    assert.equal(response.body.error, 'rate_limited');
    assert.match(response.body.message, /sign-up/);
    assert.ok(Number(response.headers.get('retry-after')) > 0);
    assert.ok(Number(response.headers.get('retry-after')) <= signUpLimits.windowSeconds);
    assert.equal(response.headers.get('ratelimit-remaining'), '0');
  };

  it('one client address gets SIGN_UP_ATTEMPTS_PER_ADDRESS attempts an hour, 201s and 409s alike; then 429 and nothing is created', async () => {
    await inOneWindow(async () => {
      const address = freshAddress();
      const taken = uniqueEmail('taken');
      assert.equal((await signUpFrom(address, taken)).status, 201);
      assert.equal((await signUpFrom(address, taken)).status, 409);
      assert.equal((await signUpFrom(address, uniqueEmail('probe'))).status, 201);
      const refusedEmail = uniqueEmail('refused');
      const refused = await signUpFrom(address, refusedEmail);
      assertLimited(refused);
      assert.equal(refused.headers.get('ratelimit-limit'), String(perAddress));
      // the refused attempt created no account: the address is still free from elsewhere
      assert.equal((await signUpFrom(freshAddress(), refusedEmail)).status, 201);
      // and a registered address is not revealed to the limited client either
      assertLimited(await signUpFrom(address, taken));
    });
  });

  it('one e-mail address gets 5 attempts an hour from all clients together', async () => {
    await inOneWindow(async () => {
      const target = uniqueEmail('target');
      const statuses = [];
      for (let attempt = 0; attempt < signUpLimits.perTargetAddress; attempt++)
        statuses.push((await signUpFrom(freshAddress(), target.toUpperCase())).status);
      assert.deepEqual(statuses, [201, 409, 409, 409, 409]);
      const fromNewClient = await signUpFrom(freshAddress(), target);
      assertLimited(fromNewClient);
      assert.equal(fromNewClient.headers.get('ratelimit-limit'), String(signUpLimits.perTargetAddress));
      // another address from the same client is not affected
      assert.equal((await signUpFrom(freshAddress(), uniqueEmail('other'))).status, 201);
    });
  });

  it('attempts one limit refuses do not count against the other', async () => {
    await inOneWindow(async () => {
      const address = freshAddress();
      for (let attempt = 0; attempt < perAddress; attempt++)
        assert.equal((await signUpFrom(address, uniqueEmail('fill'))).status, 201);
      const target = uniqueEmail('owner');
      // the locked-out client hammers one address: all refused by its own limit...
      for (let attempt = 0; attempt < 2 * signUpLimits.perTargetAddress; attempt++)
        assertLimited(await signUpFrom(address, target));
      // ...and the address's owner can still sign up
      assert.equal((await signUpFrom(freshAddress(), target)).status, 201);
    });
  });

  it('is counted in the database: across processes, and exactly under concurrency', async () => {
    await inOneWindow(async () => {
      const address = freshAddress();
      assert.equal((await signUpFrom(address, uniqueEmail('p1'), app)).status, 201);
      assert.equal((await signUpFrom(address, uniqueEmail('p2'), second)).status, 201);
      assert.equal((await signUpFrom(address, uniqueEmail('p3'), app)).status, 201);
      assertLimited(await signUpFrom(address, uniqueEmail('p4'), second));

      const burst = freshAddress();
      const answers = await Promise.all(
        Array.from({ length: 12 }, (_, i) => signUpFrom(burst, uniqueEmail(`burst${i}`), i % 2 ? app : second)),
      );
      assert.equal(answers.filter((response) => response.status === 201).length, perAddress);
      assert.equal(answers.filter((response) => response.status === 429).length, 12 - perAddress);
    });
  });

  it('an invalid sign-up (400) is answered before counting and uses up nothing', async () => {
    await inOneWindow(async () => {
      const address = freshAddress();
      for (let attempt = 0; attempt < perAddress + 2; attempt++) {
        const invalid = await api(app.url).post(
          '/v1/auth/sign-up',
          { email: 'not an email', password: 'short', name: '' },
          { headers: { 'x-forwarded-for': address } },
        );
        assert.equal(invalid.status, 400);
      }
      assert.equal((await signUpFrom(address, uniqueEmail('after-400s'))).status, 201);
    });
  });
});
