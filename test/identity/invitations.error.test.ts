import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { testBackend } from '../support/app.ts';
import { createTenant, signUp, uniqueEmail } from '../support/fixtures.ts';
import { holdLocks } from '../support/held-locks.ts';
import type { api, ApiResponse } from '../support/http.ts';
import { membershipOf } from '../support/identity.ts';
import type { z } from 'zod';
import type { createdInvitationSchema } from '../../src/modules/invitations/index.ts';
import { useTenantApp } from '../support/harness.ts';

describe('invitations: documented errors', () => {
  const harness = useTenantApp();

  it('invitations: wrong email 403, reuse 404, already a member 409', async () => {
    const owner = harness.as(harness.tenant.owner.token);
    const invited = await signUp(harness.app.url, 'invited');
    const invitation = await owner.post(`/v1/orgs/${harness.tenant.orgId}/invitations`, {
      email: invited.email,
      role: 'member',
    });
    const wrongPerson = await harness
      .as(harness.tenant.outsider.token)
      .post(`/v1/invitations/${invitation.body.token}/accept`);
    assert.equal(wrongPerson.status, 403);
    assert.equal(wrongPerson.body.error, 'forbidden');
    assert.equal((await harness.as(invited.token).post(`/v1/invitations/${invitation.body.token}/accept`)).status, 200);
    const reused = await harness.as(invited.token).post(`/v1/invitations/${invitation.body.token}/accept`);
    assert.equal(reused.status, 404);
    assert.equal(reused.body.error, 'invitation_not_found');
    // Someone who became a member another way (SCIM provisioning) after being invited: the invitation is 409.
    const provisioned = await signUp(harness.app.url, 'provisioned');
    const pending = await owner.post(`/v1/orgs/${harness.tenant.orgId}/invitations`, {
      email: provisioned.email,
      role: 'admin',
    });
    assert.equal(pending.status, 201, pending.text);
    await harness.app.db.transaction((tx) =>
      membershipOf(harness.app).ensureMember(tx, harness.tenant.orgId, provisioned.userId, 'member'),
    );
    const duplicate = await harness.as(provisioned.token).post(`/v1/invitations/${pending.body.token}/accept`);
    assert.equal(duplicate.status, 409);
    assert.equal(duplicate.body.error, 'already_member');
  });

  it('inviting a member of the organization is refused up front: 409 already_member, nothing stored', async () => {
    const local = await createTenant(harness.app.url);
    const invitationsTo = async (email: string) =>
      (
        await harness.app.db.query<{ count: number }>(
          'SELECT count(*)::int AS count FROM invitations WHERE organization_id = $1 AND lower(email) = lower($2)',
          [local.orgId, email],
        )
      ).rows[0]!.count;
    // A suspended member (SCIM) could not accept an invitation either.
    await harness.app.db.transaction((tx) =>
      membershipOf(harness.app).setMemberStatus(tx, local.orgId, local.admin.memberId, 'suspended'),
    );
    const cases = [
      [local.member.email, 'member'],
      [local.member.email.toUpperCase(), 'admin'],
      [local.owner.email, 'member'],
      [local.admin.email, 'member'],
    ] as const;
    for (const [email, role] of cases) {
      const before = await invitationsTo(email);
      const response = await harness.as(local.owner.token).post(`/v1/orgs/${local.orgId}/invitations`, { email, role });
      assert.equal(response.status, 409, `${email}: ${response.text}`);
      assert.equal(response.body.error, 'already_member');
      assert.equal(typeof response.body.message, 'string');
      assert.equal(response.body.token, undefined);
      assert.equal(await invitationsTo(email), before, `${email}: an invitation was stored`);
    }
    // A member of another organization is invited as usual.
    const invited = await harness
      .as(local.owner.token)
      .post(`/v1/orgs/${local.orgId}/invitations`, { email: harness.tenant.member.email, role: 'member' });
    assert.equal(invited.status, 201, invited.text);
    // The refusal is documented.
    const openapi = await harness.as().get('/openapi.json');
    const responses = openapi.body.paths['/v1/orgs/{organizationId}/invitations'].post.responses;
    assert.ok(responses['409'], 'createInvitation documents 409');
    assert.match(responses['409'].description, /already_member/);
  });

  it('an invitation sent before a removal does not bring the removed member back; accepting one spends the others', async () => {
    const local = await createTenant(harness.app.url);
    const owner = harness.as(local.owner.token);
    const person = await signUp(harness.app.url, 'twice-invited');
    const invite = async () =>
      (await owner.post(`/v1/orgs/${local.orgId}/invitations`, { email: person.email, role: 'member' })).body
        .token as string;
    const [first, second, third] = [await invite(), await invite(), await invite()];
    const accepted = await harness.as(person.token).post(`/v1/invitations/${first}/accept`);
    assert.equal(accepted.status, 200, accepted.text);
    assert.equal((await owner.delete(`/v1/orgs/${local.orgId}/members/${accepted.body.member.id}`)).status, 204);
    for (const token of [second, third]) {
      const back = await harness.as(person.token).post(`/v1/invitations/${token}/accept`);
      assert.equal(back.status, 404, back.text);
      assert.equal(back.body.error, 'invitation_not_found');
    }
    assert.equal((await harness.as(person.token).get(`/v1/orgs/${local.orgId}/members`)).status, 404);
    // An invitation sent after the removal works: the administrators asked for it.
    const after = await harness.as(person.token).post(`/v1/invitations/${await invite()}/accept`);
    assert.equal(after.status, 200, after.text);
  });

  it("an invitation sent while its sender's suspension is committing is refused, not left working", {
    skip: testBackend !== 'postgres' && 'needs PostgreSQL: requests overlap only there',
  }, async () => {
    const local = await createTenant(harness.app.url);
    const email = uniqueEmail('raced');
    const lockWaits = async () =>
      (
        await harness.app.db.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
        )
      ).rows[0]!.n;
    let invitation: Promise<ApiResponse> | undefined;
    // SCIM's deactivation, held open: the request starts while the admin still looks active to everyone else.
    await harness.app.db.transaction(async (tx) => {
      await membershipOf(harness.app).setMemberStatus(tx, local.orgId, local.admin.memberId, 'suspended');
      invitation = harness.as(local.admin.token).post(`/v1/orgs/${local.orgId}/invitations`, { email, role: 'admin' });
      let finished = false;
      void invitation.finally(() => (finished = true));
      const deadline = Date.now() + 15_000;
      // Commit once the request waits for the suspension, or has gone through without waiting.
      while (!finished && (await lockWaits()) === 0) {
        assert.ok(Date.now() < deadline, 'the invitation request neither finished nor waited');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    });
    // It waited for the suspension and then saw it, as a suspended member's request does.
    const created = await invitation!;
    assert.equal(created.status, 404, `an invitation was sent by a suspended admin: ${created.text}`);
    assert.equal(created.body.error, 'organization_not_found');
    const person = await harness.as().post('/v1/auth/sign-up', { email, password: 'raced password', name: 'Raced' });
    assert.equal((await harness.as(person.body.sessionToken).get(`/v1/orgs/${local.orgId}/members`)).status, 404);
  });

  it('listing invitations: malformed organization id, limit and cursor are 400 invalid_request pointing at the parameter', async () => {
    const owner = harness.as(harness.tenant.owner.token);
    const cases: [string, string][] = [
      ['/v1/orgs/not-an-org/invitations', 'organizationId'],
      ['/v1/orgs/mem_01jqz3v6b8e9f0g1h2j3k4m5n6/invitations', 'organizationId'],
      [`/v1/orgs/${harness.tenant.orgId}/invitations?limit=0`, 'limit'],
      [`/v1/orgs/${harness.tenant.orgId}/invitations?limit=101`, 'limit'],
      [`/v1/orgs/${harness.tenant.orgId}/invitations?limit=abc`, 'limit'],
      [`/v1/orgs/${harness.tenant.orgId}/invitations?cursor=garbage`, 'cursor'],
      [
        `/v1/orgs/${harness.tenant.orgId}/invitations?cursor=${Buffer.from('{"after":1}').toString('base64url')}`,
        'cursor',
      ],
      [`/v1/orgs/${harness.tenant.orgId}/invitations?cursor=${'A'.repeat(201)}`, 'cursor'],
    ];
    for (const [path, parameter] of cases) {
      const response = await owner.get(path);
      assert.equal(response.status, 400, `${path}: ${response.text}`);
      assert.equal(response.body.error, 'invalid_request');
      assert.deepEqual(response.body.details[0].path, [parameter], path);
    }
  });

  it('revoking an invitation: a malformed id is 400 invalid_request pointing at it', async () => {
    const owner = harness.as(harness.tenant.owner.token);
    const malformed = [
      'not-an-id',
      'inv_',
      'inv_01jqz3v6b8e9f0g1h2j3k4m5n',
      'inv_01jqz3v6b8e9f0g1h2j3k4m5n6x',
      'inv_01JQZ3V6B8E9F0G1H2J3K4M5N6',
      'inv_8zzzzzzzzzzzzzzzzzzzzzzzzz',
      'inv_01jqz3v6b8e9f0g1h2j3k4m5nu',
      'mem_01jqz3v6b8e9f0g1h2j3k4m5n6',
      '01jqz3v6b8e9f0g1h2j3k4m5n6',
      'opi_whatever',
    ];
    for (const id of malformed) {
      const response = await owner.delete(`/v1/orgs/${harness.tenant.orgId}/invitations/${encodeURIComponent(id)}`);
      assert.equal(response.status, 400, `${id}: ${response.text}`);
      assert.equal(response.body.error, 'invalid_request');
      assert.deepEqual(response.body.details[0].path, ['invitationId'], id);
    }
    const badOrg = await owner.delete('/v1/orgs/not-an-org/invitations/inv_01jqz3v6b8e9f0g1h2j3k4m5n6');
    assert.equal(badOrg.status, 400);
    assert.deepEqual(badOrg.body.details[0].path, ['organizationId']);
  });

  it("revoking an invitation that is not pending here is 404 invitation_not_found: unknown, another organization's, accepted, expired, ended, revoked", async () => {
    const local = await createTenant(harness.app.url);
    const owner = harness.as(local.owner.token);
    const path = `/v1/orgs/${local.orgId}/invitations`;
    const invite = async (client: ReturnType<typeof api>, orgId = local.orgId, email = uniqueEmail('invitee')) => {
      const response = await client.post(`/v1/orgs/${orgId}/invitations`, { email, role: 'member' });
      assert.equal(response.status, 201, response.text);
      return response.body as z.infer<typeof createdInvitationSchema>;
    };
    const elsewhere = await invite(harness.as(local.otherAdmin.token), local.otherOrgId);
    const joiner = await signUp(harness.app.url, 'joiner');
    const accepted = await invite(owner, local.orgId, joiner.email);
    assert.equal((await harness.as(joiner.token).post(`/v1/invitations/${accepted.token}/accept`)).status, 200);
    const expired = await invite(owner);
    await harness.app.db.query(`UPDATE invitations SET expires_at = now() - interval '1 second' WHERE id = $1`, [
      expired.invitation.id,
    ]);
    const ended = await invite(harness.as(local.admin.token));
    assert.equal(
      (await owner.patch(`/v1/orgs/${local.orgId}/members/${local.admin.memberId}`, { role: 'member' })).status,
      200,
    );
    const revoked = await invite(owner);
    assert.equal((await owner.delete(`${path}/${revoked.invitation.id}`)).status, 204);
    const cases: [string, string][] = [
      ['unknown', 'inv_01jqz3v6b8e9f0g1h2j3k4m5n6'],
      ["another organization's", elsewhere.invitation.id],
      ['accepted', accepted.invitation.id],
      ['expired', expired.invitation.id],
      ['ended (sender demoted)', ended.invitation.id],
      ['revoked already', revoked.invitation.id],
    ];
    for (const [label, id] of cases) {
      const response = await owner.delete(`${path}/${id}`);
      assert.equal(response.status, 404, `${label}: ${response.text}`);
      assert.equal(response.body.error, 'invitation_not_found', label);
      assert.equal(typeof response.body.message, 'string');
    }
    // None of them changed: the other organization's invitation is still pending there, the accepted one stays accepted.
    const theirs = await harness.as(local.otherAdmin.token).get(`/v1/orgs/${local.otherOrgId}/invitations`);
    assert.deepEqual(
      theirs.body.invitations.map((i: { id: string }) => i.id),
      [elsewhere.invitation.id],
    );
    assert.equal((await harness.as(joiner.token).get(`/v1/orgs/${local.orgId}/members`)).status, 200);
    // Every answer is documented.
    const openapi = await harness.as().get('/openapi.json');
    const item = openapi.body.paths['/v1/orgs/{organizationId}/invitations/{invitationId}'].delete;
    for (const status of ['204', '400', '401', '403', '404'])
      assert.ok(item.responses[status], `revokeInvitation documents ${status}`);
    assert.match(item.responses['404'].description, /invitation_not_found/);
    const list = openapi.body.paths['/v1/orgs/{organizationId}/invitations'].get;
    for (const status of ['200', '400', '401', '403', '404'])
      assert.ok(list.responses[status], `listInvitations documents ${status}`);
  });

  it('an invitation ended while an accept or a revocation of it waits is ended for them too: both 404', {
    skip: testBackend !== 'postgres' && 'needs PostgreSQL: requests overlap only there',
  }, async () => {
    const local = await createTenant(harness.app.url);
    const person = await signUp(harness.app.url, 'raced-invitee');
    const created = await harness
      .as(local.owner.token)
      .post(`/v1/orgs/${local.orgId}/invitations`, { email: person.email, role: 'member' });
    const id = created.body.invitation.id as string;
    const lockWaits = async () =>
      (
        await harness.app.db.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
        )
      ).rows[0]!.n;
    let requests: Promise<[ApiResponse, ApiResponse]> | undefined;
    // The invitation row is held; an accept and a revocation start and wait for it. The end is then written
    // as by a revocation that began after both of them did (its time is later than their start), and committed.
    await harness.app.db.transaction(async (tx) => {
      await tx.query('SELECT 1 FROM invitations WHERE id = $1 FOR UPDATE', [id]);
      requests = Promise.all([
        harness.as(person.token).post(`/v1/invitations/${created.body.token}/accept`),
        harness.as(local.admin.token).delete(`/v1/orgs/${local.orgId}/invitations/${id}`),
      ]);
      const deadline = Date.now() + 15_000;
      while ((await lockWaits()) < 2) {
        assert.ok(Date.now() < deadline, 'the accept and the revocation never both waited for the invitation');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await tx.query('UPDATE invitations SET expires_at = clock_timestamp() WHERE id = $1', [id]);
    });
    const [accept, revoke] = await requests!;
    assert.equal(accept.status, 404, `an ended invitation was accepted: ${accept.text}`);
    assert.equal(accept.body.error, 'invitation_not_found');
    assert.equal(revoke.status, 404, `an ended invitation was revoked again: ${revoke.text}`);
    assert.equal(revoke.body.error, 'invitation_not_found');
    assert.equal((await harness.as(person.token).get(`/v1/orgs/${local.orgId}/members`)).status, 404);
  });

  it('two revocations of one invitation at once: one 204, the other 404', {
    skip: testBackend !== 'postgres' && 'needs PostgreSQL: requests overlap only there',
  }, async () => {
    const local = await createTenant(harness.app.url);
    const created = await harness
      .as(local.owner.token)
      .post(`/v1/orgs/${local.orgId}/invitations`, { email: uniqueEmail('twice-revoked'), role: 'member' });
    const id = created.body.invitation.id as string;
    const lock = await holdLocks(harness.app, 'SELECT 1 FROM invitations WHERE id = $1 FOR UPDATE', [id]);
    const requests = Promise.all(
      [local.owner, local.admin].map((by) => harness.as(by.token).delete(`/v1/orgs/${local.orgId}/invitations/${id}`)),
    );
    await lock.waitForBlocked(2);
    await lock.release();
    const statuses = (await requests).map((response) => response.status).sort();
    assert.deepEqual(statuses, [204, 404]);
  });

  it('two invitations of one person accepted at once: one 200, the other 404 (ended by the first), never a deadlock', {
    skip: testBackend !== 'postgres' && 'needs PostgreSQL: requests overlap only there',
  }, async () => {
    const local = await createTenant(harness.app.url);
    const person = await signUp(harness.app.url, 'accepts-twice');
    const invite = (role: 'admin' | 'member') =>
      harness.as(local.owner.token).post(`/v1/orgs/${local.orgId}/invitations`, { email: person.email, role });
    const invitations = [(await invite('admin')).body, (await invite('member')).body];
    // Both invitation rows held, so that the two accepts go on at the same moment once released.
    const lock = await holdLocks(harness.app, 'SELECT 1 FROM invitations WHERE id = ANY($1::text[]) FOR UPDATE', [
      invitations.map((i) => i.invitation.id),
    ]);
    const requests = Promise.all(
      invitations.map((i) => harness.as(person.token).post(`/v1/invitations/${i.token}/accept`)),
    );
    await lock.waitForBlocked(2);
    await lock.release();
    const responses = await requests;
    assert.deepEqual(responses.map((r) => r.status).sort(), [200, 404], responses.map((r) => r.text).join(' / '));
    const [winner, loser] = responses[0]!.status === 200 ? [0, 1] : [1, 0];
    assert.equal(responses[loser]!.body.error, 'invitation_not_found');
    const members = await harness.app.db.query<{ role: string }>(
      'SELECT role FROM members WHERE organization_id = $1 AND user_id = $2',
      [local.orgId, person.userId],
    );
    assert.deepEqual(
      members.rows.map((row) => row.role),
      [invitations[winner]!.invitation.role],
    );
  });

  it('two invitations of one person accepted at once, again and again: exactly one 200 and one 404 each time', async () => {
    const local = await createTenant(harness.app.url);
    for (let round = 0; round < 15; round++) {
      const person = await signUp(harness.app.url, 'accepts-twice');
      const invite = async (role: 'admin' | 'member') =>
        (await harness.as(local.owner.token).post(`/v1/orgs/${local.orgId}/invitations`, { email: person.email, role }))
          .body.token as string;
      const tokens = [await invite('admin'), await invite('member')];
      const responses = await Promise.all(
        tokens.map((token) => harness.as(person.token).post(`/v1/invitations/${token}/accept`)),
      );
      const outcome = responses.map((r) => `${r.status} ${r.status === 200 ? '' : r.body.error}`.trim()).sort();
      assert.deepEqual(
        outcome,
        ['200', '404 invitation_not_found'],
        `round ${round}: ${responses.map((r) => r.text).join(' / ')}`,
      );
    }
  });
});
