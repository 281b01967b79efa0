// Configuration from the environment: what a start refuses, so that a mistake stops the process at
// once with its name rather than failing requests later.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config.ts';
import { MAX_SESSION_TTL_HOURS } from '../../src/config-schema.ts';
import { configVariables } from '../../src/config-variables.ts';
import { freePort, startTestApp } from '../support/app.ts';
import { signUp } from '../support/fixtures.ts';
import { api } from '../support/http.ts';
import { runCli } from '../support/process.ts';

test('DNS_SERVERS: IP addresses with or without a port are taken; a host name or other text stops the start naming the variable', () => {
  assert.deepEqual(
    loadConfig({ DNS_SERVERS: ' 192.0.2.53, 192.0.2.54:5353 ,[2001:db8::53]:53,2001:db8::54' }).dnsServers,
    ['192.0.2.53', '192.0.2.54:5353', '[2001:db8::53]:53', '2001:db8::54'],
  );
  assert.deepEqual(loadConfig({}).dnsServers, []);
  for (const value of ['dns.example.com', '192.0.2.53, resolver.internal', '192.0.2.300', 'tcp://192.0.2.53']) {
    assert.throws(
      () => loadConfig({ DNS_SERVERS: value }),
      (error: Error) =>
        error.message.startsWith(`Invalid configuration: DNS_SERVERS=${JSON.stringify(value)}: must be IP addresses`),
      value,
    );
  }
});

test('a key ring with a key where its version belongs is refused without printing the key', async () => {
  const { parseKeyRing } = await import('../../src/platform/secrets.ts');
  const key = Buffer.alloc(32, 7).toString('base64');
  for (const text of [`${key}:v1`, `v2:${key},${key}:v1`]) {
    assert.throws(
      () => parseKeyRing(text),
      (error: Error) => /version must look like v1/.test(error.message) && !error.message.includes(key),
    );
  }
  assert.doesNotThrow(() => parseKeyRing(`v2:${key},v1:${key}`));
});

// Numeric settings: a value that is not a whole number in range stops the start, naming the variable.
// SESSION_TTL_HOURS=1.5 used to start, then fail every sign-in (the expiry is computed in SQL from an
// integer); the MESSENGER_DELIVERY_* values were replaced by their defaults without a word.
const numericSettings: Array<[name: string, good: string, tooSmall: string, tooLarge: string]> = [
  ['PORT', '8081', '-1', '65536'],
  ['DNS_TIMEOUT_MS', '3000', '49', '60001'],
  ['REQUEST_TIMEOUT_MS', '5000', '999', '3600001'],
  ['DB_POOL_SIZE', '3', '0', '501'],
  ['SESSION_TTL_HOURS', '24', '0', String(MAX_SESSION_TTL_HOURS + 1)],
  ['MESSENGER_DELIVERY_ATTEMPTS', '5', '0', '1001'],
  ['MESSENGER_DELIVERY_RETRY_DELAY_SECONDS', '3', '0', '86401'],
  ['MESSENGER_DELIVERY_MAX_RETRY_DELAY_SECONDS', '600', '0', '86401'],
  ['MESSENGER_DELIVERY_TIMEOUT_MS', '5000', '99', '3600001'],
  ['MESSENGER_DELIVERY_EXPIRE_SECONDS', '120', '0', '86401'],
  ['MESSENGER_DELIVERY_CONCURRENCY', '4', '0', '1001'],
  ['AUDIT_RETENTION_FIRST_RUN_SECONDS', '120', '-1', '86401'],
  ['SIGN_UP_ATTEMPTS_PER_ADDRESS', '100', '0', '1000001'],
  ['SSO_START_ATTEMPTS_PER_ADDRESS', '500', '0', '1000001'],
  ['MCP_HEALTH_INTERVAL_SECONDS', '600', '-1', '604801'],
  ['MCP_HEALTH_FAILURE_THRESHOLD', '5', '0', '101'],
];

test('DESKTOP_DOWNLOAD_URL has no made-up default: unset is null; an http(s) URL is taken; anything else stops the start naming it', () => {
  assert.equal(loadConfig({}).desktopDownloadUrl, null);
  assert.equal(
    loadConfig({ DESKTOP_DOWNLOAD_URL: 'https://downloads.example.com/app' }).desktopDownloadUrl,
    'https://downloads.example.com/app',
  );
  for (const bad of ['downloads', 'javascript:alert(1)', 'ftp://downloads.example.com/app']) {
    assert.throws(
      () => loadConfig({ DESKTOP_DOWNLOAD_URL: bad }),
      /^ConfigError: Invalid configuration: DESKTOP_DOWNLOAD_URL=".*": must be an http\(s\) URL/,
      bad,
    );
  }
});

test('every numeric setting takes a whole number in its range; a fraction (2.5, 0.5, 1.5), text or a value out of range stops the start naming it', () => {
  for (const [name, good, tooSmall, tooLarge] of numericSettings) {
    assert.doesNotThrow(() => loadConfig({ [name]: good }), name);
    for (const fraction of ['2.5', '0.5', '1.5']) {
      assert.throws(
        () => loadConfig({ [name]: fraction }),
        new RegExp(
          `^ConfigError: Invalid configuration: ${name}="${fraction}": must be a whole number \\(no fraction\\) from`,
        ),
        `${name}=${fraction}`,
      );
    }
    for (const value of [tooSmall, tooLarge, 'ten', '']) {
      assert.throws(
        () => loadConfig({ [name]: value }),
        (error: Error) =>
          error.name === 'ConfigError' &&
          error.message.startsWith(`Invalid configuration: ${name}=${JSON.stringify(value)}: must be`),
        `${name}=${value}`,
      );
    }
  }
  // The one setting that takes a fraction: how often idle workers poll, from half a second.
  assert.equal(loadConfig({ MESSENGER_DELIVERY_POLL_SECONDS: '0.5' }).messengerDelivery.pollingIntervalSeconds, 0.5);
  for (const value of ['0.4', '61', 'often', '']) {
    assert.throws(
      () => loadConfig({ MESSENGER_DELIVERY_POLL_SECONDS: value }),
      /^ConfigError: Invalid configuration: MESSENGER_DELIVERY_POLL_SECONDS=".*": must be a number of seconds from 0.5 to 60$/,
      `MESSENGER_DELIVERY_POLL_SECONDS=${value}`,
    );
  }
  assert.equal(loadConfig({ MESSENGER_DELIVERY_ATTEMPTS: '5' }).messengerDelivery.maxAttempts, 5);
  assert.equal(loadConfig({ SESSION_TTL_HOURS: '24' }).sessionTtlHours, 24);
  // The background MCP credential checks: hourly by default, 0 turns them off.
  assert.deepEqual([loadConfig({}).mcpHealth.intervalSeconds, loadConfig({}).mcpHealth.failureThreshold], [3600, 3]);
  assert.equal(loadConfig({ MCP_HEALTH_INTERVAL_SECONDS: '0' }).mcpHealth.intervalSeconds, 0);
  assert.equal(loadConfig({ MCP_HEALTH_FAILURE_THRESHOLD: '5' }).mcpHealth.failureThreshold, 5);
  assert.equal(loadConfig({}).sessionTtlHours, 720);
  assert.equal(loadConfig({}).signUpAttemptsPerAddress, 20);
  assert.equal(loadConfig({}).ssoStartAttemptsPerAddress, 100);
});

test('MESSENGER_DELIVERY_MAX_RETRY_DELAY_SECONDS below MESSENGER_DELIVERY_RETRY_DELAY_SECONDS stops the start', () => {
  assert.throws(
    () => loadConfig({ MESSENGER_DELIVERY_RETRY_DELAY_SECONDS: '10', MESSENGER_DELIVERY_MAX_RETRY_DELAY_SECONDS: '5' }),
    /MESSENGER_DELIVERY_MAX_RETRY_DELAY_SECONDS="5": must be at least MESSENGER_DELIVERY_RETRY_DELAY_SECONDS/,
  );
  assert.doesNotThrow(() =>
    loadConfig({ MESSENGER_DELIVERY_RETRY_DELAY_SECONDS: '5', MESSENGER_DELIVERY_MAX_RETRY_DELAY_SECONDS: '5' }),
  );
  // A delivery allowed to run past its expiry would be handed to a second worker while it runs.
  assert.throws(
    () => loadConfig({ MESSENGER_DELIVERY_TIMEOUT_MS: '60000', MESSENGER_DELIVERY_EXPIRE_SECONDS: '60' }),
    /MESSENGER_DELIVERY_TIMEOUT_MS="60000": must be shorter than MESSENGER_DELIVERY_EXPIRE_SECONDS/,
  );
  assert.doesNotThrow(() =>
    loadConfig({ MESSENGER_DELIVERY_TIMEOUT_MS: '59000', MESSENGER_DELIVERY_EXPIRE_SECONDS: '60' }),
  );
});

test('`orgplane start` and `orgplane worker` refuse a fractional setting at once, exit non-zero, and never listen', async () => {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'orgplane-config-'));
  try {
    const cases: Array<[command: string, name: string, value: string]> = [
      ['start', 'SESSION_TTL_HOURS', '1.5'],
      ['start', 'MESSENGER_DELIVERY_ATTEMPTS', '2.5'],
      ['worker', 'MESSENGER_DELIVERY_EXPIRE_SECONDS', '0.5'],
      ['worker', 'MESSENGER_DELIVERY_CONCURRENCY', '2.5'],
    ];
    await Promise.all(
      cases.map(async ([command, name, value]) => {
        const port = await freePort();
        const run = await runCli([command], { DATA_DIR: dataDir, PORT: String(port), [name]: value });
        assert.equal(run.code, 1, run.output);
        assert.match(
          run.output,
          new RegExp(
            `^orgplane: Invalid configuration: ${name}="${value}": must be a whole number \\(no fraction\\) from \\d+ to \\d+$`,
            'm',
          ),
        );
        assert.doesNotMatch(run.output, /listening|worker running|\n\s+at /, 'no start, no stack trace');
      }),
    );
    assert.deepEqual(await readdir(dataDir), [], 'nothing was written to DATA_DIR');
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
});

test(`the longest session lifetime taken (SESSION_TTL_HOURS=${MAX_SESSION_TTL_HOURS}) works end to end: sign-in, then the session is valid for that long`, async () => {
  const app = await startTestApp({
    sessionTtlHours: loadConfig({ SESSION_TTL_HOURS: String(MAX_SESSION_TTL_HOURS) }).sessionTtlHours,
  });
  try {
    const user = await signUp(app.url, 'longsession');
    const signIn = await api(app.url).post('/v1/auth/sign-in', { email: user.email, password: user.password });
    assert.equal(signIn.status, 200, signIn.text);
    assert.equal((await api(app.url, signIn.body.sessionToken).get('/v1/me')).status, 200);
    const { rows } = await app.db.query<{ hours: number }>(
      'SELECT extract(epoch FROM expires_at - now()) / 3600 AS hours FROM sessions WHERE user_id = $1',
      [user.userId],
    );
    assert.equal(rows.length, 2);
    for (const row of rows)
      assert.ok(Math.abs(Number(row.hours) - MAX_SESSION_TTL_HOURS) < 1, `expires in ${row.hours} hours`);
  } finally {
    await app.close();
  }
});

test('TRUSTED_PROXIES takes IP addresses and CIDRs; anything else stops the start naming it', () => {
  assert.deepEqual(loadConfig({}).trustedProxies, []);
  assert.deepEqual(loadConfig({ TRUSTED_PROXIES: ' 10.0.0.0/8, 192.0.2.7 ,fd00::/8' }).trustedProxies, [
    '10.0.0.0/8',
    '192.0.2.7',
    'fd00::/8',
  ]);
  for (const value of ['proxy.internal', '10.0.0.0/33', '10.0.0', '*']) {
    assert.throws(
      () => loadConfig({ TRUSTED_PROXIES: value }),
      /^ConfigError: Invalid configuration: TRUSTED_PROXIES=".*": must be IP addresses or CIDRs/,
      `TRUSTED_PROXIES=${value}`,
    );
  }
});

// A value each setting refuses. Every setting `orgplane --help` lists is here, so a new one gets its
// case (the test fails on one that is missing); a setting that takes any text has none, said with null.
const refusedValues: Record<string, string | null> = {
  PORT: '80a',
  HOST: 'not a host',
  PUBLIC_URL: 'orgplane.example.com',
  DATABASE_URL: 'mysql://root:hunter2@db/orgplane',
  DATA_DIR: '',
  ORGPLANE_SECRET_KEY: '',
  ALLOWED_PRIVATE_NETWORKS: 'localhost',
  TRUSTED_PROXIES: 'proxy.internal',
  REQUEST_TIMEOUT_MS: '10',
  DNS_SERVERS: 'dns.example.com',
  DNS_TIMEOUT_MS: 'soon',
  CORS_ALLOWED_ORIGINS: '*',
  DESKTOP_DOWNLOAD_URL: 'ftp://downloads.example.com',
  SSO_REDIRECT_URIS: 'not a uri',
  SSO_CLOCK_SKEW_SECONDS: '601',
  SMTP_URL: 'mail.example.com:587',
  MAIL_FROM: 'orgplane',
  MESSENGER_API_ROOT: 'api.telegram.org',
  LOG_LEVEL: 'loud',
  DB_POOL_SIZE: '0',
  SESSION_TTL_HOURS: '1.5',
  REAUTH_MAX_AGE_SECONDS: '-1',
  SIGN_UP_ENABLED: 'maybe',
  SIGN_UP_ATTEMPTS_PER_ADDRESS: '0',
  SSO_START_ATTEMPTS_PER_ADDRESS: 'many',
  RUN_WORKERS: 'sometimes',
  DEFAULT_PLAN: 'platinum',
  AUDIT_RETENTION_DAYS: '0',
  AUDIT_STREAM_ATTEMPTS: '0',
  AUDIT_RETENTION_FIRST_RUN_SECONDS: '-1',
  AUDIT_STREAM_RETRY_DELAY_SECONDS: '0',
  AUDIT_STREAM_MAX_RETRY_DELAY_SECONDS: '0',
  AUDIT_STREAM_BATCH_SIZE: '1001',
  AUDIT_STREAM_POLL_SECONDS: '0.01',
  MCP_HEALTH_INTERVAL_SECONDS: '-5',
  MCP_HEALTH_FAILURE_THRESHOLD: '0',
  MESSENGER_DELIVERY_ATTEMPTS: '0',
  MESSENGER_DELIVERY_RETRY_DELAY_SECONDS: '0',
  MESSENGER_DELIVERY_MAX_RETRY_DELAY_SECONDS: '0',
  MESSENGER_DELIVERY_TIMEOUT_MS: '1',
  MESSENGER_DELIVERY_EXPIRE_SECONDS: '86401',
  MESSENGER_DELIVERY_CONCURRENCY: '0',
  MESSENGER_DELIVERY_POLL_SECONDS: '0.1',
};

test('every setting with a wrong value stops the start with one line naming it, its value (not a secret one) and what is allowed', () => {
  const listed = configVariables.map(([name]) => name as string);
  assert.deepEqual(
    listed.filter((name) => !(name in refusedValues)),
    [],
    'each listed setting has a refused value',
  );
  assert.deepEqual(
    Object.keys(refusedValues).filter((name) => !listed.includes(name)),
    [],
    'no stale entries',
  );
  for (const [name, value] of Object.entries(refusedValues)) {
    if (value === null) continue;
    assert.throws(
      () => loadConfig({ [name]: value }),
      (error: Error) => {
        assert.equal(error.name, 'ConfigError');
        const lines = error.message.split('\n');
        assert.equal(lines.length, 1, error.message);
        const hidden = ['DATABASE_URL', 'ORGPLANE_SECRET_KEY', 'SMTP_URL'].includes(name);
        const shown = hidden ? '(value hidden)' : JSON.stringify(value);
        assert.match(lines[0]!, /^Invalid configuration: [A-Z_]+=.+: must be .{8,}/, error.message);
        assert.ok(lines[0]!.startsWith(`Invalid configuration: ${name}=${shown}: must be `), error.message);
        assert.doesNotMatch(error.message, /hunter2/, 'a password in DATABASE_URL is never repeated');
        return true;
      },
      `${name}=${value}`,
    );
  }
});

test('an address that is not a network in ALLOWED_PRIVATE_NETWORKS stops `orgplane start` with one line, no stack trace', async () => {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'orgplane-config-'));
  try {
    const run = await runCli(['start'], {
      DATA_DIR: dataDir,
      PORT: String(await freePort()),
      ALLOWED_PRIVATE_NETWORKS: 'localhost',
    });
    assert.equal(run.code, 1, run.output);
    assert.equal(
      run.output.trim(),
      'orgplane: Invalid configuration: ALLOWED_PRIVATE_NETWORKS="localhost": must be CIDRs, each an address and a prefix length: 10.0.0.0/8, 127.0.0.1/32, fd00::/8 (not a host name)',
    );
    assert.deepEqual(
      loadConfig({ ALLOWED_PRIVATE_NETWORKS: '127.0.0.1/32, 10.0.0.0/8,fd00::/8' }).allowedPrivateNetworks,
      ['127.0.0.1/32', '10.0.0.0/8', 'fd00::/8'],
    );
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
});

test('SMTP_URL and MAIL_FROM: unset sends no mail; the From address defaults to noreply at the PUBLIC_URL host', () => {
  assert.deepEqual(loadConfig({}).mail, { smtpUrl: null, from: 'orgplane <noreply@localhost>' });
  assert.deepEqual(
    loadConfig({
      SMTP_URL: 'smtps://orgplane:secret@mail.example.com:465',
      PUBLIC_URL: 'https://orgplane.example.com',
    }).mail,
    { smtpUrl: 'smtps://orgplane:secret@mail.example.com:465', from: 'orgplane <noreply@orgplane.example.com>' },
  );
  assert.equal(loadConfig({ MAIL_FROM: ' Acme IT <it@acme.example> ' }).mail.from, 'Acme IT <it@acme.example>');
  assert.equal(loadConfig({ MAIL_FROM: 'it@acme.example' }).mail.from, 'it@acme.example');
  assert.throws(
    () => loadConfig({ SMTP_URL: 'smtp://orgplane:hunter2@' }),
    (error: Error) => error.message.includes('SMTP_URL=(value hidden)') && !error.message.includes('hunter2'),
  );
});
