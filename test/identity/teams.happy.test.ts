import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { z } from 'zod';
import type { teamWithMemberIdsSchema } from '../../src/modules/teams/index.ts';
import { useTenantApp } from '../support/harness.ts';
import { checkTenantRouting } from '../db/tenant-routing.ts';

describe('teams: happy paths', () => {
  const tenantRouting = checkTenantRouting();
  const harness = useTenantApp();

  it('teams: create, list with member ids, add and remove members', async () => {
    const admin = harness.as(harness.tenant.admin.token);
    const team = await admin.post(`/v1/orgs/${harness.tenant.orgId}/teams`, { name: 'Research' });
    assert.equal(team.status, 201, team.text);
    const teamId = team.body.team.id;
    assert.equal(
      (
        await admin.post(`/v1/orgs/${harness.tenant.orgId}/teams/${teamId}/members`, {
          memberId: harness.tenant.member.memberId,
        })
      ).status,
      204,
    );
    let listed = await harness.as(harness.tenant.member.token).get(`/v1/orgs/${harness.tenant.orgId}/teams`);
    assert.deepEqual(
      listed.body.teams.find((t: z.infer<typeof teamWithMemberIdsSchema>) => t.id === teamId).memberIds,
      [harness.tenant.member.memberId],
    );
    assert.equal(
      (await admin.delete(`/v1/orgs/${harness.tenant.orgId}/teams/${teamId}/members/${harness.tenant.member.memberId}`))
        .status,
      204,
    );
    listed = await harness.as(harness.tenant.member.token).get(`/v1/orgs/${harness.tenant.orgId}/teams`);
    assert.deepEqual(
      listed.body.teams.find((t: z.infer<typeof teamWithMemberIdsSchema>) => t.id === teamId).memberIds,
      [],
    );
  });

  // These flows' statements stay on one tenant (test/db/tenant-routing.ts): on a database distributed
  // by tenant, each runs on one node.
  it('their statements stay on one tenant', async () => {
    await tenantRouting.assertStatementsStayOnOneTenant(harness.app.db, 10);
  });
});
