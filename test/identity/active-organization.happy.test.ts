import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createOrganization, createTenant, signUp, type TestUser } from '../support/fixtures.ts';
import { membershipOf } from '../support/identity.ts';
import { useTenantApp } from '../support/harness.ts';
import type { z } from 'zod';
import type { teamSchema } from '../../src/modules/teams/index.ts';
import type { meSchema } from '../../src/modules/users/index.ts';

describe('GET /v1/org (spec operation 7): happy path', () => {
  const harness = useTenantApp();

  it("returns the organization, its owner, the caller as member and the caller's teams", async () => {
    const team = await harness
      .as(harness.tenant.owner.token)
      .post(`/v1/orgs/${harness.tenant.orgId}/teams`, { name: 'Platform' });
    assert.equal(team.status, 201, team.text);
    const added = await harness
      .as(harness.tenant.owner.token)
      .post(`/v1/orgs/${harness.tenant.orgId}/teams/${team.body.team.id}/members`, {
        memberId: harness.tenant.member.memberId,
      });
    assert.equal(added.status, 204, added.text);

    const response = await harness.as(harness.tenant.member.token).get('/v1/org');
    assert.equal(response.status, 200, response.text);
    const { organization, currentMember, currentMemberTeams } = response.body;
    assert.equal(organization.id, harness.tenant.orgId);
    assert.equal(organization.name, 'Acme');
    assert.equal(organization.plan, 'free');
    assert.deepEqual(organization.owner, {
      memberId: harness.tenant.owner.memberId,
      userId: harness.tenant.owner.userId,
      name: harness.tenant.owner.name,
      email: harness.tenant.owner.email,
      image: '',
    });
    assert.equal(currentMember.id, harness.tenant.member.memberId);
    assert.equal(currentMember.userId, harness.tenant.member.userId);
    assert.equal(currentMember.role, 'member');
    assert.deepEqual(
      currentMemberTeams.map((t: z.infer<typeof teamSchema>) => [t.id, t.name]),
      [[team.body.team.id, 'Platform']],
    );
  });

  it("follows the session's active organization when it changes", async () => {
    const client = harness.as(harness.tenant.admin.token);
    const second = await client.post('/v1/orgs', { name: 'Second' });
    assert.equal(second.status, 201);
    assert.equal((await client.get('/v1/org')).body.organization.id, second.body.organization.id);
    assert.equal((await client.get('/v1/org')).body.currentMember.role, 'owner');
    const switched = await client.put('/v1/session/active-organization', { organizationId: harness.tenant.orgId });
    assert.equal(switched.status, 200);
    const back = await client.get('/v1/org');
    assert.equal(back.body.organization.id, harness.tenant.orgId);
    assert.equal(back.body.currentMember.role, 'admin');
    assert.deepEqual(back.body.currentMemberTeams, []);
  });
});

describe("the session's active organization follows membership", () => {
  const harness = useTenantApp({ tenant: false });

  const me = async (token: string) => {
    const response = await harness.as(token).get('/v1/me');
    assert.equal(response.status, 200, response.text);
    return response.body as z.infer<typeof meSchema>;
  };
  const invite = async (inviter: TestUser, orgId: string, user: TestUser) => {
    const invitation = await harness
      .as(inviter.token)
      .post(`/v1/orgs/${orgId}/invitations`, { email: user.email, role: 'member' });
    assert.equal(invitation.status, 201, invitation.text);
    return invitation.body.token as string;
  };
  const accept = async (user: TestUser, token: string) => {
    const accepted = await harness.as(user.token).post(`/v1/invitations/${token}/accept`);
    assert.equal(accepted.status, 200, accepted.text);
    return accepted.body.member.id as string;
  };

  it('GET /v1/me reports no active organization, in every session, once the user is removed from it', async () => {
    const tenant = await createTenant(harness.app.url);
    // A second session of the member, started while a member (sign-in makes the organization active).
    const signedIn = await harness
      .as()
      .post('/v1/auth/sign-in', { email: tenant.member.email, password: tenant.member.password });
    assert.equal(signedIn.status, 200, signedIn.text);
    const sessions = [tenant.member.token, signedIn.body.sessionToken as string];
    for (const token of sessions) assert.equal((await me(token)).activeOrganizationId, tenant.orgId);

    const removed = await harness
      .as(tenant.owner.token)
      .delete(`/v1/orgs/${tenant.orgId}/members/${tenant.member.memberId}`);
    assert.equal(removed.status, 204, removed.text);
    for (const token of sessions) {
      const body = await me(token);
      assert.equal(body.activeOrganizationId, null);
      assert.deepEqual(body.organizations, []);
      assert.equal((await harness.as(token).get('/v1/org')).status, 404);
    }
    // Leaving by oneself and being suspended (SCIM) end it the same way.
    const left = await harness
      .as(tenant.admin.token)
      .delete(`/v1/orgs/${tenant.orgId}/members/${tenant.admin.memberId}`);
    assert.equal(left.status, 204, left.text);
    assert.equal((await me(tenant.admin.token)).activeOrganizationId, null);
    const other = await createTenant(harness.app.url);
    await harness.app.db.transaction((tx) =>
      membershipOf(harness.app).setMemberStatus(tx, other.orgId, other.member.memberId, 'suspended'),
    );
    assert.equal((await me(other.member.token)).activeOrganizationId, null);
    // Members who stay keep theirs.
    assert.equal((await me(tenant.owner.token)).activeOrganizationId, tenant.orgId);
  });

  it('accepting an invitation makes the organization active for the accepting session when it has none', async () => {
    const owner = await signUp(harness.app.url, 'inviter');
    const orgId = await createOrganization(harness.app.url, owner, 'Joined');
    const person = await signUp(harness.app.url, 'newcomer');
    const otherSession = await harness
      .as()
      .post('/v1/auth/sign-in', { email: person.email, password: person.password });
    assert.equal(otherSession.status, 200, otherSession.text);
    assert.equal((await me(person.token)).activeOrganizationId, null);
    const memberId = await accept(person, await invite(owner, orgId, person));
    assert.equal((await me(person.token)).activeOrganizationId, orgId);
    // Only the session that accepted: another one is left as it was.
    assert.equal((await me(otherSession.body.sessionToken)).activeOrganizationId, null);
    const org = await harness.as(person.token).get('/v1/org');
    assert.equal(org.status, 200, org.text);
    assert.equal(org.body.organization.id, orgId);
    assert.equal(org.body.currentMember.id, memberId);
  });

  it('accepting an invitation leaves a usable active organization alone, and replaces one the user was removed from', async () => {
    const owner = await signUp(harness.app.url, 'inviter');
    const [first, second] = [
      await createOrganization(harness.app.url, owner, 'First'),
      await createOrganization(harness.app.url, owner, 'Second'),
    ];
    const person = await signUp(harness.app.url, 'joiner');
    const own = await createOrganization(harness.app.url, person, 'Own');
    // Active: their own organization, which stays active.
    await accept(person, await invite(owner, first, person));
    assert.equal((await me(person.token)).activeOrganizationId, own);
    // Active: an organization they were removed from, which the accepted one replaces.
    const switched = await harness.as(person.token).put('/v1/session/active-organization', { organizationId: first });
    assert.equal(switched.status, 200, switched.text);
    const membership = (await me(person.token)).organizations.find((o) => o.id === first);
    assert.equal(
      (await harness.as(owner.token).delete(`/v1/orgs/${first}/members/${membership!.memberId}`)).status,
      204,
    );
    await accept(person, await invite(owner, second, person));
    assert.equal((await me(person.token)).activeOrganizationId, second);
    assert.equal((await harness.as(person.token).get('/v1/org')).body.organization.id, second);
  });
});
