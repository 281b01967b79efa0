import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { testBackend } from '../support/app.ts';
import { addMember, createTenant, signUp } from '../support/fixtures.ts';
import { holdLocks } from '../support/held-locks.ts';
import type { z } from 'zod';
import type { teamWithMemberIdsSchema } from '../../src/modules/teams/index.ts';
import { useTenantApp } from '../support/harness.ts';

describe('teams: documented errors', () => {
  const harness = useTenantApp();

  it('a member removed while being added to a team: the add is 404 member_not_found, never a 500', {
    skip: testBackend !== 'postgres' && 'needs PostgreSQL: requests overlap only there',
  }, async () => {
    const local = await createTenant(harness.app.url);
    const owner = harness.as(local.owner.token);
    const team = await owner.post(`/v1/orgs/${local.orgId}/teams`, { name: 'Raced' });
    assert.equal(team.status, 201, team.text);
    // The removal, held open: the member row is deleted but not yet committed when the add starts.
    const removal = await holdLocks(harness.app, 'DELETE FROM members WHERE id = $1', [local.member.memberId]);
    const added = owner.post(`/v1/orgs/${local.orgId}/teams/${team.body.team.id}/members`, {
      memberId: local.member.memberId,
    });
    await removal.waitForBlocked(1);
    await removal.release();
    const response = await added;
    assert.equal(response.status, 404, response.text);
    assert.equal(response.body.error, 'member_not_found');
    const listed = await owner.get(`/v1/orgs/${local.orgId}/teams`);
    assert.deepEqual(
      listed.body.teams.find((t: z.infer<typeof teamWithMemberIdsSchema>) => t.id === team.body.team.id).memberIds,
      [],
    );
  });

  it('removing a member and adding them to a team at once: the removal is 204, the add 204 or 404, never a 500', async () => {
    const local = await createTenant(harness.app.url);
    const owner = harness.as(local.owner.token);
    const team = await owner.post(`/v1/orgs/${local.orgId}/teams`, { name: 'Raced' });
    for (let round = 0; round < 12; round++) {
      const person = await signUp(harness.app.url, 'team-raced');
      await addMember(harness.app.url, local.owner, local.orgId, person, 'member');
      const [removed, added] = await Promise.all([
        owner.delete(`/v1/orgs/${local.orgId}/members/${person.memberId}`),
        owner.post(`/v1/orgs/${local.orgId}/teams/${team.body.team.id}/members`, { memberId: person.memberId }),
      ]);
      assert.equal(removed.status, 204, `round ${round}: ${removed.text}`);
      assert.ok(
        added.status === 204 || (added.status === 404 && added.body.error === 'member_not_found'),
        `round ${round}: ${added.status} ${added.text}`,
      );
    }
    const listed = await owner.get(`/v1/orgs/${local.orgId}/teams`);
    assert.deepEqual(
      listed.body.teams.find((t: z.infer<typeof teamWithMemberIdsSchema>) => t.id === team.body.team.id).memberIds,
      [],
      'a removed member stayed in the team',
    );
  });
});
