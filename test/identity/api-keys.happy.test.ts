import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { useTenantApp } from '../support/harness.ts';
import { checkTenantRouting } from '../db/tenant-routing.ts';

describe('API keys: happy paths', () => {
  const harness = useTenantApp();
  const tenantRouting = checkTenantRouting();

  it('API keys: the key is shown once, authenticates as x-api-key, and stops working when revoked', async () => {
    const owner = harness.as(harness.tenant.owner.token);
    const created = await owner.post(`/v1/orgs/${harness.tenant.orgId}/api-keys`, { name: 'ci', role: 'member' });
    assert.equal(created.status, 201, created.text);
    const key = created.body.key as string;
    assert.match(key, /^opk_/);
    const listed = await owner.get(`/v1/orgs/${harness.tenant.orgId}/api-keys`);
    assert.equal(listed.status, 200);
    assert.ok(!listed.text.includes(key), 'the key must not be listed again');
    const viaKey = await harness
      .as()
      .get(`/v1/orgs/${harness.tenant.orgId}/members`, { headers: { 'x-api-key': key } });
    assert.equal(viaKey.status, 200, viaKey.text);
    assert.equal(
      (await owner.delete(`/v1/orgs/${harness.tenant.orgId}/api-keys/${created.body.apiKey.id}`)).status,
      204,
    );
    const revoked = await harness
      .as()
      .get(`/v1/orgs/${harness.tenant.orgId}/members`, { headers: { 'x-api-key': key } });
    assert.equal(revoked.status, 401);
  });

  // These flows' statements stay on one tenant (test/db/tenant-routing.ts): on a database distributed
  // by tenant, each runs on one node.
  it('their statements stay on one tenant', async () => {
    await tenantRouting.assertStatementsStayOnOneTenant(harness.app.db, 10);
  });
});
