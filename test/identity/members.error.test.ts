import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { testBackend } from '../support/app.ts';
import { createTenant } from '../support/fixtures.ts';
import { holdLocks } from '../support/held-locks.ts';
import { useTenantApp } from '../support/harness.ts';

describe('members: documented errors', () => {
  const harness = useTenantApp();

  it('the owner cannot be demoted or removed except by transfer; team names are unique', async () => {
    const admin = harness.as(harness.tenant.admin.token);
    const demote = await admin.patch(`/v1/orgs/${harness.tenant.orgId}/members/${harness.tenant.owner.memberId}`, {
      role: 'member',
    });
    assert.equal(demote.status, 409);
    assert.equal(demote.body.error, 'owner_role_fixed');
    const promote = await admin.patch(`/v1/orgs/${harness.tenant.orgId}/members/${harness.tenant.member.memberId}`, {
      role: 'owner',
    });
    assert.equal(promote.status, 400);
    const remove = await admin.delete(`/v1/orgs/${harness.tenant.orgId}/members/${harness.tenant.owner.memberId}`);
    assert.equal(remove.status, 409);
    assert.equal(remove.body.error, 'owner_cannot_be_removed');
    await admin.post(`/v1/orgs/${harness.tenant.orgId}/teams`, { name: 'Same' });
    const duplicate = await admin.post(`/v1/orgs/${harness.tenant.orgId}/teams`, { name: 'Same' });
    assert.equal(duplicate.status, 409);
    assert.equal(duplicate.body.error, 'team_exists');
  });

  // Races: the requests under test queue behind a transaction holding the members' rows (PostgreSQL,
  // where requests run side by side; on PGlite's one connection they cannot overlap).
  const owners = async (orgId: string) =>
    (
      await harness.app.db.query<{ id: string }>(
        "SELECT id FROM members WHERE organization_id = $1 AND role = 'owner'",
        [orgId],
      )
    ).rows.map((row) => row.id);

  it('a transfer of ownership and a demotion or removal of its new owner at once: one organization owner remains', {
    skip: testBackend !== 'postgres' && 'needs PostgreSQL: requests overlap only there',
  }, async () => {
    for (const action of ['demote', 'remove'] as const) {
      const local = await createTenant(harness.app.url);
      const lock = await holdLocks(harness.app, 'SELECT 1 FROM members WHERE id = $1 FOR UPDATE', [
        local.admin.memberId,
      ]);
      const path = `/v1/orgs/${local.orgId}/members/${local.admin.memberId}`;
      const requests = Promise.all([
        harness
          .as(local.owner.token)
          .post(`/v1/orgs/${local.orgId}/transfer-ownership`, { memberId: local.admin.memberId }),
        action === 'demote'
          ? harness.as(local.owner.token).patch(path, { role: 'member' })
          : harness.as(local.owner.token).delete(path),
      ]);
      await lock.waitForBlocked(2);
      await lock.release();
      const [transfer, change] = await requests;
      // Either order is fine, each seeing what the other left; never both passing their checks.
      const transferFirst = transfer.status === 200 && change.status === 409;
      const changeFirst =
        [200, 204].includes(change.status) && (action === 'demote' ? transfer.status === 200 : transfer.status === 404);
      assert.ok(
        transferFirst || changeFirst,
        `${action}: transfer ${transfer.status} ${transfer.text}, ${action} ${change.status} ${change.text}`,
      );
      const owner = transfer.status === 200 ? local.admin.memberId : local.owner.memberId;
      assert.deepEqual(await owners(local.orgId), [owner], action);
    }
  });

  it('two transfers of ownership at once by one owner: one succeeds, the other is 403 (no longer the owner), never a 500', {
    skip: testBackend !== 'postgres' && 'needs PostgreSQL: requests overlap only there',
  }, async () => {
    const local = await createTenant(harness.app.url);
    const lock = await holdLocks(harness.app, 'SELECT 1 FROM members WHERE id = $1 FOR UPDATE', [local.owner.memberId]);
    const requests = Promise.all(
      [local.admin, local.member].map((to) =>
        harness.as(local.owner.token).post(`/v1/orgs/${local.orgId}/transfer-ownership`, { memberId: to.memberId }),
      ),
    );
    await lock.waitForBlocked(2);
    await lock.release();
    const statuses = (await requests).map((response) => response.status).sort();
    assert.deepEqual(statuses, [200, 403]);
    assert.equal((await owners(local.orgId)).length, 1);
  });

  it('unknown member, team and API key ids are 404 with their own error names', async () => {
    const admin = harness.as(harness.tenant.admin.token);
    const ghostMember = 'mem_01jqz3v6b8e9f0g1h2j3k4m5n6';
    assert.equal(
      (await admin.patch(`/v1/orgs/${harness.tenant.orgId}/members/${ghostMember}`, { role: 'admin' })).body.error,
      'member_not_found',
    );
    assert.equal(
      (
        await admin.post(`/v1/orgs/${harness.tenant.orgId}/teams/team_01jqz3v6b8e9f0g1h2j3k4m5n6/members`, {
          memberId: harness.tenant.member.memberId,
        })
      ).body.error,
      'team_not_found',
    );
    assert.equal(
      (await admin.delete(`/v1/orgs/${harness.tenant.orgId}/api-keys/key_01jqz3v6b8e9f0g1h2j3k4m5n6`)).body.error,
      'api_key_not_found',
    );
  });
});
