import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startTestApp } from '../support/app.ts';
import { createTenant, signUp } from '../support/fixtures.ts';
import { api } from '../support/http.ts';
import { membershipOf, usersOf, setPlanAsOperator } from '../support/identity.ts';
import { useTenantApp } from '../support/harness.ts';

describe('organizations: happy paths', () => {
  const harness = useTenantApp();

  it('GET /v1/org shows an owner whose address strict email syntax would refuse (an account provisioned by SCIM)', async () => {
    const local = await createTenant(harness.app.url);
    // How the SCIM server adds a person: an account without a password, and a membership.
    const member = await harness.app.db.transaction(async (tx) => {
      const user = await usersOf(harness.app).ensureUser(tx, { email: 'jöhn+ops@corp.example', name: 'Jöhn' });
      return membershipOf(harness.app).ensureMember(tx, local.orgId, user.id, 'member');
    });
    const transfer = await harness
      .as(local.owner.token)
      .post(`/v1/orgs/${local.orgId}/transfer-ownership`, { memberId: member.id });
    assert.equal(transfer.status, 200, transfer.text);
    const org = await harness.as(local.admin.token).get('/v1/org');
    assert.equal(org.status, 200, org.text);
    assert.equal(org.body.organization.owner.email, 'jöhn+ops@corp.example');
  });

  it('an instance administrator sets plans by API; the CLI path uses the same rule', async () => {
    const fresh = await startTestApp();
    try {
      const root = await api(fresh.url).post('/v1/bootstrap', {
        email: 'r@example.test',
        password: 'long enough pw',
        name: 'R',
        organizationName: 'Root org',
      });
      const other = await signUp(fresh.url, 'planned');
      const orgId = (await api(fresh.url, other.token).post('/v1/orgs', { name: 'Planned' })).body.organization.id;
      const set = await api(fresh.url, root.body.sessionToken).put(`/v1/admin/orgs/${orgId}/plan`, {
        plan: 'enterprise',
      });
      assert.equal(set.status, 200, set.text);
      assert.equal(set.body.organization.plan, 'enterprise');
      assert.equal((await api(fresh.url, other.token).get('/v1/org')).body.organization.plan, 'enterprise');
      const viaService = await setPlanAsOperator(fresh, orgId, 'team');
      assert.equal(viaService.plan, 'team');
    } finally {
      await fresh.close();
    }
  });
});
