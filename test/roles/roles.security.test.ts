import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { signUp, addMember } from '../support/fixtures.ts';
import { useTenantApp } from '../support/harness.ts';
import { ageSession, reauthBody } from '../identity/reauth-support.ts';

describe('roles: security', () => {
  const t = useTenantApp();
  const orgPath = () => `/v1/orgs/${t.tenant.orgId}`;

  it('anonymous callers get 401; a member or an admin without roles.manage gets 403 naming it', async () => {
    assert.equal((await t.as().get('/v1/permissions')).status, 401);
    assert.equal((await t.as().get(`${orgPath()}/roles`)).status, 401);
    assert.equal((await t.as().post(`${orgPath()}/roles`, { name: 'x', permissions: [] })).status, 401);
    for (const token of [t.tenant.member.token, t.tenant.admin.token]) {
      const refused = await t.as(token).post(`${orgPath()}/roles`, { name: 'Mine', permissions: [] });
      assert.equal(refused.status, 403, refused.text);
      assert.equal(refused.body.missingPermission, 'roles.manage');
    }
  });

  it("another organization's owner learns nothing: its roles and members are not found", async () => {
    const role = await t.as(t.tenant.owner.token).post(`${orgPath()}/roles`, { name: 'Private', permissions: [] });
    const other = t.as(t.tenant.otherAdmin.token);
    assert.equal((await other.get(`${orgPath()}/roles`)).status, 404);
    assert.equal((await other.patch(`${orgPath()}/roles/${role.body.role.id}`, { name: 'Taken' })).status, 404);
    assert.equal((await other.delete(`${orgPath()}/roles/${role.body.role.id}`)).status, 404);
    assert.equal((await other.get(`${orgPath()}/members/${t.tenant.member.memberId}/permissions`)).status, 404);
    // A role id of organization A named in organization B is B's unknown role.
    const crossed = await other.patch(`/v1/orgs/${t.tenant.otherOrgId}/members/${t.tenant.otherAdmin.memberId}`, {
      role: role.body.role.id,
    });
    assert.ok([404, 409].includes(crossed.status), crossed.text);
    const keyed = await other.post(`/v1/orgs/${t.tenant.otherOrgId}/api-keys`, { name: 'k', role: role.body.role.id });
    assert.equal(keyed.status, 404, keyed.text);
    assert.equal(keyed.body.error, 'role_not_found');
  });

  it('nobody gives what they do not hold: roles, members, invitations, API keys and teams', async () => {
    const owner = t.as(t.tenant.owner.token);
    // A delegate who may manage roles and members' roles, invite and manage API keys, but holds no SSO key.
    const delegated = await owner.post(`${orgPath()}/roles`, {
      name: 'Delegate',
      permissions: [
        'roles.manage',
        'members.update_role',
        'members.invite',
        'api_keys.manage',
        'teams.manage',
        'audit.view',
        'mcp_connections.use',
        'install_links.create',
      ],
    });
    const delegate = await signUp(t.app.url, 'delegate');
    await addMember(t.app.url, t.tenant.owner, t.tenant.orgId, delegate, 'member');
    assert.equal(
      (await owner.patch(`${orgPath()}/members/${delegate.memberId}`, { role: delegated.body.role.id })).status,
      200,
    );
    const as = t.as(delegate.token);
    const expectNotHeld = (response: { status: number; body: any; text: string }, key: string) => {
      assert.equal(response.status, 403, response.text);
      assert.equal(response.body.error, 'permission_not_held');
      assert.ok(response.body.missingPermissions.includes(key), response.text);
    };
    expectNotHeld(await as.post(`${orgPath()}/roles`, { name: 'Escalate', permissions: ['sso.manage'] }), 'sso.manage');
    const fine = await as.post(`${orgPath()}/roles`, { name: 'Readers', permissions: ['audit.view'] });
    assert.equal(fine.status, 201, fine.text);
    expectNotHeld(
      await as.patch(`${orgPath()}/roles/${fine.body.role.id}`, { permissions: ['scim.manage'] }),
      'scim.manage',
    );
    // The admin role holds keys the delegate lacks: neither given to a member, an invitation nor a key.
    expectNotHeld(await as.patch(`${orgPath()}/members/${t.tenant.member.memberId}`, { role: 'admin' }), 'sso.manage');
    expectNotHeld(
      await as.post(`${orgPath()}/invitations`, { email: 'boss@example.test', role: 'admin' }),
      'sso.manage',
    );
    expectNotHeld(await as.post(`${orgPath()}/api-keys`, { name: 'boss', role: 'admin' }), 'sso.manage');
    // Nor taken away from an admin, whose role the delegate could not have given.
    expectNotHeld(await as.patch(`${orgPath()}/members/${t.tenant.admin.memberId}`, { role: 'member' }), 'sso.manage');
    // A role more powerful than the delegate is not theirs to change or delete.
    const strong = await owner.post(`${orgPath()}/roles`, { name: 'Strong', permissions: ['sso.manage'] });
    expectNotHeld(await as.patch(`${orgPath()}/roles/${strong.body.role.id}`, { name: 'Weak' }), 'sso.manage');
    expectNotHeld(await as.delete(`${orgPath()}/roles/${strong.body.role.id}`), 'sso.manage');
    // A team's role: the delegate holds teams.manage and roles.manage, but not the admin role's keys.
    const team = await owner.post(`${orgPath()}/teams`, { name: 'Escalation' });
    expectNotHeld(await as.patch(`${orgPath()}/teams/${team.body.team.id}`, { roleId: 'admin' }), 'sso.manage');
    const roles = await owner.get(`${orgPath()}/roles`);
    assert.equal(roles.body.roles.find((role: { id: string }) => role.id === strong.body.role.id).name, 'Strong');
  });

  it("teams.manage alone does not set a team's role", async () => {
    const owner = t.as(t.tenant.owner.token);
    const team = await owner.post(`${orgPath()}/teams`, { name: 'Admins only' });
    const refused = await t
      .as(t.tenant.admin.token)
      .patch(`${orgPath()}/teams/${team.body.team.id}`, { roleId: 'member' });
    assert.equal(refused.status, 403, refused.text);
    assert.equal(refused.body.missingPermission, 'roles.manage');
    // Renaming is teams.manage's.
    const renamed = await t
      .as(t.tenant.admin.token)
      .patch(`${orgPath()}/teams/${team.body.team.id}`, { name: 'Renamed' });
    assert.equal(renamed.status, 200, renamed.text);
  });

  it("another member's keys are shown to holders of members.update_role only; one's own always", async () => {
    const member = t.as(t.tenant.member.token);
    assert.equal((await member.get(`${orgPath()}/members/${t.tenant.member.memberId}/permissions`)).status, 200);
    const refused = await member.get(`${orgPath()}/members/${t.tenant.admin.memberId}/permissions`);
    assert.equal(refused.status, 403);
    assert.equal(refused.body.missingPermission, 'members.update_role');
  });

  it('changing roles needs a recent authentication; an API key is never enough', async () => {
    const owner = t.as(t.tenant.owner.token);
    const role = await owner.post(`${orgPath()}/roles`, { name: 'Stale', permissions: [] });
    await ageSession(t.app, t.tenant.owner.token);
    for (const response of [
      await owner.post(`${orgPath()}/roles`, { name: 'Later', permissions: [] }),
      await owner.patch(`${orgPath()}/roles/${role.body.role.id}`, { name: 'Later' }),
      await owner.delete(`${orgPath()}/roles/${role.body.role.id}`),
    ]) {
      assert.equal(response.status, 403, response.text);
      assert.deepEqual({ error: response.body.error, reason: response.body.reason }, reauthBody);
    }
    const roles = await t.as(t.tenant.admin.token).get(`${orgPath()}/roles`);
    assert.ok(roles.body.roles.some((entry: { name: string }) => entry.name === 'Stale'));
  });
});
