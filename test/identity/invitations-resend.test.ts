// Resending an invitation (resendInvitation): a new token and expiry, the old link dead, the audit
// event, and who may resend what. This app has no SMTP_URL: the e-mail is `not_configured`, and the
// link still comes back to copy (invitations-mail.test.ts sends real mail).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { addMember, signUp, uniqueEmail } from '../support/fixtures.ts';
import { useTenantApp } from '../support/harness.ts';
import { testBackend } from '../support/app.ts';
import { holdLocks } from '../support/held-locks.ts';
import { allEvents } from '../audit/helpers.ts';
import { checkTenantRouting } from '../db/tenant-routing.ts';

describe('invitations: resend', () => {
  const tenantRouting = checkTenantRouting();
  const harness = useTenantApp();
  const invite = async (email = uniqueEmail('invitee'), token = harness.tenant.owner.token) => {
    const response = await harness
      .as(token)
      .post(`/v1/orgs/${harness.tenant.orgId}/invitations`, { email, role: 'member' });
    assert.equal(response.status, 201, response.text);
    return response;
  };
  const resendPath = (id: string, orgId = harness.tenant.orgId) => `/v1/orgs/${orgId}/invitations/${id}/resend`;

  it('without SMTP_URL creating says the e-mail was not sent, and gives the accept link once, not stored by caches', async () => {
    const created = await invite();
    const { token, acceptUrl, delivery, invitation } = created.body;
    assert.deepEqual(delivery, { email: 'not_configured' });
    assert.equal(
      acceptUrl,
      `${harness.app.config.publicUrl}/invitations/accept#${new URLSearchParams({ token, email: invitation.email })}`,
    );
    assert.equal(created.headers.get('cache-control'), 'no-store');
    const expires = Date.parse(invitation.expiresAt) - Date.parse(invitation.createdAt);
    assert.ok(Math.abs(expires - 7 * 24 * 3600_000) < 60_000, `expires 7 days after creation: ${expires}`);
  });

  it('an admin resends: a new token and expiry, the old link stops working, the new one joins; one audit event', async () => {
    const invitee = await signUp(harness.app.url, 'resent');
    const first = (await invite(invitee.email)).body;
    await new Promise((resolve) => setTimeout(resolve, 20));
    const resent = await harness.as(harness.tenant.admin.token).post(resendPath(first.invitation.id));
    assert.equal(resent.status, 200, resent.text);
    assert.equal(resent.headers.get('cache-control'), 'no-store');
    const second = resent.body;
    assert.equal(second.invitation.id, first.invitation.id);
    assert.equal(second.invitation.email, invitee.email);
    assert.notEqual(second.token, first.token);
    assert.match(second.token, /^opi_/);
    assert.equal(
      second.acceptUrl,
      `${harness.app.config.publicUrl}/invitations/accept#${new URLSearchParams({ token: second.token, email: invitee.email })}`,
    );
    assert.deepEqual(second.delivery, { email: 'not_configured' });
    assert.ok(Date.parse(second.invitation.expiresAt) > Date.parse(first.invitation.expiresAt), 'a new expiry');
    const events = await allEvents(
      harness.app,
      harness.tenant.owner.token,
      harness.tenant.orgId,
      '&action=invitation.resent',
    );
    const event = events.find((each) => each.target.id === first.invitation.id);
    assert.ok(event, 'the resend has an event');
    assert.equal(event.actor.id, harness.tenant.admin.userId);
    assert.deepEqual(event.target, { type: 'invitation', id: first.invitation.id, name: invitee.email });
    assert.ok(!JSON.stringify(events).includes(second.token), 'the token is not in the audit log');
    const old = await harness.as(invitee.token).post(`/v1/invitations/${first.token}/accept`);
    assert.deepEqual([old.status, old.body.error], [404, 'invitation_not_found'], old.text);
    const joined = await harness.as(invitee.token).post(`/v1/invitations/${second.token}/accept`);
    assert.equal(joined.status, 200, joined.text);
    assert.equal(joined.body.member.email, invitee.email);
  });

  it('an accepted, revoked or unknown invitation is not resent: 404 invitation_not_found; a malformed id is 400', async () => {
    const invitee = await signUp(harness.app.url, 'accepted');
    const accepted = (await invite(invitee.email)).body;
    assert.equal((await harness.as(invitee.token).post(`/v1/invitations/${accepted.token}/accept`)).status, 200);
    const revoked = (await invite()).body;
    const revoke = await harness
      .as(harness.tenant.owner.token)
      .delete(`/v1/orgs/${harness.tenant.orgId}/invitations/${revoked.invitation.id}`);
    assert.equal(revoke.status, 204, revoke.text);
    const unknown = `${revoked.invitation.id.slice(0, -1)}${revoked.invitation.id.endsWith('0') ? '1' : '0'}`;
    for (const id of [accepted.invitation.id, revoked.invitation.id, unknown]) {
      const response = await harness.as(harness.tenant.owner.token).post(resendPath(id));
      assert.deepEqual([response.status, response.body.error], [404, 'invitation_not_found'], response.text);
      assert.ok(!('token' in response.body));
    }
    // The revoked one's old token stays dead: a refused resend gave it no new life.
    const late = await signUp(harness.app.url, 'late');
    assert.equal((await harness.as(late.token).post(`/v1/invitations/${revoked.token}/accept`)).status, 404);
    for (const id of ['inv_x', revoked.invitation.id.replace(/^inv_/, 'mem_'), `${revoked.invitation.id}%00`]) {
      const response = await harness.as(harness.tenant.owner.token).post(resendPath(id));
      assert.deepEqual([response.status, response.body.error], [400, 'invalid_request'], response.text);
    }
  });

  it("another organization's invitation, a member, an outsider, anonymous, an API key: refused, and nothing renewed", async () => {
    const ours = (await invite()).body;
    const otherOrg = await harness
      .as(harness.tenant.otherAdmin.token)
      .post(`/v1/orgs/${harness.tenant.otherOrgId}/invitations`, { email: uniqueEmail('theirs'), role: 'member' });
    assert.equal(otherOrg.status, 201, otherOrg.text);
    const refusals: [string | undefined, string, number, string][] = [
      // Each side names the other's invitation under its own organization: not found.
      [harness.tenant.owner.token, resendPath(otherOrg.body.invitation.id), 404, 'invitation_not_found'],
      [
        harness.tenant.otherAdmin.token,
        resendPath(ours.invitation.id, harness.tenant.otherOrgId),
        404,
        'invitation_not_found',
      ],
      // Naming our organization from outside it.
      [harness.tenant.otherAdmin.token, resendPath(ours.invitation.id), 404, 'organization_not_found'],
      [harness.tenant.outsider.token, resendPath(ours.invitation.id), 404, 'organization_not_found'],
      [harness.tenant.member.token, resendPath(ours.invitation.id), 403, 'forbidden'],
      [undefined, resendPath(ours.invitation.id), 401, 'unauthorized'],
    ];
    for (const [token, path, status, error] of refusals) {
      const response = await harness.as(token).post(path);
      assert.deepEqual([response.status, response.body.error], [status, error], `${path}: ${response.text}`);
      assert.ok(!('token' in (response.body ?? {})));
    }
    const key = await harness
      .as(harness.tenant.owner.token)
      .post(`/v1/orgs/${harness.tenant.orgId}/api-keys`, { name: 'resend', role: 'admin' });
    assert.equal(key.status, 201, key.text);
    const byKey = await harness
      .as()
      .post(resendPath(ours.invitation.id), undefined, { headers: { 'x-api-key': key.body.key } });
    assert.equal(byKey.status, 401, byKey.text);
    // Both invitations are as they were: their first tokens still work.
    const invitees = await harness.as(harness.tenant.owner.token).get(`/v1/orgs/${harness.tenant.orgId}/invitations`);
    const listed = invitees.body.invitations.find((each: { id: string }) => each.id === ours.invitation.id);
    assert.equal(listed.expiresAt, ours.invitation.expiresAt);
    const theirsListed = await harness
      .as(harness.tenant.otherAdmin.token)
      .get(`/v1/orgs/${harness.tenant.otherOrgId}/invitations`);
    assert.equal(theirsListed.body.invitations[0].expiresAt, otherOrg.body.invitation.expiresAt);
  });

  it('a member made admin may resend; once demoted the invitation they resent ends with them', async () => {
    const promoted = await signUp(harness.app.url, 'promoted');
    await addMember(harness.app.url, harness.tenant.owner, harness.tenant.orgId, promoted, 'admin');
    const invitee = await signUp(harness.app.url, 'vouched');
    const sent = (await invite(invitee.email)).body;
    const resent = await harness.as(promoted.token).post(resendPath(sent.invitation.id));
    assert.equal(resent.status, 200, resent.text);
    const demote = await harness
      .as(harness.tenant.owner.token)
      .patch(`/v1/orgs/${harness.tenant.orgId}/members/${promoted.memberId}`, { role: 'member' });
    assert.equal(demote.status, 200, demote.text);
    const accept = await harness.as(invitee.token).post(`/v1/invitations/${resent.body.token}/accept`);
    assert.deepEqual([accept.status, accept.body.error], [404, 'invitation_not_found'], accept.text);
  });

  it('a resend and an accept with the old link at once: one of them wins, never both', {
    skip: testBackend !== 'postgres' && 'needs PostgreSQL: requests overlap only there',
  }, async () => {
    for (let round = 0; round < 3; round++) {
      const invitee = await signUp(harness.app.url, 'raced');
      const sent = (await invite(invitee.email)).body;
      const lock = await holdLocks(
        harness.app,
        'SELECT 1 FROM invitations WHERE organization_id = $1 AND id = $2 FOR UPDATE',
        [harness.tenant.orgId, sent.invitation.id],
      );
      const requests = Promise.all([
        harness.as(invitee.token).post(`/v1/invitations/${sent.token}/accept`),
        harness.as(harness.tenant.owner.token).post(resendPath(sent.invitation.id)),
      ]);
      await lock.waitForBlocked(2);
      await lock.release();
      const [accept, resend] = await requests;
      const outcome = [accept.status, resend.status];
      assert.ok(
        (outcome[0] === 200 && outcome[1] === 404) || (outcome[0] === 404 && outcome[1] === 200),
        `accept ${accept.text} / resend ${resend.text}`,
      );
      if (resend.status === 200) {
        // The resend won: its new link is the one that joins.
        const joined = await harness.as(invitee.token).post(`/v1/invitations/${resend.body.token}/accept`);
        assert.equal(joined.status, 200, joined.text);
      }
    }
  });

  // These flows' statements stay on one tenant (test/db/tenant-routing.ts): on a database distributed
  // by tenant, each runs on one node, and the Citus tier replays them.
  it('their statements stay on one tenant', async () => {
    await tenantRouting.assertStatementsStayOnOneTenant(harness.app.db, 10);
  });
});
