// SSO: who may configure and verify, and organizations staying apart.
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
  await setPlan(env.app, tenant.otherOrgId, 'enterprise');
});
after(async () => {
  await env.close();
});

test('anonymous and forged sessions: 401 on every SSO route', async () => {
  for (const token of [undefined, 'ops_forged']) {
    const client = api(env.app.url, token);
    for (const response of [
      await client.post('/v1/sso/verify-domain'),
      await client.get('/v1/sso/connection'),
      await client.put('/v1/sso/connection', connectionBody('a.example')),
    ]) {
      assert.equal(response.status, 401);
      assert.equal(response.body.error, 'unauthorized');
    }
  }
});

test('a member (not owner or admin) gets 403 forbidden and changes nothing', async () => {
  const client = api(env.app.url, tenant.member.token);
  for (const response of [
    await client.post('/v1/sso/verify-domain'),
    await client.get('/v1/sso/connection'),
    await client.put('/v1/sso/connection', connectionBody('member.example')),
  ]) {
    assert.equal(response.status, 403);
    assert.equal(response.body.error, 'forbidden');
  }
  const { rows } = await env.app.db.query('SELECT count(*)::int AS n FROM sso_connections WHERE organization_id = $1', [
    tenant.orgId,
  ]);
  assert.equal(rows[0].n, 0);
});

test("another organization's admin only ever sees and verifies their own organization", async () => {
  const ours = await api(env.app.url, tenant.owner.token).put(
    '/v1/sso/connection',
    connectionBody('ours.example', { clientSecret: 's3cret-ours' }),
  );
  assert.equal(ours.status, 200);
  const theirs = await api(env.app.url, tenant.otherAdmin.token).get('/v1/sso/connection');
  assert.equal(theirs.status, 404);
  assert.equal(theirs.body.error, 'sso_connection_not_found');
  // Publishing our record does not let them verify anything: they have no connection.
  env.dns.setTxt(ours.body.connection.verification.recordName, [ours.body.connection.verification.recordValue]);
  assert.equal((await api(env.app.url, tenant.otherAdmin.token).post('/v1/sso/verify-domain')).status, 404);
  // Claiming our domain with their own connection gets their own token, which is not what is published.
  const claim = await api(env.app.url, tenant.otherAdmin.token).put(
    '/v1/sso/connection',
    connectionBody('ours.example'),
  );
  assert.equal(claim.status, 200);
  assert.notEqual(claim.body.connection.verification.recordValue, ours.body.connection.verification.recordValue);
  const attempt = await api(env.app.url, tenant.otherAdmin.token).post('/v1/sso/verify-domain');
  assert.equal(attempt.status, 422);
  // We verify; they still cannot.
  assert.equal((await api(env.app.url, tenant.admin.token).post('/v1/sso/verify-domain')).status, 200);
  const late = await api(env.app.url, tenant.otherAdmin.token).post('/v1/sso/verify-domain');
  assert.equal(late.status, 422);
});

test('the client secret appears in no response and no log line', async () => {
  const secret = `client-secret-${'z'.repeat(20)}`;
  const put = await api(env.app.url, tenant.owner.token).put(
    '/v1/sso/connection',
    connectionBody('ours.example', { clientSecret: secret }),
  );
  assert.equal(put.status, 200);
  const get = await api(env.app.url, tenant.owner.token).get('/v1/sso/connection');
  assert.ok(!put.text.includes(secret) && !get.text.includes(secret));
  assert.ok(!env.app.logText().includes(secret));
});
