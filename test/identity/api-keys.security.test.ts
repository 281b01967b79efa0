import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { useTenantApp } from '../support/harness.ts';

describe('API keys: security', () => {
  const harness = useTenantApp();

  it('an API key works only for its own organization and is not a session', async () => {
    const created = await harness
      .as(harness.tenant.owner.token)
      .post(`/v1/orgs/${harness.tenant.orgId}/api-keys`, { name: 'k', role: 'admin' });
    const key = created.body.key;
    const elsewhere = await harness
      .as()
      .get(`/v1/orgs/${harness.tenant.otherOrgId}/members`, { headers: { 'x-api-key': key } });
    assert.equal(elsewhere.status, 404);
    const asBearer = await harness.as(key).get(`/v1/orgs/${harness.tenant.orgId}/members`);
    assert.equal(asBearer.status, 401);
    const notAccepted = await harness.as().get('/v1/me', { headers: { 'x-api-key': key } });
    assert.equal(notAccepted.status, 401);
  });
});
