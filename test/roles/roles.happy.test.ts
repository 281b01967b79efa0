import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PERMISSION_KEYS } from '../../src/platform/permissions.ts';
import { checkTenantRouting } from '../db/tenant-routing.ts';
import { useTenantApp } from '../support/harness.ts';

describe('roles: happy paths', () => {
  const tenantRouting = checkTenantRouting();
  const t = useTenantApp();
  const orgPath = () => `/v1/orgs/${t.tenant.orgId}`;
  const keysOf = (body: { permissions: { key: string }[] }) => body.permissions.map((entry) => entry.key);

  it('the catalog lists every key, its sensitivity and the built-in roles that hold it', async () => {
    const catalog = await t.as(t.tenant.member.token).get('/v1/permissions');
    assert.equal(catalog.status, 200, catalog.text);
    assert.deepEqual(keysOf(catalog.body), PERMISSION_KEYS);
    const rolesManage = catalog.body.permissions.find((entry: { key: string }) => entry.key === 'roles.manage');
    assert.deepEqual(rolesManage.defaultRoles, []);
    assert.equal(rolesManage.sensitive, true);
    const use = catalog.body.permissions.find((entry: { key: string }) => entry.key === 'mcp_connections.use');
    assert.deepEqual(use.defaultRoles, ['admin', 'member']);
  });

  it('the built-in roles are listed read-only, with their keys and member counts', async () => {
    const listed = await t.as(t.tenant.member.token).get(`${orgPath()}/roles`);
    assert.equal(listed.status, 200, listed.text);
    const [owner, admin, member] = listed.body.roles;
    assert.deepEqual([owner.id, admin.id, member.id].map(String), ['owner', 'admin', 'member']);
    assert.ok(listed.body.roles.slice(0, 3).every((role: { builtIn: boolean }) => role.builtIn));
    assert.deepEqual(owner.permissions, [...PERMISSION_KEYS].sort());
    assert.ok(!admin.permissions.includes('roles.manage'));
    assert.equal(owner.memberCount, 1);
    assert.equal(member.memberCount, 1);
  });

  it('a custom role given to a member grants its keys at once, and a change of its keys counts on the next request', async () => {
    const owner = t.as(t.tenant.owner.token);
    const member = t.as(t.tenant.member.token);
    // A help desk that invites and removes people; it holds what members hold too, or it could not
    // invite anyone as a member (nobody gives a key they lack).
    const created = await owner.post(`${orgPath()}/roles`, {
      name: 'Help desk',
      description: 'Invites and removes people',
      permissions: [
        'members.invite',
        'members.remove',
        'mcp_connections.use',
        'install_links.create',
        'members.invite',
      ],
    });
    assert.equal(created.status, 201, created.text);
    const role = created.body.role;
    assert.match(role.id, /^role_/);
    assert.deepEqual(role.permissions, [
      'install_links.create',
      'mcp_connections.use',
      'members.invite',
      'members.remove',
    ]);
    assert.equal(role.builtIn, false);

    assert.equal((await member.get(`${orgPath()}/invitations`)).status, 403);
    const assigned = await owner.patch(`${orgPath()}/members/${t.tenant.member.memberId}`, { role: role.id });
    assert.equal(assigned.status, 200, assigned.text);
    assert.equal(assigned.body.member.role, role.id);

    assert.equal((await member.get(`${orgPath()}/invitations`)).status, 200);
    const invited = await member.post(`${orgPath()}/invitations`, { email: 'helped@example.test', role: 'member' });
    assert.equal(invited.status, 201, invited.text);
    // What the role does not grant stays refused, naming the key.
    const sso = await member.get('/v1/sso/connection');
    assert.equal(sso.status, 403);
    assert.equal(sso.body.missingPermission, 'sso.manage');

    const mine = await member.get('/v1/me/permissions');
    assert.equal(mine.status, 200, mine.text);
    const invite = mine.body.permissions.find((entry: { key: string }) => entry.key === 'members.invite');
    assert.deepEqual(invite.grantedBy, [{ type: 'role', id: role.id, name: 'Help desk' }]);
    assert.ok(!keysOf(mine.body).includes('audit.view'), 'a custom role holds only its own keys');

    const counted = await owner.get(`${orgPath()}/roles`);
    assert.equal(counted.body.roles.find((entry: { id: string }) => entry.id === role.id).memberCount, 1);

    const narrowed = await owner.patch(`${orgPath()}/roles/${role.id}`, { permissions: ['members.remove'] });
    assert.equal(narrowed.status, 200, narrowed.text);
    const refused = await member.get(`${orgPath()}/invitations`);
    assert.equal(refused.status, 403);
    assert.equal(refused.body.missingPermission, 'members.invite');

    const inUse = await owner.delete(`${orgPath()}/roles/${role.id}`);
    assert.equal(inUse.status, 409, inUse.text);
    assert.equal(inUse.body.error, 'role_in_use');
    assert.equal(inUse.body.usedBy.members, 1);
    assert.equal(
      (await owner.patch(`${orgPath()}/members/${t.tenant.member.memberId}`, { role: 'member' })).status,
      200,
    );
    assert.equal((await owner.delete(`${orgPath()}/roles/${role.id}`)).status, 204);
    const after = await owner.get(`${orgPath()}/roles`);
    assert.ok(!after.body.roles.some((entry: { id: string }) => entry.id === role.id));
  });

  it("a team's role adds its keys to the team's members, and leaving the team takes them away", async () => {
    const owner = t.as(t.tenant.owner.token);
    const member = t.as(t.tenant.member.token);
    const auditors = await owner.post(`${orgPath()}/roles`, { name: 'Auditors', permissions: ['audit.view'] });
    assert.equal(auditors.status, 201, auditors.text);
    const team = await owner.post(`${orgPath()}/teams`, { name: 'Security' });
    const teamId = team.body.team.id;
    assert.equal(
      (await owner.post(`${orgPath()}/teams/${teamId}/members`, { memberId: t.tenant.member.memberId })).status,
      204,
    );
    assert.equal((await member.get(`${orgPath()}/audit-events`)).status, 403);

    const given = await owner.patch(`${orgPath()}/teams/${teamId}`, { roleId: auditors.body.role.id });
    assert.equal(given.status, 200, given.text);
    assert.equal(given.body.team.roleId, auditors.body.role.id);
    assert.equal((await member.get(`${orgPath()}/audit-events`)).status, 200);

    const why = await owner.get(`${orgPath()}/members/${t.tenant.member.memberId}/permissions`);
    assert.equal(why.status, 200, why.text);
    const auditView = why.body.permissions.find((entry: { key: string }) => entry.key === 'audit.view');
    assert.deepEqual(auditView.grantedBy, [{ type: 'team', id: teamId, name: 'Security' }]);
    const use = why.body.permissions.find((entry: { key: string }) => entry.key === 'mcp_connections.use');
    assert.deepEqual(use.grantedBy, [{ type: 'role', id: 'member', name: 'member' }]);

    assert.equal((await owner.delete(`${orgPath()}/teams/${teamId}/members/${t.tenant.member.memberId}`)).status, 204);
    assert.equal((await member.get(`${orgPath()}/audit-events`)).status, 403);

    // A team given a built-in role: its members hold that role's keys.
    assert.equal(
      (await owner.post(`${orgPath()}/teams/${teamId}/members`, { memberId: t.tenant.member.memberId })).status,
      204,
    );
    assert.equal((await owner.patch(`${orgPath()}/teams/${teamId}`, { roleId: 'admin' })).status, 200);
    assert.equal((await member.get(`${orgPath()}/api-keys`)).status, 200);
    assert.equal((await owner.delete(`${orgPath()}/teams/${teamId}`)).status, 204);
    assert.equal((await member.get(`${orgPath()}/api-keys`)).status, 403);
  });

  it('an API key with a custom role holds exactly its keys', async () => {
    const owner = t.as(t.tenant.owner.token);
    const listers = await owner.post(`${orgPath()}/roles`, { name: 'Listers', permissions: ['audit.view'] });
    const created = await owner.post(`${orgPath()}/api-keys`, { name: 'auditor', role: listers.body.role.id });
    assert.equal(created.status, 201, created.text);
    const mine = await t.as().get('/v1/me/permissions', { headers: { 'x-api-key': created.body.key } });
    assert.equal(mine.status, 200, mine.text);
    assert.deepEqual(keysOf(mine.body), ['audit.view']);
  });

  it('every change of a role is recorded with what it was before and after', async () => {
    const owner = t.as(t.tenant.owner.token);
    const created = await owner.post(`${orgPath()}/roles`, { name: 'Recorded', permissions: ['audit.view'] });
    await owner.patch(`${orgPath()}/roles/${created.body.role.id}`, { name: 'Recorded again' });
    await owner.delete(`${orgPath()}/roles/${created.body.role.id}`);
    const events = await owner.get(`${orgPath()}/audit-events?target=${created.body.role.id}`);
    assert.equal(events.status, 200, events.text);
    const byAction = new Map(events.body.events.map((event: { action: string }) => [event.action, event]));
    assert.deepEqual([...byAction.keys()].sort(), ['role.created', 'role.deleted', 'role.updated']);
    const updated = byAction.get('role.updated') as { changes: Record<string, { name: string }> };
    assert.equal(updated.changes.before!.name, 'Recorded');
    assert.equal(updated.changes.after!.name, 'Recorded again');
  });

  it('their statements stay on one tenant', async () => {
    await tenantRouting.assertStatementsStayOnOneTenant(t.app.db, 10);
  });
});
