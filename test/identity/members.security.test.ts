import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createTenant } from '../support/fixtures.ts';
import { useTenantApp } from '../support/harness.ts';

describe('members: security', () => {
  const harness = useTenantApp();

  it('a member id from another organization is not found here', async () => {
    const response = await harness
      .as(harness.tenant.owner.token)
      .patch(`/v1/orgs/${harness.tenant.orgId}/members/${harness.tenant.otherAdmin.memberId}`, { role: 'member' });
    assert.equal(response.status, 404);
    assert.equal(response.body.error, 'member_not_found');
  });

  it("a removed member's session no longer reaches the organization", async () => {
    const local = await createTenant(harness.app.url);
    await harness.as(local.owner.token).delete(`/v1/orgs/${local.orgId}/members/${local.member.memberId}`);
    assert.equal((await harness.as(local.member.token).get(`/v1/orgs/${local.orgId}/members`)).status, 404);
    assert.equal((await harness.as(local.member.token).get('/v1/org')).body.error, 'organization_not_found');
  });
});
