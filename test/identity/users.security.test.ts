import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { signUp } from '../support/fixtures.ts';
import { useTenantApp } from '../support/harness.ts';

describe('sessions: security', () => {
  const harness = useTenantApp();

  it('concurrent requests whose session lookups share one batch each get only their own answer', async () => {
    const revoked = await signUp(harness.app.url, 'batch-revoked');
    await harness.as(revoked.token).post('/v1/auth/sign-out');
    const noOrganization = await signUp(harness.app.url, 'batch-no-org');
    const callers = [
      {
        token: harness.tenant.owner.token,
        userId: harness.tenant.owner.userId,
        expect: { status: 200, organizationId: harness.tenant.orgId, memberId: harness.tenant.owner.memberId },
      },
      {
        token: harness.tenant.member.token,
        userId: harness.tenant.member.userId,
        expect: { status: 200, organizationId: harness.tenant.orgId, memberId: harness.tenant.member.memberId },
      },
      {
        token: harness.tenant.otherAdmin.token,
        userId: harness.tenant.otherAdmin.userId,
        expect: {
          status: 200,
          organizationId: harness.tenant.otherOrgId,
          memberId: harness.tenant.otherAdmin.memberId,
        },
      },
      { token: revoked.token, userId: null, expect: { status: 401 } },
      { token: noOrganization.token, userId: noOrganization.userId, expect: { status: 404 } },
      {
        token: harness.tenant.owner.token.slice(0, -1) + (harness.tenant.owner.token.endsWith('A') ? 'B' : 'A'),
        userId: null,
        expect: { status: 401 },
      },
    ];
    // Many rounds of all callers at once, in a different order each round, so lookups land in shared batches.
    const requests = Array.from({ length: 20 }, (_, round) =>
      callers.map((_, index) => callers[(index + round) % callers.length]!),
    ).flat();
    const responses = await Promise.all(
      requests.map(async (caller) => ({ caller, response: await harness.as(caller.token).get('/v1/org') })),
    );
    for (const { caller, response } of responses) {
      assert.equal(response.status, caller.expect.status, response.text);
      if (caller.expect.status !== 200) continue;
      assert.equal(response.body.organization.id, caller.expect.organizationId);
      assert.equal(response.body.currentMember.id, caller.expect.memberId);
    }
    // The same for the session check in front of every other route.
    const members = await Promise.all(
      requests.map(async (caller) => ({ caller, response: await harness.as(caller.token).get('/v1/me') })),
    );
    for (const { caller, response } of members) {
      assert.equal(response.status, caller.userId ? 200 : 401, response.text);
      if (caller.userId) assert.equal(response.body.user.id, caller.userId);
    }
  });
});
