import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { isValidTimestamp } from '../../src/http/schemas.ts';
import { startTestApp, testBackend, type TestApp } from '../support/app.ts';
import { addMember, createTenant, signUp, uniqueEmail, type Tenant } from '../support/fixtures.ts';
import { holdLocks } from '../support/held-locks.ts';
import { api, type ApiResponse } from '../support/http.ts';
import { membershipOf } from '../support/identity.ts';

// The sign-in limits count in fixed 15-minute windows: a run that a window's end cuts in two starts
// counting again halfway, so it is run again, whole, in the next window.
const windowOf = () => Math.floor(Date.now() / 1000 / (15 * 60));
async function inOneWindow(run: () => Promise<void>) {
  const window = windowOf();
  try {
    await run();
  } catch (error) {
    if (windowOf() === window) throw error;
    await run();
  }
}

describe('identity routes: documented errors', () => {
  let app: TestApp;
  let tenant: Tenant;
  before(async () => {
    app = await startTestApp();
    tenant = await createTenant(app.url);
  });
  after(() => app.close());

  it('validation failures are 400 invalid_request with a detail path per problem', async () => {
    const response = await api(app.url).post('/v1/auth/sign-up', { email: 'not-an-email', password: 'short', name: '' });
    assert.equal(response.status, 400);
    assert.equal(response.body.error, 'invalid_request');
    const paths = response.body.details.map((d: { path: unknown[] }) => d.path.join('.')).sort();
    assert.deepEqual(paths, ['email', 'name', 'password']);
    for (const detail of response.body.details) assert.equal(typeof detail.message, 'string');
  });

  it('path and query validation point at the parameter', async () => {
    const badId = await api(app.url, tenant.owner.token).get('/v1/orgs/not-an-org/members');
    assert.equal(badId.status, 400);
    assert.deepEqual(badId.body.details[0].path, ['organizationId']);
    const badLimit = await api(app.url, tenant.owner.token).get(`/v1/orgs/${tenant.orgId}/members?limit=1000`);
    assert.equal(badLimit.status, 400);
    assert.deepEqual(badLimit.body.details[0].path, ['limit']);
    // Digits only: coercion would have read each of these as a number.
    for (const limit of ['0x10', '1e1', '%2B5', '%205', '5.0', '']) {
      const notDigits = await api(app.url, tenant.owner.token).get(`/v1/orgs/${tenant.orgId}/members?limit=${limit}`);
      assert.equal(notDigits.status, 400, limit);
      assert.deepEqual(notDigits.body.details, [{ message: 'Must be a whole number written in digits', path: ['limit'], in: 'querystring' }], limit);
    }
    assert.equal((await api(app.url, tenant.owner.token).get(`/v1/orgs/${tenant.orgId}/members?limit=07`)).status, 200);
    const badCursor = await api(app.url, tenant.owner.token).get(`/v1/orgs/${tenant.orgId}/members?cursor=garbage`);
    assert.equal(badCursor.status, 400);
    assert.deepEqual(badCursor.body.details[0].path, ['cursor']);
  });

  it('malformed JSON is 400, an unsupported content type 415, an oversized body 413, an unknown route a JSON 404', async () => {
    const client = api(app.url, tenant.owner.token);
    const malformed = await client.post('/v1/orgs', undefined, { raw: '{"name": ', headers: { 'content-type': 'application/json' } });
    assert.equal(malformed.status, 400);
    assert.equal(malformed.body.error, 'invalid_request');
    const wrongType = await client.post('/v1/orgs', undefined, { raw: 'name=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    assert.equal(wrongType.status, 415);
    assert.equal(typeof wrongType.body.error, 'string');
    const plain = await client.post('/v1/orgs', undefined, { raw: 'x', headers: { 'content-type': 'text/plain' } });
    assert.equal(plain.status, 415);
    const huge = await client.post('/v1/orgs', undefined, { raw: JSON.stringify({ name: 'x'.repeat(2 * 1024 * 1024) }), headers: { 'content-type': 'application/json' } });
    assert.equal(huge.status, 413);
    assert.equal(huge.body.error, 'payload_too_large');
    const unknown = await client.get('/v1/nothing-here');
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.error, 'not_found');
  });

  it('a body holding an unpaired surrogate escape is 400 and stores nothing; a paired one is kept as sent', async () => {
    const teams = async () => (await api(app.url, tenant.owner.token).get(`/v1/orgs/${tenant.orgId}/teams`)).body.teams.map((team: { name: string }) => team.name);
    const before = await teams();
    const lone: [string, (string | number)[]][] = [
      ['{"name":"Lone \\ud800 high"}', ['name']],
      ['{"name":"Lone \\uDC00 low"}', ['name']],
      ['{"name":"ok","\\ud83d":1}', ['\ud83d']],
    ];
    for (const [raw, path] of lone) {
      const refused = await api(app.url, tenant.owner.token).post(`/v1/orgs/${tenant.orgId}/teams`, undefined, { raw, headers: { 'content-type': 'application/json' } });
      assert.equal(refused.status, 400, raw);
      assert.equal(refused.body.error, 'invalid_request');
      assert.match(refused.body.message, /unpaired surrogates/);
      assert.deepEqual(refused.body.details[0].path, path, raw);
    }
    assert.deepEqual(await teams(), before, 'nothing was stored, not even with U+FFFD in place of the escape');
    const paired = await api(app.url, tenant.owner.token).post(`/v1/orgs/${tenant.orgId}/teams`, undefined, { raw: '{"name":"Paired \\ud83d\\ude00"}', headers: { 'content-type': 'application/json' } });
    assert.equal(paired.status, 201, paired.text);
    assert.ok((await teams()).includes('Paired \u{1F600}'));
  });

  it('sign-up with a taken email is 409 email_taken (case-insensitively)', async () => {
    const response = await api(app.url).post('/v1/auth/sign-up', { email: tenant.member.email.toUpperCase(), password: 'another password', name: 'Dup' });
    assert.equal(response.status, 409);
    assert.equal(response.body.error, 'email_taken');
  });

  it('sign-up can be disabled', async () => {
    const closed = await startTestApp({ signUpEnabled: false });
    try {
      const response = await api(closed.url).post('/v1/auth/sign-up', { email: uniqueEmail('x'), password: 'long enough pw', name: 'X' });
      assert.equal(response.status, 403);
      assert.equal(response.body.error, 'sign_up_disabled');
    } finally {
      await closed.close();
    }
  });

  it('wrong password and unknown account are the same 401 invalid_credentials', async () => {
    const wrong = await api(app.url).post('/v1/auth/sign-in', { email: tenant.member.email, password: 'wrong password' });
    const unknown = await api(app.url).post('/v1/auth/sign-in', { email: uniqueEmail('nobody'), password: 'wrong password' });
    assert.deepEqual([wrong.status, wrong.body], [401, { error: 'invalid_credentials', message: 'Email or password is wrong' }]);
    assert.deepEqual([unknown.status, unknown.body], [401, wrong.body]);
  });

  it('sign-in attempts per account are limited: 429 rate_limited with Retry-After, even with the right password', async () => {
    await inOneWindow(async () => {
      const user = await signUp(app.url, 'limited');
      for (let attempt = 0; attempt < 10; attempt++) {
        const response = await api(app.url).post('/v1/auth/sign-in', { email: user.email, password: 'guess' });
        assert.equal(response.status, 401);
      }
      const limited = await api(app.url).post('/v1/auth/sign-in', { email: user.email, password: user.password });
      assert.equal(limited.status, 429);
      assert.equal(limited.body.error, 'rate_limited');
      assert.equal(typeof limited.body.message, 'string');
      assert.ok(Number(limited.headers.get('retry-after')) > 0);
      assert.equal(limited.headers.get('ratelimit-remaining'), '0');
    });
  });

  it('the sign-in limit is shared by every process on one database', { skip: testBackend !== 'postgres' && 'several processes share one database only on PostgreSQL' }, async () => {
    const second = await startTestApp({}, { shareDatabaseWith: app });
    try {
      const user = await signUp(app.url, 'shared');
      const results = await Promise.all(
        Array.from({ length: 12 }, (_, index) => api(index % 2 ? app.url : second.url).post('/v1/auth/sign-in', { email: user.email, password: 'guess' })),
      );
      const statuses = results.map((r) => r.status).sort();
      assert.deepEqual(statuses, [...Array(10).fill(401), 429, 429]);
    } finally {
      await second.close();
    }
  });

  it('invitations: wrong email 403, reuse 404, already a member 409', async () => {
    const owner = api(app.url, tenant.owner.token);
    const invited = await signUp(app.url, 'invited');
    const invitation = await owner.post(`/v1/orgs/${tenant.orgId}/invitations`, { email: invited.email, role: 'member' });
    const wrongPerson = await api(app.url, tenant.outsider.token).post(`/v1/invitations/${invitation.body.token}/accept`);
    assert.equal(wrongPerson.status, 403);
    assert.equal(wrongPerson.body.error, 'forbidden');
    assert.equal((await api(app.url, invited.token).post(`/v1/invitations/${invitation.body.token}/accept`)).status, 200);
    const reused = await api(app.url, invited.token).post(`/v1/invitations/${invitation.body.token}/accept`);
    assert.equal(reused.status, 404);
    assert.equal(reused.body.error, 'invitation_not_found');
    // Someone who became a member another way (SCIM provisioning) after being invited: the invitation is 409.
    const provisioned = await signUp(app.url, 'provisioned');
    const pending = await owner.post(`/v1/orgs/${tenant.orgId}/invitations`, { email: provisioned.email, role: 'admin' });
    assert.equal(pending.status, 201, pending.text);
    await app.db.transaction((tx) => membershipOf(app).ensureMember(tx, tenant.orgId, provisioned.userId, 'member'));
    const duplicate = await api(app.url, provisioned.token).post(`/v1/invitations/${pending.body.token}/accept`);
    assert.equal(duplicate.status, 409);
    assert.equal(duplicate.body.error, 'already_member');
  });

  it('inviting a member of the organization is refused up front: 409 already_member, nothing stored', async () => {
    const local = await createTenant(app.url);
    const invitationsTo = async (email: string) =>
      (await app.db.query<{ count: number }>(
        'SELECT count(*)::int AS count FROM invitations WHERE organization_id = $1 AND lower(email) = lower($2)',
        [local.orgId, email],
      )).rows[0]!.count;
    // A suspended member (SCIM) could not accept an invitation either.
    await app.db.transaction((tx) => membershipOf(app).setMemberStatus(tx, local.orgId, local.admin.memberId, 'suspended'));
    const cases = [
      [local.member.email, 'member'],
      [local.member.email.toUpperCase(), 'admin'],
      [local.owner.email, 'member'],
      [local.admin.email, 'member'],
    ] as const;
    for (const [email, role] of cases) {
      const before = await invitationsTo(email);
      const response = await api(app.url, local.owner.token).post(`/v1/orgs/${local.orgId}/invitations`, { email, role });
      assert.equal(response.status, 409, `${email}: ${response.text}`);
      assert.equal(response.body.error, 'already_member');
      assert.equal(typeof response.body.message, 'string');
      assert.equal(response.body.token, undefined);
      assert.equal(await invitationsTo(email), before, `${email}: an invitation was stored`);
    }
    // A member of another organization is invited as usual.
    const invited = await api(app.url, local.owner.token).post(`/v1/orgs/${local.orgId}/invitations`, { email: tenant.member.email, role: 'member' });
    assert.equal(invited.status, 201, invited.text);
    // The refusal is documented.
    const openapi = await api(app.url).get('/openapi.json');
    const responses = openapi.body.paths['/v1/orgs/{organizationId}/invitations'].post.responses;
    assert.ok(responses['409'], 'createInvitation documents 409');
    assert.match(responses['409'].description, /already_member/);
  });

  it('an invitation sent before a removal does not bring the removed member back; accepting one spends the others', async () => {
    const local = await createTenant(app.url);
    const owner = api(app.url, local.owner.token);
    const person = await signUp(app.url, 'twice-invited');
    const invite = async () => (await owner.post(`/v1/orgs/${local.orgId}/invitations`, { email: person.email, role: 'member' })).body.token as string;
    const [first, second, third] = [await invite(), await invite(), await invite()];
    const accepted = await api(app.url, person.token).post(`/v1/invitations/${first}/accept`);
    assert.equal(accepted.status, 200, accepted.text);
    assert.equal((await owner.delete(`/v1/orgs/${local.orgId}/members/${accepted.body.member.id}`)).status, 204);
    for (const token of [second, third]) {
      const back = await api(app.url, person.token).post(`/v1/invitations/${token}/accept`);
      assert.equal(back.status, 404, back.text);
      assert.equal(back.body.error, 'invitation_not_found');
    }
    assert.equal((await api(app.url, person.token).get(`/v1/orgs/${local.orgId}/members`)).status, 404);
    // An invitation sent after the removal works: the administrators asked for it.
    const after = await api(app.url, person.token).post(`/v1/invitations/${await invite()}/accept`);
    assert.equal(after.status, 200, after.text);
  });

  it('the owner cannot be demoted or removed except by transfer; team names are unique', async () => {
    const admin = api(app.url, tenant.admin.token);
    const demote = await admin.patch(`/v1/orgs/${tenant.orgId}/members/${tenant.owner.memberId}`, { role: 'member' });
    assert.equal(demote.status, 409);
    assert.equal(demote.body.error, 'owner_role_fixed');
    const promote = await admin.patch(`/v1/orgs/${tenant.orgId}/members/${tenant.member.memberId}`, { role: 'owner' });
    assert.equal(promote.status, 400);
    const remove = await admin.delete(`/v1/orgs/${tenant.orgId}/members/${tenant.owner.memberId}`);
    assert.equal(remove.status, 409);
    assert.equal(remove.body.error, 'owner_cannot_be_removed');
    await admin.post(`/v1/orgs/${tenant.orgId}/teams`, { name: 'Same' });
    const duplicate = await admin.post(`/v1/orgs/${tenant.orgId}/teams`, { name: 'Same' });
    assert.equal(duplicate.status, 409);
    assert.equal(duplicate.body.error, 'team_exists');
  });

  // Races: the requests under test queue behind a transaction holding the members' rows (PostgreSQL,
  // where requests run side by side; on PGlite's one connection they cannot overlap).
  const owners = async (orgId: string) =>
    (await app.db.query<{ id: string }>("SELECT id FROM members WHERE organization_id = $1 AND role = 'owner'", [orgId])).rows.map((row) => row.id);

  it('a transfer of ownership and a demotion or removal of its new owner at once: one organization owner remains', { skip: testBackend !== 'postgres' && 'needs PostgreSQL: requests overlap only there' }, async () => {
    for (const action of ['demote', 'remove'] as const) {
      const local = await createTenant(app.url);
      const lock = await holdLocks(app, 'SELECT 1 FROM members WHERE id = $1 FOR UPDATE', [local.admin.memberId]);
      const path = `/v1/orgs/${local.orgId}/members/${local.admin.memberId}`;
      const requests = Promise.all([
        api(app.url, local.owner.token).post(`/v1/orgs/${local.orgId}/transfer-ownership`, { memberId: local.admin.memberId }),
        action === 'demote' ? api(app.url, local.owner.token).patch(path, { role: 'member' }) : api(app.url, local.owner.token).delete(path),
      ]);
      await lock.waitForBlocked(2);
      await lock.release();
      const [transfer, change] = await requests;
      // Either order is fine, each seeing what the other left; never both passing their checks.
      const transferFirst = transfer.status === 200 && change.status === 409;
      const changeFirst = [200, 204].includes(change.status) && (action === 'demote' ? transfer.status === 200 : transfer.status === 404);
      assert.ok(transferFirst || changeFirst, `${action}: transfer ${transfer.status} ${transfer.text}, ${action} ${change.status} ${change.text}`);
      const owner = transfer.status === 200 ? local.admin.memberId : local.owner.memberId;
      assert.deepEqual(await owners(local.orgId), [owner], action);
    }
  });

  it('two transfers of ownership at once by one owner: one succeeds, the other is 403 (no longer the owner), never a 500', { skip: testBackend !== 'postgres' && 'needs PostgreSQL: requests overlap only there' }, async () => {
    const local = await createTenant(app.url);
    const lock = await holdLocks(app, 'SELECT 1 FROM members WHERE id = $1 FOR UPDATE', [local.owner.memberId]);
    const requests = Promise.all(
      [local.admin, local.member].map((to) => api(app.url, local.owner.token).post(`/v1/orgs/${local.orgId}/transfer-ownership`, { memberId: to.memberId })),
    );
    await lock.waitForBlocked(2);
    await lock.release();
    const statuses = (await requests).map((response) => response.status).sort();
    assert.deepEqual(statuses, [200, 403]);
    assert.equal((await owners(local.orgId)).length, 1);
  });

  it('an invitation sent while its sender\'s suspension is committing is refused, not left working', { skip: testBackend !== 'postgres' && 'needs PostgreSQL: requests overlap only there' }, async () => {
    const local = await createTenant(app.url);
    const email = uniqueEmail('raced');
    const lockWaits = async () =>
      (await app.db.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
      )).rows[0]!.n;
    let invitation: Promise<ApiResponse> | undefined;
    // SCIM's deactivation, held open: the request starts while the admin still looks active to everyone else.
    await app.db.transaction(async (tx) => {
      await membershipOf(app).setMemberStatus(tx, local.orgId, local.admin.memberId, 'suspended');
      invitation = api(app.url, local.admin.token).post(`/v1/orgs/${local.orgId}/invitations`, { email, role: 'admin' });
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
    const person = await api(app.url).post('/v1/auth/sign-up', { email, password: 'raced password', name: 'Raced' });
    assert.equal((await api(app.url, person.body.sessionToken).get(`/v1/orgs/${local.orgId}/members`)).status, 404);
  });

  it('unknown member, team and API key ids are 404 with their own error names', async () => {
    const admin = api(app.url, tenant.admin.token);
    const ghostMember = 'mem_01jqz3v6b8e9f0g1h2j3k4m5n6';
    assert.equal((await admin.patch(`/v1/orgs/${tenant.orgId}/members/${ghostMember}`, { role: 'admin' })).body.error, 'member_not_found');
    assert.equal((await admin.post(`/v1/orgs/${tenant.orgId}/teams/team_01jqz3v6b8e9f0g1h2j3k4m5n6/members`, { memberId: tenant.member.memberId })).body.error, 'team_not_found');
    assert.equal((await admin.delete(`/v1/orgs/${tenant.orgId}/api-keys/key_01jqz3v6b8e9f0g1h2j3k4m5n6`)).body.error, 'api_key_not_found');
  });

  it('listing invitations: malformed organization id, limit and cursor are 400 invalid_request pointing at the parameter', async () => {
    const owner = api(app.url, tenant.owner.token);
    const cases: [string, string][] = [
      ['/v1/orgs/not-an-org/invitations', 'organizationId'],
      ['/v1/orgs/mem_01jqz3v6b8e9f0g1h2j3k4m5n6/invitations', 'organizationId'],
      [`/v1/orgs/${tenant.orgId}/invitations?limit=0`, 'limit'],
      [`/v1/orgs/${tenant.orgId}/invitations?limit=101`, 'limit'],
      [`/v1/orgs/${tenant.orgId}/invitations?limit=abc`, 'limit'],
      [`/v1/orgs/${tenant.orgId}/invitations?cursor=garbage`, 'cursor'],
      [`/v1/orgs/${tenant.orgId}/invitations?cursor=${Buffer.from('{"after":1}').toString('base64url')}`, 'cursor'],
      [`/v1/orgs/${tenant.orgId}/invitations?cursor=${'A'.repeat(201)}`, 'cursor'],
    ];
    for (const [path, parameter] of cases) {
      const response = await owner.get(path);
      assert.equal(response.status, 400, `${path}: ${response.text}`);
      assert.equal(response.body.error, 'invalid_request');
      assert.deepEqual(response.body.details[0].path, [parameter], path);
    }
  });

  it('revoking an invitation: a malformed id is 400 invalid_request pointing at it', async () => {
    const owner = api(app.url, tenant.owner.token);
    const malformed = [
      'not-an-id', 'inv_', 'inv_01jqz3v6b8e9f0g1h2j3k4m5n', 'inv_01jqz3v6b8e9f0g1h2j3k4m5n6x', 'inv_01JQZ3V6B8E9F0G1H2J3K4M5N6',
      'inv_8zzzzzzzzzzzzzzzzzzzzzzzzz', 'inv_01jqz3v6b8e9f0g1h2j3k4m5nu', 'mem_01jqz3v6b8e9f0g1h2j3k4m5n6', '01jqz3v6b8e9f0g1h2j3k4m5n6', 'opi_whatever',
    ];
    for (const id of malformed) {
      const response = await owner.delete(`/v1/orgs/${tenant.orgId}/invitations/${encodeURIComponent(id)}`);
      assert.equal(response.status, 400, `${id}: ${response.text}`);
      assert.equal(response.body.error, 'invalid_request');
      assert.deepEqual(response.body.details[0].path, ['invitationId'], id);
    }
    const badOrg = await owner.delete('/v1/orgs/not-an-org/invitations/inv_01jqz3v6b8e9f0g1h2j3k4m5n6');
    assert.equal(badOrg.status, 400);
    assert.deepEqual(badOrg.body.details[0].path, ['organizationId']);
  });

  it('revoking an invitation that is not pending here is 404 invitation_not_found: unknown, another organization\'s, accepted, expired, ended, revoked', async () => {
    const local = await createTenant(app.url);
    const owner = api(app.url, local.owner.token);
    const path = `/v1/orgs/${local.orgId}/invitations`;
    const invite = async (client: ReturnType<typeof api>, orgId = local.orgId, email = uniqueEmail('invitee')) => {
      const response = await client.post(`/v1/orgs/${orgId}/invitations`, { email, role: 'member' });
      assert.equal(response.status, 201, response.text);
      return response.body as { invitation: { id: string }; token: string };
    };
    const elsewhere = await invite(api(app.url, local.otherAdmin.token), local.otherOrgId);
    const joiner = await signUp(app.url, 'joiner');
    const accepted = await invite(owner, local.orgId, joiner.email);
    assert.equal((await api(app.url, joiner.token).post(`/v1/invitations/${accepted.token}/accept`)).status, 200);
    const expired = await invite(owner);
    await app.db.query(`UPDATE invitations SET expires_at = now() - interval '1 second' WHERE id = $1`, [expired.invitation.id]);
    const ended = await invite(api(app.url, local.admin.token));
    assert.equal((await owner.patch(`/v1/orgs/${local.orgId}/members/${local.admin.memberId}`, { role: 'member' })).status, 200);
    const revoked = await invite(owner);
    assert.equal((await owner.delete(`${path}/${revoked.invitation.id}`)).status, 204);
    const cases: [string, string][] = [
      ['unknown', 'inv_01jqz3v6b8e9f0g1h2j3k4m5n6'],
      ['another organization\'s', elsewhere.invitation.id],
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
    const theirs = await api(app.url, local.otherAdmin.token).get(`/v1/orgs/${local.otherOrgId}/invitations`);
    assert.deepEqual(theirs.body.invitations.map((i: { id: string }) => i.id), [elsewhere.invitation.id]);
    assert.equal((await api(app.url, joiner.token).get(`/v1/orgs/${local.orgId}/members`)).status, 200);
    // Every answer is documented.
    const openapi = await api(app.url).get('/openapi.json');
    const item = openapi.body.paths['/v1/orgs/{organizationId}/invitations/{invitationId}'].delete;
    for (const status of ['204', '400', '401', '403', '404']) assert.ok(item.responses[status], `revokeInvitation documents ${status}`);
    assert.match(item.responses['404'].description, /invitation_not_found/);
    const list = openapi.body.paths['/v1/orgs/{organizationId}/invitations'].get;
    for (const status of ['200', '400', '401', '403', '404']) assert.ok(list.responses[status], `listInvitations documents ${status}`);
  });

  it('an invitation ended while an accept or a revocation of it waits is ended for them too: both 404', { skip: testBackend !== 'postgres' && 'needs PostgreSQL: requests overlap only there' }, async () => {
    const local = await createTenant(app.url);
    const person = await signUp(app.url, 'raced-invitee');
    const created = await api(app.url, local.owner.token).post(`/v1/orgs/${local.orgId}/invitations`, { email: person.email, role: 'member' });
    const id = created.body.invitation.id as string;
    const lockWaits = async () =>
      (await app.db.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
      )).rows[0]!.n;
    let requests: Promise<[ApiResponse, ApiResponse]> | undefined;
    // The invitation row is held; an accept and a revocation start and wait for it. The end is then written
    // as by a revocation that began after both of them did (its time is later than their start), and committed.
    await app.db.transaction(async (tx) => {
      await tx.query('SELECT 1 FROM invitations WHERE id = $1 FOR UPDATE', [id]);
      requests = Promise.all([
        api(app.url, person.token).post(`/v1/invitations/${created.body.token}/accept`),
        api(app.url, local.admin.token).delete(`/v1/orgs/${local.orgId}/invitations/${id}`),
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
    assert.equal((await api(app.url, person.token).get(`/v1/orgs/${local.orgId}/members`)).status, 404);
  });

  it('two revocations of one invitation at once: one 204, the other 404', { skip: testBackend !== 'postgres' && 'needs PostgreSQL: requests overlap only there' }, async () => {
    const local = await createTenant(app.url);
    const created = await api(app.url, local.owner.token).post(`/v1/orgs/${local.orgId}/invitations`, { email: uniqueEmail('twice-revoked'), role: 'member' });
    const id = created.body.invitation.id as string;
    const lock = await holdLocks(app, 'SELECT 1 FROM invitations WHERE id = $1 FOR UPDATE', [id]);
    const requests = Promise.all(
      [local.owner, local.admin].map((by) => api(app.url, by.token).delete(`/v1/orgs/${local.orgId}/invitations/${id}`)),
    );
    await lock.waitForBlocked(2);
    await lock.release();
    const statuses = (await requests).map((response) => response.status).sort();
    assert.deepEqual(statuses, [204, 404]);
  });

  it('a member removed while being added to a team: the add is 404 member_not_found, never a 500', { skip: testBackend !== 'postgres' && 'needs PostgreSQL: requests overlap only there' }, async () => {
    const local = await createTenant(app.url);
    const owner = api(app.url, local.owner.token);
    const team = await owner.post(`/v1/orgs/${local.orgId}/teams`, { name: 'Raced' });
    assert.equal(team.status, 201, team.text);
    // The removal, held open: the member row is deleted but not yet committed when the add starts.
    const removal = await holdLocks(app, 'DELETE FROM members WHERE id = $1', [local.member.memberId]);
    const added = owner.post(`/v1/orgs/${local.orgId}/teams/${team.body.team.id}/members`, { memberId: local.member.memberId });
    await removal.waitForBlocked(1);
    await removal.release();
    const response = await added;
    assert.equal(response.status, 404, response.text);
    assert.equal(response.body.error, 'member_not_found');
    const listed = await owner.get(`/v1/orgs/${local.orgId}/teams`);
    assert.deepEqual(listed.body.teams.find((t: { id: string }) => t.id === team.body.team.id).memberIds, []);
  });

  it('removing a member and adding them to a team at once: the removal is 204, the add 204 or 404, never a 500', async () => {
    const local = await createTenant(app.url);
    const owner = api(app.url, local.owner.token);
    const team = await owner.post(`/v1/orgs/${local.orgId}/teams`, { name: 'Raced' });
    for (let round = 0; round < 12; round++) {
      const person = await signUp(app.url, 'team-raced');
      await addMember(app.url, local.owner, local.orgId, person, 'member');
      const [removed, added] = await Promise.all([
        owner.delete(`/v1/orgs/${local.orgId}/members/${person.memberId}`),
        owner.post(`/v1/orgs/${local.orgId}/teams/${team.body.team.id}/members`, { memberId: person.memberId }),
      ]);
      assert.equal(removed.status, 204, `round ${round}: ${removed.text}`);
      assert.ok(added.status === 204 || (added.status === 404 && added.body.error === 'member_not_found'), `round ${round}: ${added.status} ${added.text}`);
    }
    const listed = await owner.get(`/v1/orgs/${local.orgId}/teams`);
    assert.deepEqual(listed.body.teams.find((t: { id: string }) => t.id === team.body.team.id).memberIds, [], 'a removed member stayed in the team');
  });

  it('two invitations of one person accepted at once: one 200, the other 404 (ended by the first), never a deadlock', { skip: testBackend !== 'postgres' && 'needs PostgreSQL: requests overlap only there' }, async () => {
    const local = await createTenant(app.url);
    const person = await signUp(app.url, 'accepts-twice');
    const invite = (role: 'admin' | 'member') => api(app.url, local.owner.token).post(`/v1/orgs/${local.orgId}/invitations`, { email: person.email, role });
    const invitations = [(await invite('admin')).body, (await invite('member')).body];
    // Both invitation rows held, so that the two accepts go on at the same moment once released.
    const lock = await holdLocks(app, 'SELECT 1 FROM invitations WHERE id = ANY($1::text[]) FOR UPDATE', [invitations.map((i) => i.invitation.id)]);
    const requests = Promise.all(invitations.map((i) => api(app.url, person.token).post(`/v1/invitations/${i.token}/accept`)));
    await lock.waitForBlocked(2);
    await lock.release();
    const responses = await requests;
    assert.deepEqual(responses.map((r) => r.status).sort(), [200, 404], responses.map((r) => r.text).join(' / '));
    const [winner, loser] = responses[0]!.status === 200 ? [0, 1] : [1, 0];
    assert.equal(responses[loser]!.body.error, 'invitation_not_found');
    const members = await app.db.query<{ role: string }>('SELECT role FROM members WHERE organization_id = $1 AND user_id = $2', [local.orgId, person.userId]);
    assert.deepEqual(members.rows.map((row) => row.role), [invitations[winner]!.invitation.role]);
  });

  it('two invitations of one person accepted at once, again and again: exactly one 200 and one 404 each time', async () => {
    const local = await createTenant(app.url);
    for (let round = 0; round < 15; round++) {
      const person = await signUp(app.url, 'accepts-twice');
      const invite = async (role: 'admin' | 'member') =>
        (await api(app.url, local.owner.token).post(`/v1/orgs/${local.orgId}/invitations`, { email: person.email, role })).body.token as string;
      const tokens = [await invite('admin'), await invite('member')];
      const responses = await Promise.all(tokens.map((token) => api(app.url, person.token).post(`/v1/invitations/${token}/accept`)));
      const outcome = responses.map((r) => `${r.status} ${r.status === 200 ? '' : r.body.error}`.trim()).sort();
      assert.deepEqual(outcome, ['200', '404 invitation_not_found'], `round ${round}: ${responses.map((r) => r.text).join(' / ')}`);
    }
  });

  it('GET /v1/org without an active organization is a generic {error, message}', async () => {
    const response = await api(app.url, tenant.outsider.token).get('/v1/org');
    assert.equal(response.status, 404);
    assert.equal(response.body.error, 'organization_not_found');
    assert.equal(typeof response.body.message, 'string');
  });

  it('the shared timestamp format accepts the spec\'s forms and only real calendar dates', () => {
    // Years below 100 too (year 0 is a leap year, 100 and 1900 are not).
    for (const ok of ['0000-02-29T00:00Z', '0004-02-29T00:00Z', '2024-02-29T10:00Z', '2026-01-31T09:30:00Z', '2026-01-31T09:30:00.123Z', '2026-01-31T09:30:00.123456Z', '2026-01-31T09:30:00.1234567890Z']) {
      assert.ok(isValidTimestamp(ok), ok);
    }
    for (const bad of ['0100-02-29T00:00Z', '1900-02-29T00:00Z', '0001-02-29T00:00Z', '2023-02-29T10:00:00Z', '2026-04-31T00:00:00Z', '2026-01-31T09:30:00+01:00', '2026-01-31 09:30Z', '2026-13-01T00:00Z', '2026-01-01T24:00Z', '2026-01-01']) {
      assert.ok(!isValidTimestamp(bad), bad);
    }
  });
});

// On an app of their own: these count every sign-in attempt made from the test's address.
describe('sign-in rate limits count failed attempts, not successful sign-ins', () => {
  let app: TestApp;
  before(async () => {
    app = await startTestApp();
  });
  after(() => app.close());

  const signIn = (email: string, password: string) => api(app.url).post('/v1/auth/sign-in', { email, password });

  it('repeated successful sign-ins of one account from one address are never limited', async () => {
    const user = await signUp(app.url, 'scripted');
    // More than both limits (10 per account, 50 per address).
    for (let attempt = 1; attempt <= 55; attempt++) {
      const response = await signIn(user.email, user.password);
      assert.equal(response.status, 200, `sign-in ${attempt}: ${response.text}`);
    }
  });

  it('wrong passwords still lock the account (right password included); a success in between does not reset the count', async () => {
    // A run that a window's end cuts in two is run again, whole, in the next window (see windowOf).
    for (let run = 1; ; run++) {
      const window = windowOf();
      const user = await signUp(app.url, 'guessed');
      const statuses: number[] = [];
      for (let attempt = 0; attempt < 4; attempt++) statuses.push((await signIn(user.email, 'guess')).status);
      statuses.push((await signIn(user.email, user.password)).status);
      for (let attempt = 0; attempt < 6; attempt++) statuses.push((await signIn(user.email, 'guess')).status);
      const limited = [await signIn(user.email, 'guess'), await signIn(user.email, user.password)];
      if (windowOf() !== window && run === 1) continue;
      assert.deepEqual(statuses, [401, 401, 401, 401, 200, 401, 401, 401, 401, 401, 401]);
      for (const response of limited) {
        assert.equal(response.status, 429, response.text);
        assert.equal(response.body.error, 'rate_limited');
        assert.ok(Number(response.headers.get('retry-after')) > 0);
      }
      return;
    }
  });

  it('wrong passwords from one address across many accounts still reach the per-address limit', async () => {
    const user = await signUp(app.url, 'bystander');
    // One guess per account, each account under its own limit: only the address limit (50) can stop them.
    // The tests before left some failed attempts from this address in the window (a window that ends in
    // between starts the count again, hence the margin).
    let limited: Awaited<ReturnType<typeof signIn>> | undefined;
    for (let attempt = 0; attempt <= 100 && !limited; attempt++) {
      const response = await signIn(uniqueEmail(`spray${attempt}`), 'guess');
      if (response.status === 429) limited = response;
      else assert.equal(response.status, 401, `attempt ${attempt}: ${response.text}`);
    }
    assert.ok(limited, 'guesses at many accounts from one address were never limited');
    assert.equal(limited.body.error, 'rate_limited');
    // The address is refused now, whoever signs in.
    assert.equal((await signIn(user.email, user.password)).status, 429);
  });
});

// Behind a trusted proxy, so that X-Forwarded-For gives each request the client address under test.
describe('sign-in limits: one address guessing locks out that address, not the account', () => {
  let app: TestApp;
  before(async () => {
    app = await startTestApp({ trustedProxies: ['127.0.0.1/32'] });
  });
  after(() => app.close());

  const signInFrom = (address: string, email: string, password: string) =>
    api(app.url).post('/v1/auth/sign-in', { email, password }, { headers: { 'x-forwarded-for': address } });

  it('ten wrong guesses from one address: that address is refused, the owner signs in from another', async () => {
    await inOneWindow(async () => {
      const user = await signUp(app.url, 'targeted');
      const stranger = '203.0.113.7';
      for (let attempt = 0; attempt < 10; attempt++) assert.equal((await signInFrom(stranger, user.email, 'guess')).status, 401);
      const refused = [await signInFrom(stranger, user.email, 'guess'), await signInFrom(stranger, user.email, user.password)];
      for (const response of refused) {
        assert.equal(response.status, 429, response.text);
        assert.equal(response.body.error, 'rate_limited');
        assert.ok(Number(response.headers.get('retry-after')) > 0);
      }
      const owner = await signInFrom('198.51.100.20', user.email, user.password);
      assert.equal(owner.status, 200, owner.text);
    });
  });

  it('guessing spread over many addresses reaches the account\'s own limit (100); refused attempts do not count towards it', async () => {
    await inOneWindow(async () => {
      const user = await signUp(app.url, 'spread');
      // The first address is locked out after 10, and its 20 further tries are refused: had they
      // counted on the account, it would be locked before the other nine addresses had their 90 guesses.
      const statuses: number[] = [];
      for (let attempt = 0; attempt < 30; attempt++) statuses.push((await signInFrom('203.0.113.100', user.email, 'guess')).status);
      assert.deepEqual(statuses, [...Array(10).fill(401), ...Array(20).fill(429)]);
      for (let address = 101; address < 110; address++) {
        const answers = await Promise.all(Array.from({ length: 10 }, () => signInFrom(`203.0.113.${address}`, user.email, 'guess')));
        assert.deepEqual(answers.map((answer) => answer.status), Array(10).fill(401), `address 203.0.113.${address}`);
      }
      // 100 failed attempts: now the account is refused from anywhere, with the right password too,
      const locked = await signInFrom('198.51.100.30', user.email, user.password);
      assert.equal(locked.status, 429, locked.text);
      assert.equal(locked.body.error, 'rate_limited');
      // and that address may still sign in to other accounts.
      const other = await signUp(app.url, 'unrelated');
      assert.equal((await signInFrom('198.51.100.30', other.email, other.password)).status, 200);
    });
  });
});
