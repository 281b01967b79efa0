import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { useTenantApp } from '../support/harness.ts';

describe('roles: errors', () => {
  const t = useTenantApp();
  const orgPath = () => `/v1/orgs/${t.tenant.orgId}`;

  it('a key outside the catalog is 400 unknown_permission, naming it; nothing is created', async () => {
    const owner = t.as(t.tenant.owner.token);
    const refused = await owner.post(`${orgPath()}/roles`, {
      name: 'Typo',
      permissions: ['audit.view', 'audit.veiw'],
    });
    assert.equal(refused.status, 400, refused.text);
    assert.equal(refused.body.error, 'unknown_permission');
    assert.deepEqual(refused.body.details, [
      { message: 'Not a key of the permission catalog', path: ['permissions', 1] },
    ]);
    const roles = await owner.get(`${orgPath()}/roles`);
    assert.ok(!roles.body.roles.some((role: { name: string }) => role.name === 'Typo'));
  });

  it('names are unique per organization, ignoring case, the built-in names included', async () => {
    const owner = t.as(t.tenant.owner.token);
    assert.equal((await owner.post(`${orgPath()}/roles`, { name: 'Reviewers', permissions: [] })).status, 201);
    for (const name of ['reviewers', 'Admin', 'OWNER']) {
      const taken = await owner.post(`${orgPath()}/roles`, { name, permissions: [] });
      assert.equal(taken.status, 409, name);
      assert.equal(taken.body.error, 'role_name_taken');
    }
    // Another organization may use the same name.
    const other = await t
      .as(t.tenant.otherAdmin.token)
      .post(`/v1/orgs/${t.tenant.otherOrgId}/roles`, { name: 'Reviewers', permissions: [] });
    assert.equal(other.status, 201, other.text);
    const second = await owner.post(`${orgPath()}/roles`, { name: 'Second', permissions: [] });
    const renamed = await owner.patch(`${orgPath()}/roles/${second.body.role.id}`, { name: 'REVIEWERS' });
    assert.equal(renamed.status, 409);
    assert.equal(renamed.body.error, 'role_name_taken');
  });

  it('the built-in roles cannot be changed or deleted', async () => {
    const owner = t.as(t.tenant.owner.token);
    for (const role of ['owner', 'admin', 'member']) {
      const changed = await owner.patch(`${orgPath()}/roles/${role}`, { permissions: [] });
      assert.equal(changed.status, 409, role);
      assert.equal(changed.body.error, 'role_protected');
      const deleted = await owner.delete(`${orgPath()}/roles/${role}`);
      assert.equal(deleted.status, 409, role);
      assert.equal(deleted.body.error, 'role_protected');
    }
  });

  it('an unknown role is 404 role_not_found, whether changed, deleted or given', async () => {
    const owner = t.as(t.tenant.owner.token);
    const unknown = 'role_01jzzzzzzzzzzzzzzzzzzzzzzz';
    assert.equal((await owner.patch(`${orgPath()}/roles/${unknown}`, { name: 'x' })).body.error, 'role_not_found');
    assert.equal((await owner.delete(`${orgPath()}/roles/${unknown}`)).body.error, 'role_not_found');
    const given = await owner.patch(`${orgPath()}/members/${t.tenant.member.memberId}`, { role: unknown });
    assert.equal(given.status, 404, given.text);
    assert.equal(given.body.error, 'role_not_found');
    const invited = await owner.post(`${orgPath()}/invitations`, { email: 'nobody@example.test', role: unknown });
    assert.equal(invited.body.error, 'role_not_found');
    const keyed = await owner.post(`${orgPath()}/api-keys`, { name: 'k', role: unknown });
    assert.equal(keyed.body.error, 'role_not_found');
    const members = await owner.get(`${orgPath()}/members`);
    assert.ok(members.body.members.every((member: { role: string }) => member.role !== unknown));
  });

  it('bad input is 400 invalid_request: an empty change, a malformed role id, the owner role given', async () => {
    const owner = t.as(t.tenant.owner.token);
    const role = await owner.post(`${orgPath()}/roles`, { name: 'Empty change', permissions: [] });
    const empty = await owner.patch(`${orgPath()}/roles/${role.body.role.id}`, {});
    assert.equal(empty.status, 400);
    assert.equal(empty.body.error, 'invalid_request');
    assert.equal((await owner.patch(`${orgPath()}/roles/not-a-role`, { name: 'x' })).status, 400);
    assert.equal((await owner.post(`${orgPath()}/roles`, { name: '', permissions: [] })).status, 400);
    const ownerRole = await owner.patch(`${orgPath()}/members/${t.tenant.member.memberId}`, { role: 'owner' });
    assert.equal(ownerRole.status, 400, 'ownership moves only by transfer');
  });

  it('a role in use by a team, an invitation or an API key is not deleted, and says what uses it', async () => {
    const owner = t.as(t.tenant.owner.token);
    const role = (await owner.post(`${orgPath()}/roles`, { name: 'Widely used', permissions: ['audit.view'] })).body
      .role;
    const team = await owner.post(`${orgPath()}/teams`, { name: 'Uses a role' });
    await owner.patch(`${orgPath()}/teams/${team.body.team.id}`, { roleId: role.id });
    await owner.post(`${orgPath()}/invitations`, { email: 'pending@example.test', role: role.id });
    await owner.post(`${orgPath()}/api-keys`, { name: 'uses it', role: role.id });
    const refused = await owner.delete(`${orgPath()}/roles/${role.id}`);
    assert.equal(refused.status, 409);
    assert.deepEqual(refused.body.usedBy, {
      members: 0,
      invitations: 1,
      apiKeys: 1,
      teams: 1,
      ssoProvisioning: false,
    });
    assert.deepEqual(
      refused.body.details.map((detail: { path: string[] }) => detail.path[0]),
      ['invitations', 'apiKeys', 'teams'],
    );
  });
});
