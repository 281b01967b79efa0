import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startTestApp, testBackend } from '../support/app.ts';
import { signUp, uniqueEmail } from '../support/fixtures.ts';
import { api } from '../support/http.ts';
import { useTenantApp } from '../support/harness.ts';
import { inOneWindow as inOneSignInWindow, windowOf as windowOfSeconds } from '../support/rate-windows.ts';

// The sign-in limits count in fixed 15-minute windows (see test/support/rate-windows.ts).
const signInWindowSeconds = 15 * 60;
const inOneWindow = (run: () => Promise<void>) => inOneSignInWindow(signInWindowSeconds, run);
const windowOf = () => windowOfSeconds(signInWindowSeconds);

describe('users and sessions: documented errors', () => {
  const harness = useTenantApp();

  it('sign-up with a taken email is 409 email_taken (case-insensitively)', async () => {
    const response = await harness.as().post('/v1/auth/sign-up', {
      email: harness.tenant.member.email.toUpperCase(),
      password: 'another password',
      name: 'Dup',
    });
    assert.equal(response.status, 409);
    assert.equal(response.body.error, 'email_taken');
  });

  it('sign-up can be disabled', async () => {
    const closed = await startTestApp({ signUpEnabled: false });
    try {
      const response = await api(closed.url).post('/v1/auth/sign-up', {
        email: uniqueEmail('x'),
        password: 'long enough pw',
        name: 'X',
      });
      assert.equal(response.status, 403);
      assert.equal(response.body.error, 'sign_up_disabled');
    } finally {
      await closed.close();
    }
  });

  it('wrong password and unknown account are the same 401 invalid_credentials', async () => {
    const wrong = await harness
      .as()
      .post('/v1/auth/sign-in', { email: harness.tenant.member.email, password: 'wrong password' });
    const unknown = await harness
      .as()
      .post('/v1/auth/sign-in', { email: uniqueEmail('nobody'), password: 'wrong password' });
    assert.deepEqual(
      [wrong.status, wrong.body],
      [401, { error: 'invalid_credentials', message: 'Email or password is wrong' }],
    );
    assert.deepEqual([unknown.status, unknown.body], [401, wrong.body]);
  });

  it('sign-in attempts per account are limited: 429 rate_limited with Retry-After, even with the right password', async () => {
    await inOneWindow(async () => {
      const user = await signUp(harness.app.url, 'limited');
      for (let attempt = 0; attempt < 10; attempt++) {
        const response = await harness.as().post('/v1/auth/sign-in', { email: user.email, password: 'guess' });
        assert.equal(response.status, 401);
      }
      const limited = await harness.as().post('/v1/auth/sign-in', { email: user.email, password: user.password });
      assert.equal(limited.status, 429);
      assert.equal(limited.body.error, 'rate_limited');
      assert.equal(typeof limited.body.message, 'string');
      assert.ok(Number(limited.headers.get('retry-after')) > 0);
      assert.equal(limited.headers.get('ratelimit-remaining'), '0');
    });
  });

  it('the sign-in limit is shared by every process on one database', {
    skip: testBackend !== 'postgres' && 'several processes share one database only on PostgreSQL',
  }, async () => {
    const second = await startTestApp({}, { shareDatabaseWith: harness.app });
    try {
      const user = await signUp(harness.app.url, 'shared');
      const results = await Promise.all(
        Array.from({ length: 12 }, (_, index) =>
          api(index % 2 ? harness.app.url : second.url).post('/v1/auth/sign-in', {
            email: user.email,
            password: 'guess',
          }),
        ),
      );
      const statuses = results.map((r) => r.status).sort();
      assert.deepEqual(statuses, [...Array(10).fill(401), 429, 429]);
    } finally {
      await second.close();
    }
  });
});

// On an app of their own: these count every sign-in attempt made from the test's address.
describe('sign-in rate limits count failed attempts, not successful sign-ins', () => {
  const harness = useTenantApp({ tenant: false });

  const signIn = (email: string, password: string) => harness.as().post('/v1/auth/sign-in', { email, password });

  it('repeated successful sign-ins of one account from one address are never limited', async () => {
    const user = await signUp(harness.app.url, 'scripted');
    // More than both limits (10 per account, 50 per address).
    for (let attempt = 1; attempt <= 55; attempt++) {
      const response = await signIn(user.email, user.password);
      assert.equal(response.status, 200, `sign-in ${attempt}: ${response.text}`);
    }
  });

  it('wrong passwords still lock the account (right password included); a success in between does not reset the count', async () => {
    // A run that a window's end cuts in two is run again, whole, in the next window (see windowOf).
    for (let run = 1; ; run++) {
      const window = windowOf();
      const user = await signUp(harness.app.url, 'guessed');
      const statuses: number[] = [];
      for (let attempt = 0; attempt < 4; attempt++) statuses.push((await signIn(user.email, 'guess')).status);
      statuses.push((await signIn(user.email, user.password)).status);
      for (let attempt = 0; attempt < 6; attempt++) statuses.push((await signIn(user.email, 'guess')).status);
      const limited = [await signIn(user.email, 'guess'), await signIn(user.email, user.password)];
      if (windowOf() !== window && run === 1) continue;
      assert.deepEqual(statuses, [401, 401, 401, 401, 200, 401, 401, 401, 401, 401, 401]);
      for (const response of limited) {
        assert.equal(response.status, 429, response.text);
        assert.equal(response.body.error, 'rate_limited');
        assert.ok(Number(response.headers.get('retry-after')) > 0);
      }
      return;
    }
  });

  it('wrong passwords from one address across many accounts still reach the per-address limit', async () => {
    const user = await signUp(harness.app.url, 'bystander');
    // One guess per account, each account under its own limit: only the address limit (50) can stop them.
    // The tests before left some failed attempts from this address in the window (a window that ends in
    // between starts the count again, hence the margin).
    let limited: Awaited<ReturnType<typeof signIn>> | undefined;
    for (let attempt = 0; attempt <= 100 && !limited; attempt++) {
      const response = await signIn(uniqueEmail(`spray${attempt}`), 'guess');
      if (response.status === 429) limited = response;
      else assert.equal(response.status, 401, `attempt ${attempt}: ${response.text}`);
    }
    assert.ok(limited, 'guesses at many accounts from one address were never limited');
    assert.equal(limited.body.error, 'rate_limited');
    // The address is refused now, whoever signs in.
    assert.equal((await signIn(user.email, user.password)).status, 429);
  });
});

// Behind a trusted proxy, so that X-Forwarded-For gives each request the client address under test.
describe('sign-in limits: one address guessing locks out that address, not the account', () => {
  const harness = useTenantApp({ config: { trustedProxies: ['127.0.0.1/32'] }, tenant: false });

  const signInFrom = (address: string, email: string, password: string) =>
    harness.as().post('/v1/auth/sign-in', { email, password }, { headers: { 'x-forwarded-for': address } });

  it('ten wrong guesses from one address: that address is refused, the owner signs in from another', async () => {
    await inOneWindow(async () => {
      const user = await signUp(harness.app.url, 'targeted');
      const stranger = '203.0.113.7';
      for (let attempt = 0; attempt < 10; attempt++)
        assert.equal((await signInFrom(stranger, user.email, 'guess')).status, 401);
      const refused = [
        await signInFrom(stranger, user.email, 'guess'),
        await signInFrom(stranger, user.email, user.password),
      ];
      for (const response of refused) {
        assert.equal(response.status, 429, response.text);
        assert.equal(response.body.error, 'rate_limited');
        assert.ok(Number(response.headers.get('retry-after')) > 0);
      }
      const owner = await signInFrom('198.51.100.20', user.email, user.password);
      assert.equal(owner.status, 200, owner.text);
    });
  });

  it("guessing spread over many addresses reaches the account's own limit (100); refused attempts do not count towards it", async () => {
    await inOneWindow(async () => {
      const user = await signUp(harness.app.url, 'spread');
      // The first address is locked out after 10, and its 20 further tries are refused: had they
      // counted on the account, it would be locked before the other nine addresses had their 90 guesses.
      const statuses: number[] = [];
      for (let attempt = 0; attempt < 30; attempt++)
        statuses.push((await signInFrom('203.0.113.100', user.email, 'guess')).status);
      assert.deepEqual(statuses, [...Array(10).fill(401), ...Array(20).fill(429)]);
      for (let address = 101; address < 110; address++) {
        const answers = await Promise.all(
          Array.from({ length: 10 }, () => signInFrom(`203.0.113.${address}`, user.email, 'guess')),
        );
        assert.deepEqual(
          answers.map((answer) => answer.status),
          Array(10).fill(401),
          `address 203.0.113.${address}`,
        );
      }
      // 100 failed attempts: now the account is refused from anywhere, with the right password too,
      const locked = await signInFrom('198.51.100.30', user.email, user.password);
      assert.equal(locked.status, 429, locked.text);
      assert.equal(locked.body.error, 'rate_limited');
      // and that address may still sign in to other accounts.
      const other = await signUp(harness.app.url, 'unrelated');
      assert.equal((await signInFrom('198.51.100.30', other.email, other.password)).status, 200);
    });
  });
});
