// SSO: every documented error of the connection and verification routes.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createTenant, signUp, type Tenant } from '../support/fixtures.ts';
import { api } from '../support/http.ts';
import { connectionBody, setPlan, startSsoApp, verifiedConnection } from './helpers.ts';

let env: Awaited<ReturnType<typeof startSsoApp>>;
let tenant: Tenant;
before(async () => {
  env = await startSsoApp();
  tenant = await createTenant(env.app.url);
});
after(async () => {
  await env.close();
});

const owner = () => api(env.app.url, tenant.owner.token);

test('without the enterprise plan: 403 enterprise_plan_required with feature and message', async () => {
  for (const plan of ['free', 'team'] as const) {
    await setPlan(env.app, tenant.orgId, plan);
    const put = await owner().put('/v1/sso/connection', connectionBody('acme.example'));
    const verify = await owner().post('/v1/sso/verify-domain');
    for (const response of [put, verify]) {
      assert.equal(response.status, 403, response.text);
      assert.equal(response.body.error, 'enterprise_plan_required');
      assert.equal(response.body.feature, 'sso');
      assert.equal(typeof response.body.message, 'string');
    }
  }
  await setPlan(env.app, tenant.orgId, 'enterprise');
});

test('no active organization: 404 organization_not_found', async () => {
  const loner = await signUp(env.app.url, 'loner');
  for (const response of [
    await api(env.app.url, loner.token).post('/v1/sso/verify-domain'),
    await api(env.app.url, loner.token).put('/v1/sso/connection', connectionBody('x.example')),
    await api(env.app.url, loner.token).get('/v1/sso/connection'),
  ]) {
    assert.equal(response.status, 404);
    // The spec's errors table: organization_not_found carries no other fields.
    assert.deepEqual(response.body, { error: 'organization_not_found' });
  }
});

test('no connection yet: 404 sso_connection_not_found', async () => {
  for (const response of [await owner().post('/v1/sso/verify-domain'), await owner().get('/v1/sso/connection')]) {
    assert.equal(response.status, 404);
    assert.equal(response.body.error, 'sso_connection_not_found');
    assert.ok(response.body.message);
  }
});

test('invalid bodies are 400 invalid_request naming the field', async () => {
  const cases: Array<[unknown, string]> = [
    [connectionBody('not a domain'), 'domain'],
    [connectionBody('localhost'), 'domain'],
    [connectionBody('10.0.0.1'), 'domain'],
    [connectionBody('acme.example', { issuer: 'not a url' }), 'issuer'],
    [connectionBody('acme.example', { clientId: '' }), 'clientId'],
    [connectionBody('acme.example', { extra: 1 }), ''],
    [{ domain: 'acme.example' }, 'issuer'],
  ];
  for (const [body, field] of cases) {
    const response = await owner().put('/v1/sso/connection', body);
    assert.equal(response.status, 400, JSON.stringify(body));
    assert.equal(response.body.error, 'invalid_request');
    if (field)
      assert.ok(
        response.body.details.some((d: { path: string[] }) => d.path.includes(field)),
        response.text,
      );
  }
});

test('a missing record: 422 naming the record expected and that nothing was found; not verified', async () => {
  const put = await owner().put('/v1/sso/connection', connectionBody('acme.example'));
  const { recordName, recordValue } = put.body.connection.verification;
  const response = await owner().post('/v1/sso/verify-domain');
  assert.equal(response.status, 422, response.text);
  assert.equal(response.body.error, 'domain_verification_failed');
  assert.equal(response.body.recordName, recordName);
  assert.equal(response.body.expectedValue, recordValue);
  assert.deepEqual(response.body.foundValues, []);
  assert.equal(response.body.retryable, false);
  assert.ok(
    response.body.message.includes(recordName) && response.body.message.includes(recordValue),
    response.body.message,
  );
  assert.match(response.body.message, /no TXT record/);
  // a name that exists without TXT records (NODATA) is the same
  env.dns.setBehaviour(recordName, { kind: 'nodata' });
  assert.equal((await owner().post('/v1/sso/verify-domain')).status, 422);
  assert.equal((await owner().get('/v1/sso/connection')).body.connection.domainVerified, false);
});

test('a wrong record: 422 naming what was expected and what was found', async () => {
  const { connection } = (await owner().get('/v1/sso/connection')).body;
  const { recordName, recordValue } = connection.verification;
  env.dns.setTxt(recordName, [`${recordValue}x`, recordValue.toUpperCase(), ` ${recordValue}`]);
  const response = await owner().post('/v1/sso/verify-domain');
  assert.equal(response.status, 422);
  assert.equal(response.body.error, 'domain_verification_failed');
  assert.deepEqual(
    [...response.body.foundValues].sort(),
    [`${recordValue}x`, recordValue.toUpperCase(), ` ${recordValue}`].sort(),
  );
  assert.ok(response.body.message.includes(`${recordValue}x`));
  assert.equal((await owner().get('/v1/sso/connection')).body.connection.domainVerified, false);
});

test('a DNS failure (SERVFAIL) is 502 dns_lookup_failed, retryable, with Retry-After', async () => {
  const { connection } = (await owner().get('/v1/sso/connection')).body;
  env.dns.setBehaviour(connection.verification.recordName, { kind: 'servfail' });
  const response = await owner().post('/v1/sso/verify-domain');
  assert.equal(response.status, 502, response.text);
  assert.equal(response.body.error, 'dns_lookup_failed');
  assert.equal(response.body.retryable, true);
  assert.match(response.body.message, /SERVFAIL.*try again/);
  assert.equal(response.headers.get('retry-after'), '30');
  assert.equal((await owner().get('/v1/sso/connection')).body.connection.domainVerified, false);
});

test('a DNS failure that retrying cannot change (NOTIMP) is 502 dns_lookup_failed, not retryable, without Retry-After', async () => {
  const { connection } = (await owner().get('/v1/sso/connection')).body;
  env.dns.setBehaviour(connection.verification.recordName, { kind: 'notimp' });
  const response = await owner().post('/v1/sso/verify-domain');
  assert.equal(response.status, 502, response.text);
  assert.equal(response.body.error, 'dns_lookup_failed');
  assert.equal(response.body.retryable, false);
  assert.doesNotMatch(response.body.message, /try again/);
  assert.equal(response.headers.get('retry-after'), null);
  assert.equal((await owner().get('/v1/sso/connection')).body.connection.domainVerified, false);
  env.dns.clear(connection.verification.recordName);
});

test('a domain too long for its verification record name to fit in DNS: 400 invalid_request naming the limit, nothing saved', async () => {
  const before = (await owner().get('/v1/sso/connection')).body.connection;
  // 231 characters: with "_orgplane-verification." in front, 254, one over DNS's 253.
  const tooLong = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(31)}.example`;
  assert.equal(tooLong.length, 231);
  const response = await owner().put('/v1/sso/connection', connectionBody(tooLong));
  assert.equal(response.status, 400, response.text);
  assert.equal(response.body.error, 'invalid_request');
  const detail = response.body.details.find((d: { path: string[] }) => d.path.includes('domain'));
  assert.match(detail.message, /at most 230 characters/);
  assert.deepEqual((await owner().get('/v1/sso/connection')).body.connection, before);
});

test('a domain verified by another organization: 409 domain_taken', async () => {
  await setPlan(env.app, tenant.otherOrgId, 'enterprise');
  await verifiedConnection(env.app, env.dns, tenant.otherAdmin.token, 'taken.example');
  const put = await owner().put('/v1/sso/connection', connectionBody('Taken.Example'));
  assert.equal(put.status, 409);
  assert.equal(put.body.error, 'domain_taken');
});

test('a domain with URL parts (path, query, fragment, user, port, scheme) or an IP address: 400 invalid_request on domain, nothing saved', async () => {
  const before = (await owner().get('/v1/sso/connection')).body.connection;
  const cases = [
    'zz.test/evil',
    'zz.test?x',
    'zz.test\\x',
    'zz.test#x',
    'admin@zz.test',
    'u:p@zz.test',
    'zz.test:443',
    'https://zz.test',
    'zz.test/',
    'zz%2etest',
    'zz.test\tx',
    'zz.test;x',
    'a_b.zz.test',
    '[::1]',
    '0x7f.1',
    '127.0.0.1',
    'zz.test／evil',
  ];
  for (const domain of cases) {
    const response = await owner().put('/v1/sso/connection', connectionBody(domain));
    assert.equal(response.status, 400, `${JSON.stringify(domain)}: ${response.text}`);
    assert.equal(response.body.error, 'invalid_request');
    assert.deepEqual(
      response.body.details.map((d: { path: string[] }) => d.path),
      [['domain']],
      domain,
    );
  }
  assert.deepEqual((await owner().get('/v1/sso/connection')).body.connection, before);
});

test('a domain that is itself a public suffix (co.uk, github.io): 400 invalid_request saying so; a name under one is accepted', async () => {
  const before = (await owner().get('/v1/sso/connection')).body.connection;
  for (const domain of ['co.uk', 'CO.UK.', 'github.io', 'com.au', 'blogspot.com']) {
    const response = await owner().put('/v1/sso/connection', connectionBody(domain));
    assert.equal(response.status, 400, `${domain}: ${response.text}`);
    assert.equal(response.body.error, 'invalid_request');
    const [detail] = response.body.details;
    assert.deepEqual(detail.path, ['domain']);
    assert.match(detail.message, /public suffix/, domain);
  }
  assert.deepEqual((await owner().get('/v1/sso/connection')).body.connection, before);
  for (const [domain, stored] of [
    ['acme.co.uk', 'acme.co.uk'],
    ['acme.github.io', 'acme.github.io'],
  ]) {
    const response = await owner().put('/v1/sso/connection', connectionBody(domain!));
    assert.equal(response.status, 200, `${domain}: ${response.text}`);
    assert.equal(response.body.connection.domain, stored);
  }
});
