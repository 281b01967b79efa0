// SSO connection and domain verification against a real DNS server on loopback.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createTenant, type Tenant } from '../support/fixtures.ts';
import { api } from '../support/http.ts';
import { connectionBody, setPlan, startSsoApp } from './helpers.ts';

let env: Awaited<ReturnType<typeof startSsoApp>>;
let tenant: Tenant;
before(async () => {
  env = await startSsoApp();
  tenant = await createTenant(env.app.url);
  await setPlan(env.app, tenant.orgId, 'enterprise');
});
after(async () => {
  await env.close();
});

const owner = () => api(env.app.url, tenant.owner.token);
const admin = () => api(env.app.url, tenant.admin.token);

test('PUT creates the connection with a normalized domain and the record to publish; the secret is never returned', async () => {
  const response = await owner().put(
    '/v1/sso/connection',
    connectionBody(' Acme-Corp.EXAMPLE. ', { clientSecret: 'super-secret-value' }),
  );
  assert.equal(response.status, 200, response.text);
  const { connection } = response.body;
  assert.match(connection.id, /^sso_[0-9a-z]{26}$/);
  assert.equal(connection.domain, 'acme-corp.example');
  assert.equal(connection.domainVerified, false);
  assert.equal(connection.domainVerifiedAt, null);
  assert.equal(connection.clientSecretSet, true);
  assert.equal(connection.verification.recordName, '_orgplane-verification.acme-corp.example');
  assert.match(connection.verification.recordValue, /^orgplane-domain-verification=[0-9a-f]{32}$/);
  assert.ok(!response.text.includes('super-secret-value'));
  const stored = await env.app.db.query('SELECT client_secret_sealed FROM sso_connections WHERE organization_id = $1', [
    tenant.orgId,
  ]);
  assert.match(stored.rows[0].client_secret_sealed, /^v\d+:/);
  assert.ok(!stored.rows[0].client_secret_sealed.includes('super-secret-value'));
  const got = await admin().get('/v1/sso/connection');
  assert.equal(got.status, 200);
  assert.deepEqual(got.body.connection, connection);
});

test('verify-domain finds the TXT record and marks the domain verified with the time', async () => {
  const { body } = await owner().get('/v1/sso/connection');
  const { recordName, recordValue } = body.connection.verification;
  env.dns.setTxt(recordName, ['v=spf1 -all', recordValue, 'google-site-verification=abc']);
  const response = await admin().post('/v1/sso/verify-domain');
  assert.equal(response.status, 200, response.text);
  assert.equal(response.body.verified, true);
  assert.equal(response.body.domain, 'acme-corp.example');
  assert.match(response.body.domainVerifiedAt, /Z$/);
  assert.equal(response.body.connection.domainVerified, true);
  assert.equal(response.body.connection.domainVerifiedAt, response.body.domainVerifiedAt);
  assert.ok(env.dns.queries.includes(`TXT ${recordName}`));
  // verifying again keeps the original time
  const again = await owner().post('/v1/sso/verify-domain');
  assert.equal(again.status, 200);
  assert.equal(again.body.domainVerifiedAt, response.body.domainVerifiedAt);
});

test('re-saving the same domain keeps verification and the stored secret', async () => {
  const response = await owner().put(
    '/v1/sso/connection',
    connectionBody('acme-corp.example', { clientId: 'client-456' }),
  );
  assert.equal(response.status, 200);
  assert.equal(response.body.connection.domainVerified, true);
  assert.equal(response.body.connection.clientId, 'client-456');
  assert.equal(response.body.connection.clientSecretSet, true);
});

test('changing the domain resets verification and issues a new record value', async () => {
  const before = (await owner().get('/v1/sso/connection')).body.connection;
  const response = await owner().put('/v1/sso/connection', connectionBody('Bücher.Example'));
  assert.equal(response.status, 200);
  const after = response.body.connection;
  assert.equal(after.domain, 'xn--bcher-kva.example');
  assert.equal(after.domainVerified, false);
  assert.equal(after.verification.recordName, '_orgplane-verification.xn--bcher-kva.example');
  assert.notEqual(after.verification.recordValue, before.verification.recordValue);
  assert.equal(after.id, before.id);
});

test('a record published as several strings is joined before matching (internationalized domain)', async () => {
  const { connection } = (await owner().get('/v1/sso/connection')).body;
  const value: string = connection.verification.recordValue;
  env.dns.setTxt(connection.verification.recordName, [[value.slice(0, 10), value.slice(10, 30), value.slice(30)]]);
  const response = await owner().post('/v1/sso/verify-domain');
  assert.equal(response.status, 200, response.text);
  assert.equal(response.body.domain, 'xn--bcher-kva.example');
});

test('the OpenAPI document states the success body and the failure statuses', async () => {
  const { body } = await api(env.app.url).get('/openapi.json');
  const operation = body.paths['/v1/sso/verify-domain'].post;
  assert.equal(operation.operationId, 'verifySsoDomain');
  for (const status of ['200', '401', '403', '404', '422', '502']) assert.ok(operation.responses[status], status);
});

test('the longest domain whose record fits in DNS (230 characters) is saved and verified through a real lookup', async () => {
  const longest = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(30)}.example`;
  assert.equal(longest.length, 230);
  const fresh = await createTenant(env.app.url);
  await setPlan(env.app, fresh.orgId, 'enterprise');
  const put = await api(env.app.url, fresh.owner.token).put('/v1/sso/connection', connectionBody(longest));
  assert.equal(put.status, 200, put.text);
  const { recordName, recordValue } = put.body.connection.verification;
  assert.equal(recordName.length, 253);
  env.dns.setTxt(recordName, [recordValue]);
  const verified = await api(env.app.url, fresh.owner.token).post('/v1/sso/verify-domain');
  assert.equal(verified.status, 200, verified.text);
  assert.equal(verified.body.connection.domainVerified, true);
});

test("an organization's first PUTs sent at once all succeed and leave one connection", async () => {
  const fresh = await createTenant(env.app.url);
  await setPlan(env.app, fresh.orgId, 'enterprise');
  const domains = [
    'first.example',
    'second.example',
    'third.example',
    'fourth.example',
    'fifth.example',
    'sixth.example',
  ];
  const responses = await Promise.all(
    domains.map((domain, i) =>
      api(env.app.url, (i % 2 === 0 ? fresh.owner : fresh.admin).token).put(
        '/v1/sso/connection',
        connectionBody(domain),
      ),
    ),
  );
  for (const response of responses) assert.equal(response.status, 200, response.text);
  // One connection: every answer names the same id, and what GET shows is one of the domains sent.
  assert.equal(new Set(responses.map((response) => response.body.connection.id)).size, 1);
  const { connection } = (await api(env.app.url, fresh.owner.token).get('/v1/sso/connection')).body;
  assert.ok(domains.includes(connection.domain), connection.domain);
  const rows = await env.app.db.query('SELECT count(*)::int AS n FROM sso_connections WHERE organization_id = $1', [
    fresh.orgId,
  ]);
  assert.equal(rows.rows[0].n, 1);
});
