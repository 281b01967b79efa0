import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { hashToken } from '../../src/platform/tokens.ts';
import { startTestApp, testBackend, type TestApp } from '../support/app.ts';
import { addMember, createTenant, signUp, uniqueEmail, type Tenant } from '../support/fixtures.ts';
import { holdLocks } from '../support/held-locks.ts';
import { api } from '../support/http.ts';
import { membershipOf } from '../support/identity.ts';

describe('identity routes: security', () => {
  let app: TestApp;
  let tenant: Tenant;
  before(async () => {
    app = await startTestApp();
    tenant = await createTenant(app.url);
  });
  after(() => app.close());

  const authenticatedRoutes = (orgId: string): [string, string, unknown?][] => [
    ['POST', '/v1/auth/sign-out'],
    ['GET', '/v1/me'],
    ['GET', '/v1/org'],
    ['POST', '/v1/orgs', { name: 'x' }],
    ['PUT', '/v1/session/active-organization', { organizationId: orgId }],
    ['POST', `/v1/orgs/${orgId}/invitations`, { email: 'a@example.test', role: 'member' }],
    ['POST', '/v1/invitations/opi_whatever/accept'],
    ['GET', `/v1/orgs/${orgId}/invitations`],
    ['DELETE', `/v1/orgs/${orgId}/invitations/inv_01jqz3v6b8e9f0g1h2j3k4m5n6`],
    // Refused before the input is read: a malformed invitation id is not looked at.
    ['DELETE', `/v1/orgs/${orgId}/invitations/not-an-id`],
    ['GET', `/v1/orgs/${orgId}/members`],
    ['GET', `/v1/orgs/${orgId}/teams`],
    ['POST', `/v1/orgs/${orgId}/teams`, { name: 'x' }],
    ['POST', `/v1/orgs/${orgId}/api-keys`, { name: 'x', role: 'member' }],
    ['GET', `/v1/orgs/${orgId}/api-keys`],
    ['PUT', `/v1/admin/orgs/${orgId}/plan`, { plan: 'enterprise' }],
  ];

  it('anonymous, garbage, tampered, revoked and expired tokens all get 401 unauthorized on every route', async () => {
    const revoked = await signUp(app.url, 'revoked');
    await api(app.url, revoked.token).post('/v1/auth/sign-out');
    const expired = await signUp(app.url, 'expired');
    await app.db.query(`UPDATE sessions SET expires_at = now() - interval '1 second' WHERE user_id = $1`, [expired.userId]);
    const tampered = tenant.owner.token.slice(0, -2) + (tenant.owner.token.endsWith('AA') ? 'BB' : 'AA');
    const tokens: [string, string | undefined][] = [
      ['anonymous', undefined],
      ['garbage', 'not-a-token'],
      ['tampered', tampered],
      ['revoked', revoked.token],
      ['expired', expired.token],
    ];
    for (const [label, token] of tokens) {
      for (const [method, path, body] of authenticatedRoutes(tenant.orgId)) {
        const response = await api(app.url, token).send(method, path, body);
        assert.equal(response.status, 401, `${label} ${method} ${path}: ${response.text}`);
        assert.deepEqual(response.body, { error: 'unauthorized' });
      }
    }
  });

  it('a member cannot do what owners and admins do', async () => {
    const member = api(app.url, tenant.member.token);
    const pending = await api(app.url, tenant.owner.token).post(`/v1/orgs/${tenant.orgId}/invitations`, { email: uniqueEmail('kept'), role: 'member' });
    const attempts = [
      await member.post(`/v1/orgs/${tenant.orgId}/invitations`, { email: 'b@example.test', role: 'admin' }),
      await member.get(`/v1/orgs/${tenant.orgId}/invitations`),
      await member.delete(`/v1/orgs/${tenant.orgId}/invitations/${pending.body.invitation.id}`),
      await member.delete(`/v1/orgs/${tenant.orgId}/invitations/inv_01jqz3v6b8e9f0g1h2j3k4m5n6`),
      await member.post(`/v1/orgs/${tenant.orgId}/teams`, { name: 'Mine' }),
      await member.post(`/v1/orgs/${tenant.orgId}/api-keys`, { name: 'k', role: 'admin' }),
      await member.get(`/v1/orgs/${tenant.orgId}/api-keys`),
      await member.patch(`/v1/orgs/${tenant.orgId}/members/${tenant.admin.memberId}`, { role: 'member' }),
      await member.delete(`/v1/orgs/${tenant.orgId}/members/${tenant.admin.memberId}`),
      await member.post(`/v1/orgs/${tenant.orgId}/transfer-ownership`, { memberId: tenant.member.memberId }),
      await member.put(`/v1/admin/orgs/${tenant.orgId}/plan`, { plan: 'enterprise' }),
    ];
    for (const response of attempts) {
      assert.equal(response.status, 403, response.text);
      assert.equal(response.body.error, 'forbidden');
      assert.ok(!response.text.includes(pending.body.token) && !response.text.includes('kept.'), 'a refusal shows an invitation');
    }
    const stillPending = await api(app.url, tenant.owner.token).get(`/v1/orgs/${tenant.orgId}/invitations`);
    assert.ok(stillPending.body.invitations.some((i: { id: string }) => i.id === pending.body.invitation.id), 'the member\'s refused revocation ended the invitation');
    assert.equal((await api(app.url, tenant.admin.token).post(`/v1/orgs/${tenant.orgId}/transfer-ownership`, { memberId: tenant.admin.memberId })).status, 403);
    assert.equal((await api(app.url, tenant.owner.token).put(`/v1/admin/orgs/${tenant.orgId}/plan`, { plan: 'enterprise' })).status, 403, 'owners are not instance administrators');
  });

  it('another organization\'s admin sees nothing of this one: 404 organization_not_found, no data', async () => {
    const other = api(app.url, tenant.otherAdmin.token);
    const pending = await api(app.url, tenant.owner.token).post(`/v1/orgs/${tenant.orgId}/invitations`, { email: uniqueEmail('acme-invitee'), role: 'member' });
    const attempts = [
      await other.get(`/v1/orgs/${tenant.orgId}/members`),
      await other.get(`/v1/orgs/${tenant.orgId}/invitations`),
      await other.delete(`/v1/orgs/${tenant.orgId}/invitations/${pending.body.invitation.id}`),
      await other.get(`/v1/orgs/${tenant.orgId}/teams`),
      await other.post(`/v1/orgs/${tenant.orgId}/invitations`, { email: tenant.otherAdmin.email, role: 'admin' }),
      await other.post(`/v1/orgs/${tenant.orgId}/api-keys`, { name: 'k', role: 'admin' }),
      await other.patch(`/v1/orgs/${tenant.orgId}/members/${tenant.member.memberId}`, { role: 'admin' }),
      await other.put('/v1/session/active-organization', { organizationId: tenant.orgId }),
    ];
    for (const response of attempts) {
      assert.equal(response.status, 404, response.text);
      assert.equal(response.body.error, 'organization_not_found');
      assert.ok(!response.text.includes('Acme'));
      assert.ok(!response.text.includes('acme-invitee'));
    }
    const stillPending = await api(app.url, tenant.owner.token).get(`/v1/orgs/${tenant.orgId}/invitations`);
    assert.ok(stillPending.body.invitations.some((i: { id: string }) => i.id === pending.body.invitation.id));
    const own = await other.get('/v1/org');
    assert.equal(own.body.organization.id, tenant.otherOrgId);
  });

  it('concurrent requests whose session lookups share one batch each get only their own answer', async () => {
    const revoked = await signUp(app.url, 'batch-revoked');
    await api(app.url, revoked.token).post('/v1/auth/sign-out');
    const noOrganization = await signUp(app.url, 'batch-no-org');
    const callers = [
      { token: tenant.owner.token, userId: tenant.owner.userId, expect: { status: 200, organizationId: tenant.orgId, memberId: tenant.owner.memberId } },
      { token: tenant.member.token, userId: tenant.member.userId, expect: { status: 200, organizationId: tenant.orgId, memberId: tenant.member.memberId } },
      { token: tenant.otherAdmin.token, userId: tenant.otherAdmin.userId, expect: { status: 200, organizationId: tenant.otherOrgId, memberId: tenant.otherAdmin.memberId } },
      { token: revoked.token, userId: null, expect: { status: 401 } },
      { token: noOrganization.token, userId: noOrganization.userId, expect: { status: 404 } },
      { token: tenant.owner.token.slice(0, -1) + (tenant.owner.token.endsWith('A') ? 'B' : 'A'), userId: null, expect: { status: 401 } },
    ];
    // Many rounds of all callers at once, in a different order each round, so lookups land in shared batches.
    const requests = Array.from({ length: 20 }, (_, round) => callers.map((_, index) => callers[(index + round) % callers.length]!)).flat();
    const responses = await Promise.all(requests.map(async (caller) => ({ caller, response: await api(app.url, caller.token).get('/v1/org') })));
    for (const { caller, response } of responses) {
      assert.equal(response.status, caller.expect.status, response.text);
      if (caller.expect.status !== 200) continue;
      assert.equal(response.body.organization.id, caller.expect.organizationId);
      assert.equal(response.body.currentMember.id, caller.expect.memberId);
    }
    // The same for the session check in front of every other route.
    const members = await Promise.all(requests.map(async (caller) => ({ caller, response: await api(app.url, caller.token).get('/v1/me') })));
    for (const { caller, response } of members) {
      assert.equal(response.status, caller.userId ? 200 : 401, response.text);
      if (caller.userId) assert.equal(response.body.user.id, caller.userId);
    }
  });

  it('a member id from another organization is not found here', async () => {
    const response = await api(app.url, tenant.owner.token).patch(`/v1/orgs/${tenant.orgId}/members/${tenant.otherAdmin.memberId}`, { role: 'member' });
    assert.equal(response.status, 404);
    assert.equal(response.body.error, 'member_not_found');
  });

  it('an invitation id of another organization is not found here, whichever organization the path names; tampered ids are not found or refused', async () => {
    const ours = await api(app.url, tenant.owner.token).post(`/v1/orgs/${tenant.orgId}/invitations`, { email: uniqueEmail('ours'), role: 'member' });
    const theirs = await api(app.url, tenant.otherAdmin.token).post(`/v1/orgs/${tenant.otherOrgId}/invitations`, { email: uniqueEmail('theirs'), role: 'member' });
    const ourId: string = ours.body.invitation.id;
    const theirId: string = theirs.body.invitation.id;
    // Each organization's admin names the other's invitation under their own organization: not found, nothing ended.
    const mixed = [
      await api(app.url, tenant.owner.token).delete(`/v1/orgs/${tenant.orgId}/invitations/${theirId}`),
      await api(app.url, tenant.otherAdmin.token).delete(`/v1/orgs/${tenant.otherOrgId}/invitations/${ourId}`),
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
      const response = await api(app.url, tenant.owner.token).delete(`/v1/orgs/${tenant.orgId}/invitations/${id}`);
      assert.deepEqual([response.status, response.body.error], [status, error], `${id}: ${response.text}`);
    }
    const listed = async (token: string, orgId: string) =>
      ((await api(app.url, token).get(`/v1/orgs/${orgId}/invitations`)).body.invitations as { id: string }[]).map((i) => i.id);
    assert.ok((await listed(tenant.owner.token, tenant.orgId)).includes(ourId), 'our invitation was ended');
    assert.deepEqual(await listed(tenant.otherAdmin.token, tenant.otherOrgId), [theirId], 'their list shows only their own');
    assert.ok(!(await listed(tenant.owner.token, tenant.orgId)).includes(theirId));
  });

  it('invitation lists never carry a token or its hash; an API key, even an admin one, neither lists nor revokes', async () => {
    const local = await createTenant(app.url);
    const owner = api(app.url, local.owner.token);
    const tokens = [];
    for (let index = 0; index < 3; index++) {
      const created = await owner.post(`/v1/orgs/${local.orgId}/invitations`, { email: uniqueEmail('listed'), role: 'admin' });
      tokens.push(created.body.token as string);
    }
    for (const limit of [1, 50]) {
      const response = await owner.get(`/v1/orgs/${local.orgId}/invitations?limit=${limit}`);
      assert.equal(response.status, 200, response.text);
      for (const token of tokens) {
        assert.ok(!response.text.includes(token), 'a token is listed');
        assert.ok(!response.text.includes(hashToken(token)), 'a token hash is listed');
      }
      for (const item of response.body.invitations) assert.deepEqual(Object.keys(item).sort(), ['createdAt', 'email', 'expiresAt', 'id', 'organizationId', 'role']);
    }
    const key = (await owner.post(`/v1/orgs/${local.orgId}/api-keys`, { name: 'automation', role: 'admin' })).body.key;
    const pendingId = (await owner.get(`/v1/orgs/${local.orgId}/invitations`)).body.invitations[0].id;
    const viaKey = [
      await api(app.url).get(`/v1/orgs/${local.orgId}/invitations`, { headers: { 'x-api-key': key } }),
      await api(app.url).delete(`/v1/orgs/${local.orgId}/invitations/${pendingId}`, { headers: { 'x-api-key': key } }),
    ];
    for (const response of viaKey) assert.deepEqual([response.status, response.body], [401, { error: 'unauthorized' }]);
    assert.equal((await owner.get(`/v1/orgs/${local.orgId}/invitations`)).body.invitations[0].id, pendingId);
  });

  it('a suspended admin neither lists nor revokes invitations', async () => {
    const local = await createTenant(app.url);
    const pending = await api(app.url, local.owner.token).post(`/v1/orgs/${local.orgId}/invitations`, { email: uniqueEmail('suspended-case'), role: 'member' });
    await app.db.transaction((tx) => membershipOf(app).setMemberStatus(tx, local.orgId, local.admin.memberId, 'suspended'));
    const admin = api(app.url, local.admin.token);
    for (const response of [await admin.get(`/v1/orgs/${local.orgId}/invitations`), await admin.delete(`/v1/orgs/${local.orgId}/invitations/${pending.body.invitation.id}`)]) {
      assert.equal(response.status, 404, response.text);
      assert.equal(response.body.error, 'organization_not_found');
    }
    const listed = await api(app.url, local.owner.token).get(`/v1/orgs/${local.orgId}/invitations`);
    assert.deepEqual(listed.body.invitations.map((i: { id: string }) => i.id), [pending.body.invitation.id]);
  });

  it('an API key works only for its own organization and is not a session', async () => {
    const created = await api(app.url, tenant.owner.token).post(`/v1/orgs/${tenant.orgId}/api-keys`, { name: 'k', role: 'admin' });
    const key = created.body.key;
    const elsewhere = await api(app.url).get(`/v1/orgs/${tenant.otherOrgId}/members`, { headers: { 'x-api-key': key } });
    assert.equal(elsewhere.status, 404);
    const asBearer = await api(app.url, key).get(`/v1/orgs/${tenant.orgId}/members`);
    assert.equal(asBearer.status, 401);
    const notAccepted = await api(app.url).get('/v1/me', { headers: { 'x-api-key': key } });
    assert.equal(notAccepted.status, 401);
  });

  it('a removed member\'s session no longer reaches the organization', async () => {
    const local = await createTenant(app.url);
    await api(app.url, local.owner.token).delete(`/v1/orgs/${local.orgId}/members/${local.member.memberId}`);
    assert.equal((await api(app.url, local.member.token).get(`/v1/orgs/${local.orgId}/members`)).status, 404);
    assert.equal((await api(app.url, local.member.token).get('/v1/org')).body.error, 'organization_not_found');
  });

  it('an admin\'s pending invitations stop working once they are removed, suspended or demoted: refused like an unknown one', async () => {
    const local = await createTenant(app.url);
    const owner = api(app.url, local.owner.token);
    const unknown = await api(app.url, local.outsider.token).post('/v1/invitations/opi_no-such-invitation/accept');
    assert.equal(unknown.status, 404);
    // SCIM suspends and deletes through these identity methods, inside its own transactions.
    const actions: [string, (admin: { memberId: string }) => Promise<void>][] = [
      ['removed by the owner', async (admin) => {
        assert.equal((await owner.delete(`/v1/orgs/${local.orgId}/members/${admin.memberId}`)).status, 204);
      }],
      ['demoted to member', async (admin) => {
        assert.equal((await owner.patch(`/v1/orgs/${local.orgId}/members/${admin.memberId}`, { role: 'member' })).status, 200);
      }],
      ['suspended (SCIM)', (admin) => app.db.transaction((tx) => membershipOf(app).setMemberStatus(tx, local.orgId, admin.memberId, 'suspended'))],
      ['deleted (SCIM)', (admin) => app.db.transaction((tx) => membershipOf(app).deleteMember(tx, local.orgId, admin.memberId))],
    ];
    for (const [label, act] of actions) {
      const admin = await signUp(app.url, 'rogue-admin');
      await addMember(app.url, local.owner, local.orgId, admin, 'admin');
      // The probe's accomplice has no account yet when invited; the owner's own invitation is unaffected.
      const accomplice = uniqueEmail('accomplice');
      const bystander = await signUp(app.url, 'bystander');
      const rogue = await api(app.url, admin.token).post(`/v1/orgs/${local.orgId}/invitations`, { email: accomplice, role: 'admin' });
      assert.equal(rogue.status, 201, `${label}: ${rogue.text}`);
      const fromOwner = await owner.post(`/v1/orgs/${local.orgId}/invitations`, { email: bystander.email, role: 'member' });
      await act(admin);
      const signedUp = await api(app.url).post('/v1/auth/sign-up', { email: accomplice, password: 'accomplice password', name: 'Accomplice' });
      assert.equal(signedUp.status, 201, signedUp.text);
      const accepted = await api(app.url, signedUp.body.sessionToken).post(`/v1/invitations/${rogue.body.token}/accept`);
      assert.equal(accepted.status, 404, `${label}: ${accepted.text}`);
      assert.deepEqual(accepted.body, unknown.body, label);
      assert.equal((await api(app.url, signedUp.body.sessionToken).get(`/v1/orgs/${local.orgId}/members`)).status, 404, label);
      const stillValid = await api(app.url, bystander.token).post(`/v1/invitations/${fromOwner.body.token}/accept`);
      assert.equal(stillValid.status, 200, `${label}: ${stillValid.text}`);
    }
    // An owner who hands ownership over stays an admin, and may still invite: their invitations hold.
    const pending = await owner.post(`/v1/orgs/${local.orgId}/invitations`, { email: local.outsider.email, role: 'member' });
    assert.equal((await owner.post(`/v1/orgs/${local.orgId}/transfer-ownership`, { memberId: local.admin.memberId })).status, 200);
    assert.equal((await api(app.url, local.outsider.token).post(`/v1/invitations/${pending.body.token}/accept`)).status, 200);
  });

  // Made while the right held, or refused as the caller now is: never a key or team made after it was lost.
  for (const [what, route, table, body] of [
    ['an API key', 'api-keys', 'api_keys', { role: 'admin' }],
    ['a team', 'teams', 'teams', {}],
  ] as const) {
    it(`an admin demoted, suspended or removed while creating ${what}: refused as they now are, nothing stored`, { skip: testBackend !== 'postgres' && 'needs PostgreSQL: requests overlap only there' }, async () => {
      const local = await createTenant(app.url);
      const changes: [string, string, number, string][] = [
        ['demoted', "UPDATE members SET role = 'member' WHERE id = $1", 403, 'forbidden'],
        ['suspended', "UPDATE members SET status = 'suspended' WHERE id = $1", 404, 'organization_not_found'],
        ['removed', 'DELETE FROM members WHERE id = $1', 404, 'organization_not_found'],
      ];
      for (const [change, sql, status, error] of changes) {
        const admin = await signUp(app.url, `${table}-maker-${change}`);
        await addMember(app.url, local.owner, local.orgId, admin, 'admin');
        const create = () => api(app.url, admin.token).post(`/v1/orgs/${local.orgId}/${route}`, { name: `late ${change}`, ...body });
        // The change held uncommitted, with the organization's row: the request passes the role check,
        // then waits (on the member's row, or else on its row's foreign key) until the change commits.
        const lock = await holdLocks(app, `WITH change AS (${sql} RETURNING 1) SELECT 1 FROM organizations WHERE id = $2 FOR UPDATE`, [admin.memberId, local.orgId]);
        const created = create();
        await lock.waitForBlocked(1);
        await lock.release();
        const response = await created;
        assert.deepEqual([response.status, response.body.error], [status, error], `${change}: ${response.text}`);
        assert.equal(response.body.key, undefined);
        const now = await create();
        assert.deepEqual([now.status, now.body.error], [status, error], `${change}: the same request now`);
        const { rows } = await app.db.query(`SELECT count(*)::int AS n FROM ${table} WHERE organization_id = $1 AND name = $2`, [local.orgId, `late ${change}`]);
        assert.equal(rows[0].n, 0, `${change}: a row was stored in ${table}`);
      }
    });
  }

  it('stores no token, key or password in clear: only hashes', async () => {
    const created = await api(app.url, tenant.owner.token).post(`/v1/orgs/${tenant.orgId}/api-keys`, { name: 'dump', role: 'member' });
    const invitation = await api(app.url, tenant.owner.token).post(`/v1/orgs/${tenant.orgId}/invitations`, { email: 'dump@example.test', role: 'member' });
    const dump = JSON.stringify([
      (await app.db.query('SELECT * FROM sessions')).rows,
      (await app.db.query('SELECT * FROM users')).rows,
      (await app.db.query('SELECT * FROM api_keys')).rows,
      (await app.db.query('SELECT * FROM invitations')).rows,
    ]);
    for (const secret of [tenant.owner.token, tenant.member.token, tenant.owner.password, created.body.key, invitation.body.token]) {
      assert.ok(!dump.includes(secret), 'a secret is stored in clear');
    }
  });

  it('no log line carries a session token, password, API key or invitation token', async () => {
    const user = await signUp(app.url, 'logged');
    await api(app.url).post('/v1/auth/sign-in', { email: user.email, password: user.password });
    const invitation = await api(app.url, tenant.owner.token).post(`/v1/orgs/${tenant.orgId}/invitations`, { email: user.email, role: 'member' });
    await api(app.url, user.token).post(`/v1/invitations/${invitation.body.token}/accept`);
    const key = (await api(app.url, tenant.owner.token).post(`/v1/orgs/${tenant.orgId}/api-keys`, { name: 'log', role: 'member' })).body.key;
    await api(app.url).get(`/v1/orgs/${tenant.orgId}/members`, { headers: { 'x-api-key': key } });
    // Listed and revoked: neither request nor answer puts the token in a log line, and a revoked token refused is not logged either.
    const revoked = await api(app.url, tenant.owner.token).post(`/v1/orgs/${tenant.orgId}/invitations`, { email: uniqueEmail('logged-revoked'), role: 'admin' });
    assert.equal((await api(app.url, tenant.admin.token).get(`/v1/orgs/${tenant.orgId}/invitations?limit=100`)).status, 200);
    assert.equal((await api(app.url, tenant.owner.token).delete(`/v1/orgs/${tenant.orgId}/invitations/${revoked.body.invitation.id}`)).status, 204);
    assert.equal((await api(app.url, user.token).post(`/v1/invitations/${revoked.body.token}/accept`)).status, 404);
    const logs = app.logText();
    assert.ok(logs.includes('/v1/invitations/[redacted]/accept'), 'the accept request is logged, with its token redacted');
    assert.ok(logs.includes(`/v1/orgs/${tenant.orgId}/invitations/${revoked.body.invitation.id}`), 'the revocation is logged, with the invitation id');
    for (const secret of [user.token, user.password, invitation.body.token, revoked.body.token, hashToken(revoked.body.token), key, tenant.owner.token]) {
      assert.ok(!logs.includes(secret), 'a secret reached the log');
    }
    assert.ok(app.logLines.filter((line) => line.req).every((line) => typeof line.reqId === 'string'), 'every request line has a request id');
  });
});
