import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hashToken } from '../../src/platform/tokens.ts';
import { addMember, createTenant, signUp, uniqueEmail } from '../support/fixtures.ts';
import { membershipOf } from '../support/identity.ts';
import type { z } from 'zod';
import type { invitationSchema } from '../../src/modules/invitations/index.ts';
import { useTenantApp } from '../support/harness.ts';

describe('invitations: security', () => {
  const harness = useTenantApp();

  it('an invitation id of another organization is not found here, whichever organization the path names; tampered ids are not found or refused', async () => {
    const ours = await harness
      .as(harness.tenant.owner.token)
      .post(`/v1/orgs/${harness.tenant.orgId}/invitations`, { email: uniqueEmail('ours'), role: 'member' });
    const theirs = await harness
      .as(harness.tenant.otherAdmin.token)
      .post(`/v1/orgs/${harness.tenant.otherOrgId}/invitations`, { email: uniqueEmail('theirs'), role: 'member' });
    const ourId: string = ours.body.invitation.id;
    const theirId: string = theirs.body.invitation.id;
    // Each organization's admin names the other's invitation under their own organization: not found, nothing ended.
    const mixed = [
      await harness.as(harness.tenant.owner.token).delete(`/v1/orgs/${harness.tenant.orgId}/invitations/${theirId}`),
      await harness
        .as(harness.tenant.otherAdmin.token)
        .delete(`/v1/orgs/${harness.tenant.otherOrgId}/invitations/${ourId}`),
    ];
    for (const response of mixed) {
      assert.equal(response.status, 404, response.text);
      assert.equal(response.body.error, 'invitation_not_found');
      assert.ok(!response.text.includes('Acme') && !response.text.includes('Globex'));
    }
    // One character changed, still a well-formed id: not found. Another prefix, or not an id at all: refused.
    const last = ourId.at(-1)!;
    const tampered: [string, number, string][] = [
      [`${ourId.slice(0, -1)}${last === '0' ? '1' : '0'}`, 404, 'invitation_not_found'],
      [ourId.replace(/^inv_/, 'mem_'), 400, 'invalid_request'],
      [`${ourId}%00`, 400, 'invalid_request'],
      [`${ourId}'%20OR%201=1`, 400, 'invalid_request'],
      [ourId.toUpperCase(), 400, 'invalid_request'],
    ];
    for (const [id, status, error] of tampered) {
      const response = await harness
        .as(harness.tenant.owner.token)
        .delete(`/v1/orgs/${harness.tenant.orgId}/invitations/${id}`);
      assert.deepEqual([response.status, response.body.error], [status, error], `${id}: ${response.text}`);
    }
    const listed = async (token: string, orgId: string) =>
      (
        (await harness.as(token).get(`/v1/orgs/${orgId}/invitations`)).body.invitations as z.infer<
          typeof invitationSchema
        >[]
      ).map((i) => i.id);
    assert.ok(
      (await listed(harness.tenant.owner.token, harness.tenant.orgId)).includes(ourId),
      'our invitation was ended',
    );
    assert.deepEqual(
      await listed(harness.tenant.otherAdmin.token, harness.tenant.otherOrgId),
      [theirId],
      'their list shows only their own',
    );
    assert.ok(!(await listed(harness.tenant.owner.token, harness.tenant.orgId)).includes(theirId));
  });

  it('invitation lists never carry a token or its hash; an API key, even an admin one, neither lists nor revokes', async () => {
    const local = await createTenant(harness.app.url);
    const owner = harness.as(local.owner.token);
    const tokens = [];
    for (let index = 0; index < 3; index++) {
      const created = await owner.post(`/v1/orgs/${local.orgId}/invitations`, {
        email: uniqueEmail('listed'),
        role: 'admin',
      });
      tokens.push(created.body.token as string);
    }
    for (const limit of [1, 50]) {
      const response = await owner.get(`/v1/orgs/${local.orgId}/invitations?limit=${limit}`);
      assert.equal(response.status, 200, response.text);
      for (const token of tokens) {
        assert.ok(!response.text.includes(token), 'a token is listed');
        assert.ok(!response.text.includes(hashToken(token)), 'a token hash is listed');
      }
      for (const item of response.body.invitations)
        assert.deepEqual(Object.keys(item).sort(), ['createdAt', 'email', 'expiresAt', 'id', 'organizationId', 'role']);
    }
    const key = (await owner.post(`/v1/orgs/${local.orgId}/api-keys`, { name: 'automation', role: 'admin' })).body.key;
    const pendingId = (await owner.get(`/v1/orgs/${local.orgId}/invitations`)).body.invitations[0].id;
    const viaKey = [
      await harness.as().get(`/v1/orgs/${local.orgId}/invitations`, { headers: { 'x-api-key': key } }),
      await harness.as().delete(`/v1/orgs/${local.orgId}/invitations/${pendingId}`, { headers: { 'x-api-key': key } }),
    ];
    for (const response of viaKey) assert.deepEqual([response.status, response.body], [401, { error: 'unauthorized' }]);
    assert.equal((await owner.get(`/v1/orgs/${local.orgId}/invitations`)).body.invitations[0].id, pendingId);
  });

  it('a suspended admin neither lists nor revokes invitations', async () => {
    const local = await createTenant(harness.app.url);
    const pending = await harness
      .as(local.owner.token)
      .post(`/v1/orgs/${local.orgId}/invitations`, { email: uniqueEmail('suspended-case'), role: 'member' });
    await harness.app.db.transaction((tx) =>
      membershipOf(harness.app).setMemberStatus(tx, local.orgId, local.admin.memberId, 'suspended'),
    );
    const admin = harness.as(local.admin.token);
    for (const response of [
      await admin.get(`/v1/orgs/${local.orgId}/invitations`),
      await admin.delete(`/v1/orgs/${local.orgId}/invitations/${pending.body.invitation.id}`),
    ]) {
      assert.equal(response.status, 404, response.text);
      assert.equal(response.body.error, 'organization_not_found');
    }
    const listed = await harness.as(local.owner.token).get(`/v1/orgs/${local.orgId}/invitations`);
    assert.deepEqual(
      listed.body.invitations.map((i: { id: string }) => i.id),
      [pending.body.invitation.id],
    );
  });

  it("an admin's pending invitations stop working once they are removed, suspended or demoted: refused like an unknown one", async () => {
    const local = await createTenant(harness.app.url);
    const owner = harness.as(local.owner.token);
    const unknown = await harness.as(local.outsider.token).post('/v1/invitations/opi_no-such-invitation/accept');
    assert.equal(unknown.status, 404);
    // SCIM suspends and deletes through these identity methods, inside its own transactions.
    const actions: [string, (admin: { memberId: string }) => Promise<void>][] = [
      [
        'removed by the owner',
        async (admin) => {
          assert.equal((await owner.delete(`/v1/orgs/${local.orgId}/members/${admin.memberId}`)).status, 204);
        },
      ],
      [
        'demoted to member',
        async (admin) => {
          assert.equal(
            (await owner.patch(`/v1/orgs/${local.orgId}/members/${admin.memberId}`, { role: 'member' })).status,
            200,
          );
        },
      ],
      [
        'suspended (SCIM)',
        (admin) =>
          harness.app.db.transaction((tx) =>
            membershipOf(harness.app).setMemberStatus(tx, local.orgId, admin.memberId, 'suspended'),
          ),
      ],
      [
        'deleted (SCIM)',
        (admin) =>
          harness.app.db.transaction((tx) => membershipOf(harness.app).deleteMember(tx, local.orgId, admin.memberId)),
      ],
    ];
    for (const [label, act] of actions) {
      const admin = await signUp(harness.app.url, 'rogue-admin');
      await addMember(harness.app.url, local.owner, local.orgId, admin, 'admin');
      // The probe's accomplice has no account yet when invited; the owner's own invitation is unaffected.
      const accomplice = uniqueEmail('accomplice');
      const bystander = await signUp(harness.app.url, 'bystander');
      const rogue = await harness
        .as(admin.token)
        .post(`/v1/orgs/${local.orgId}/invitations`, { email: accomplice, role: 'admin' });
      assert.equal(rogue.status, 201, `${label}: ${rogue.text}`);
      const fromOwner = await owner.post(`/v1/orgs/${local.orgId}/invitations`, {
        email: bystander.email,
        role: 'member',
      });
      await act(admin);
      const signedUp = await harness
        .as()
        .post('/v1/auth/sign-up', { email: accomplice, password: 'accomplice password', name: 'Accomplice' });
      assert.equal(signedUp.status, 201, signedUp.text);
      const accepted = await harness.as(signedUp.body.sessionToken).post(`/v1/invitations/${rogue.body.token}/accept`);
      assert.equal(accepted.status, 404, `${label}: ${accepted.text}`);
      assert.deepEqual(accepted.body, unknown.body, label);
      assert.equal(
        (await harness.as(signedUp.body.sessionToken).get(`/v1/orgs/${local.orgId}/members`)).status,
        404,
        label,
      );
      const stillValid = await harness.as(bystander.token).post(`/v1/invitations/${fromOwner.body.token}/accept`);
      assert.equal(stillValid.status, 200, `${label}: ${stillValid.text}`);
    }
    // An owner who hands ownership over stays an admin, and may still invite: their invitations hold.
    const pending = await owner.post(`/v1/orgs/${local.orgId}/invitations`, {
      email: local.outsider.email,
      role: 'member',
    });
    assert.equal(
      (await owner.post(`/v1/orgs/${local.orgId}/transfer-ownership`, { memberId: local.admin.memberId })).status,
      200,
    );
    assert.equal(
      (await harness.as(local.outsider.token).post(`/v1/invitations/${pending.body.token}/accept`)).status,
      200,
    );
  });
});
