// SSO verification when the DNS server never answers: a retryable failure, not a verdict on the record.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createTenant, type Tenant } from '../support/fixtures.ts';
import { api } from '../support/http.ts';
import { connectionBody, setPlan, startSsoApp } from './helpers.ts';

let env: Awaited<ReturnType<typeof startSsoApp>>;
let tenant: Tenant;
before(async () => {
  // A short DNS_TIMEOUT_MS keeps the test quick; the behaviour is the same with the default.
  env = await startSsoApp({ dnsTimeoutMs: 200 });
  tenant = await createTenant(env.app.url);
  await setPlan(env.app, tenant.orgId, 'enterprise');
});
after(async () => {
  await env.close();
});

test('a DNS timeout is 502 dns_lookup_failed, retryable, and leaves the domain unverified', async () => {
  const put = await api(env.app.url, tenant.owner.token).put('/v1/sso/connection', connectionBody('slow.example'));
  env.dns.setBehaviour(put.body.connection.verification.recordName, { kind: 'silent' });
  const response = await api(env.app.url, tenant.owner.token).post('/v1/sso/verify-domain');
  assert.equal(response.status, 502, response.text);
  assert.equal(response.body.error, 'dns_lookup_failed');
  assert.equal(response.body.retryable, true);
  assert.match(response.body.message, /did not answer in time.*try again/);
  assert.equal(response.headers.get('retry-after'), '30');
  assert.equal(
    (await api(env.app.url, tenant.owner.token).get('/v1/sso/connection')).body.connection.domainVerified,
    false,
  );
  // once the server answers, the same request succeeds
  env.dns.setTxt(put.body.connection.verification.recordName, [put.body.connection.verification.recordValue]);
  assert.equal((await api(env.app.url, tenant.owner.token).post('/v1/sso/verify-domain')).status, 200);
});
