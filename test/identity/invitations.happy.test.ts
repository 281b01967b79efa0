import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { addMember, createTenant, signUp, uniqueEmail } from '../support/fixtures.ts';
import type { api } from '../support/http.ts';
import type { z } from 'zod';
import type { createdInvitationSchema } from '../../src/modules/invitations/index.ts';
import { useTenantApp } from '../support/harness.ts';
import { checkTenantRouting } from '../db/tenant-routing.ts';

describe('invitations: happy paths', () => {
  const tenantRouting = checkTenantRouting();
  const harness = useTenantApp();

  it('owners and admins list pending invitations newest first, without tokens, with cursor paging', async () => {
    const local = await createTenant(harness.app.url);
    const owner = harness.as(local.owner.token);
    const path = `/v1/orgs/${local.orgId}/invitations`;
    // The tenant's own invitations were accepted: nothing is pending yet.
    const empty = await owner.get(path);
    assert.equal(empty.status, 200, empty.text);
    assert.deepEqual(empty.body, { invitations: [], nextCursor: null });
    const created = [];
    for (const [client, role] of [
      [owner, 'member'],
      [harness.as(local.admin.token), 'admin'],
      [owner, 'admin'],
    ] as const) {
      const response = await client.post(path, { email: uniqueEmail('pending'), role });
      assert.equal(response.status, 201, response.text);
      created.push(response.body as z.infer<typeof createdInvitationSchema>);
    }
    const newestFirst = created.map((c) => c.invitation).reverse();
    for (const caller of [local.owner, local.admin]) {
      const all = await harness.as(caller.token).get(path);
      assert.equal(all.status, 200, all.text);
      // Each item is the invitation as it was created, in the same shape, and nothing more.
      assert.deepEqual(all.body, { invitations: newestFirst, nextCursor: null });
      for (const { token } of created) assert.ok(!all.text.includes(token), 'a token is listed');
    }
    const first = await owner.get(`${path}?limit=2`);
    assert.equal(first.status, 200, first.text);
    assert.deepEqual(first.body.invitations, newestFirst.slice(0, 2));
    assert.equal(typeof first.body.nextCursor, 'string');
    const second = await owner.get(`${path}?limit=2&cursor=${first.body.nextCursor}`);
    assert.equal(second.status, 200, second.text);
    assert.deepEqual(second.body, { invitations: newestFirst.slice(2), nextCursor: null });
  });

  it('the list leaves out accepted, expired and ended invitations', async () => {
    const local = await createTenant(harness.app.url);
    const owner = harness.as(local.owner.token);
    const path = `/v1/orgs/${local.orgId}/invitations`;
    const invite = async (client: ReturnType<typeof api>, email = uniqueEmail('invitee')) => {
      const response = await client.post(path, { email, role: 'member' });
      assert.equal(response.status, 201, response.text);
      return response.body as z.infer<typeof createdInvitationSchema>;
    };
    const pending = await invite(owner);
    const joiner = await signUp(harness.app.url, 'joiner');
    const accepted = await invite(owner, joiner.email);
    assert.equal((await harness.as(joiner.token).post(`/v1/invitations/${accepted.token}/accept`)).status, 200);
    const expired = await invite(owner);
    await harness.app.db.query(
      `UPDATE invitations SET expires_at = now() - interval '1 second' WHERE organization_id = $2 AND id = $1`,
      [expired.invitation.id, expired.invitation.organizationId],
    );
    // Ended by the service: its sender is demoted to member.
    const sender = await signUp(harness.app.url, 'sender');
    await addMember(harness.app.url, local.owner, local.orgId, sender, 'admin');
    const ended = await invite(harness.as(sender.token));
    assert.equal(
      (await owner.patch(`/v1/orgs/${local.orgId}/members/${sender.memberId}`, { role: 'member' })).status,
      200,
    );
    const listed = await owner.get(path);
    assert.equal(listed.status, 200, listed.text);
    assert.deepEqual(
      listed.body.invitations.map((i: { id: string }) => i.id),
      [pending.invitation.id],
    );
    for (const gone of [accepted, expired, ended]) assert.ok(!listed.text.includes(gone.invitation.id));
  });

  it('revoking an invitation: 204, gone from the list, its token refused like an unknown one; the others still work', async () => {
    const local = await createTenant(harness.app.url);
    const owner = harness.as(local.owner.token);
    const path = `/v1/orgs/${local.orgId}/invitations`;
    const [wrongAddress, kept] = [
      await signUp(harness.app.url, 'wrong-address'),
      await signUp(harness.app.url, 'kept'),
    ];
    // Sent by the admin, revoked by the owner: any owner or admin revokes any pending invitation.
    const doomed = await harness.as(local.admin.token).post(path, { email: wrongAddress.email, role: 'admin' });
    const other = await owner.post(path, { email: kept.email, role: 'member' });
    assert.equal(doomed.status, 201, doomed.text);
    assert.equal(other.status, 201, other.text);
    const revoked = await owner.delete(`${path}/${doomed.body.invitation.id}`);
    assert.equal(revoked.status, 204, revoked.text);
    assert.equal(revoked.text, '');
    const listed = await owner.get(path);
    assert.deepEqual(
      listed.body.invitations.map((i: { id: string }) => i.id),
      [other.body.invitation.id],
    );
    const unknown = await harness.as(wrongAddress.token).post('/v1/invitations/opi_no-such-invitation/accept');
    const refused = await harness.as(wrongAddress.token).post(`/v1/invitations/${doomed.body.token}/accept`);
    assert.deepEqual([refused.status, refused.body], [404, unknown.body]);
    assert.equal(unknown.body.error, 'invitation_not_found');
    assert.equal((await harness.as(wrongAddress.token).get(`/v1/orgs/${local.orgId}/members`)).status, 404);
    const accepted = await harness.as(kept.token).post(`/v1/invitations/${other.body.token}/accept`);
    assert.equal(accepted.status, 200, accepted.text);
    assert.equal(accepted.body.member.organizationId, local.orgId);
    // A new invitation to the revoked address works: revoking ends that one invitation, it bars nobody.
    const again = await owner.post(path, { email: wrongAddress.email, role: 'member' });
    assert.equal((await harness.as(wrongAddress.token).post(`/v1/invitations/${again.body.token}/accept`)).status, 200);
  });

  // These flows' statements stay on one tenant (test/db/tenant-routing.ts): on a database distributed
  // by tenant, each runs on one node.
  it('their statements stay on one tenant', async () => {
    await tenantRouting.assertStatementsStayOnOneTenant(harness.app.db, 10);
  });
});
