import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp } from '../support/app.ts';
import { createTenant, type Tenant } from '../support/fixtures.ts';
import { api } from '../support/http.ts';

describe('GET /v1/org (spec operation 7): happy path', () => {
  let app: TestApp;
  let tenant: Tenant;
  before(async () => {
    app = await startTestApp();
    tenant = await createTenant(app.url);
  });
  after(() => app.close());

  it('returns the organization, its owner, the caller as member and the caller\'s teams', async () => {
    const team = await api(app.url, tenant.owner.token).post(`/v1/orgs/${tenant.orgId}/teams`, { name: 'Platform' });
    assert.equal(team.status, 201, team.text);
    const added = await api(app.url, tenant.owner.token).post(`/v1/orgs/${tenant.orgId}/teams/${team.body.team.id}/members`, { memberId: tenant.member.memberId });
    assert.equal(added.status, 204, added.text);

    const response = await api(app.url, tenant.member.token).get('/v1/org');
    assert.equal(response.status, 200, response.text);
    const { organization, currentMember, currentMemberTeams } = response.body;
    assert.equal(organization.id, tenant.orgId);
    assert.equal(organization.name, 'Acme');
    assert.equal(organization.plan, 'free');
    assert.deepEqual(organization.owner, {
      memberId: tenant.owner.memberId,
      userId: tenant.owner.userId,
      name: tenant.owner.name,
      email: tenant.owner.email,
      image: '',
    });
    assert.equal(currentMember.id, tenant.member.memberId);
    assert.equal(currentMember.userId, tenant.member.userId);
    assert.equal(currentMember.role, 'member');
    assert.deepEqual(currentMemberTeams.map((t: { id: string; name: string }) => [t.id, t.name]), [[team.body.team.id, 'Platform']]);
  });

  it('follows the session\'s active organization when it changes', async () => {
    const client = api(app.url, tenant.admin.token);
    const second = await client.post('/v1/orgs', { name: 'Second' });
    assert.equal(second.status, 201);
    assert.equal((await client.get('/v1/org')).body.organization.id, second.body.organization.id);
    assert.equal((await client.get('/v1/org')).body.currentMember.role, 'owner');
    const switched = await client.put('/v1/session/active-organization', { organizationId: tenant.orgId });
    assert.equal(switched.status, 200);
    const back = await client.get('/v1/org');
    assert.equal(back.body.organization.id, tenant.orgId);
    assert.equal(back.body.currentMember.role, 'admin');
    assert.deepEqual(back.body.currentMemberTeams, []);
  });
});
