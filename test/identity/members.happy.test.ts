import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createTenant } from '../support/fixtures.ts';
import type { z } from 'zod';
import type { memberSchema } from '../../src/modules/identity/index.ts';
import { useTenantApp } from '../support/harness.ts';
import { checkTenantRouting } from '../db/tenant-routing.ts';

describe('members: happy paths', () => {
  const harness = useTenantApp();
  const tenantRouting = checkTenantRouting();

  it('lists members with cursor paging', async () => {
    const client = harness.as(harness.tenant.member.token);
    const first = await client.get(`/v1/orgs/${harness.tenant.orgId}/members?limit=2`);
    assert.equal(first.status, 200, first.text);
    assert.equal(first.body.members.length, 2);
    assert.ok(first.body.nextCursor);
    const second = await client.get(`/v1/orgs/${harness.tenant.orgId}/members?limit=2&cursor=${first.body.nextCursor}`);
    assert.equal(second.body.members.length, 1);
    assert.equal(second.body.nextCursor, null);
    const ids = [...first.body.members, ...second.body.members].map((m: { id: string }) => m.id).sort();
    assert.deepEqual(
      ids,
      [harness.tenant.owner.memberId, harness.tenant.admin.memberId, harness.tenant.member.memberId].sort(),
    );
  });

  it('changes roles, transfers ownership (exactly one owner), removes members', async () => {
    const local = await createTenant(harness.app.url);
    const owner = harness.as(local.owner.token);
    const promoted = await owner.patch(`/v1/orgs/${local.orgId}/members/${local.member.memberId}`, { role: 'admin' });
    assert.equal(promoted.status, 200, promoted.text);
    assert.equal(promoted.body.member.role, 'admin');

    const transferred = await owner.post(`/v1/orgs/${local.orgId}/transfer-ownership`, {
      memberId: local.admin.memberId,
    });
    assert.equal(transferred.status, 200, transferred.text);
    const members = (await owner.get(`/v1/orgs/${local.orgId}/members`)).body.members as z.infer<typeof memberSchema>[];
    assert.deepEqual(
      members.filter((m) => m.role === 'owner').map((m) => m.id),
      [local.admin.memberId],
    );
    assert.equal(members.find((m) => m.id === local.owner.memberId)?.role, 'admin');
    const org = await harness.as(local.member.token).get('/v1/org');
    assert.equal(org.body.organization.owner.memberId, local.admin.memberId);

    const removed = await harness
      .as(local.admin.token)
      .delete(`/v1/orgs/${local.orgId}/members/${local.member.memberId}`);
    assert.equal(removed.status, 204);
    const gone = await harness.as(local.member.token).get('/v1/org');
    assert.equal(gone.status, 404);
    assert.equal(gone.body.error, 'organization_not_found');
  });

  // These flows' statements stay on one tenant (test/db/tenant-routing.ts): on a database distributed
  // by tenant, each runs on one node.
  it('their statements stay on one tenant', async () => {
    await tenantRouting.assertStatementsStayOnOneTenant(harness.app.db, 10);
  });
});
