import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp } from '../support/app.ts';
import { addMember, createTenant, signUp, uniqueEmail, type Tenant } from '../support/fixtures.ts';
import { api } from '../support/http.ts';
import { membershipOf, usersOf, setPlanAsOperator } from '../support/identity.ts';

describe('identity routes: happy paths', () => {
  let app: TestApp;
  let tenant: Tenant;
  before(async () => {
    app = await startTestApp();
    tenant = await createTenant(app.url);
  });
  after(() => app.close());

  it('bootstrap creates an instance administrator owning the first organization, once', async () => {
    const fresh = await startTestApp();
    try {
      const body = { email: 'root@example.test', password: 'correct horse battery', name: 'Root', organizationName: 'First' };
      const first = await api(fresh.url).post('/v1/bootstrap', body);
      assert.equal(first.status, 201, first.text);
      assert.equal(first.body.user.isInstanceAdmin, true);
      assert.equal(first.body.organization.name, 'First');
      assert.match(first.body.sessionToken, /^ops_/);
      const org = await api(fresh.url, first.body.sessionToken).get('/v1/org');
      assert.equal(org.body.currentMember.role, 'owner');
      const again = await api(fresh.url).post('/v1/bootstrap', { ...body, email: 'other@example.test' });
      assert.equal(again.status, 409);
      assert.equal(again.body.error, 'already_bootstrapped');
    } finally {
      await fresh.close();
    }
  });

  it('sign-in returns a new working session; sign-out revokes only that session', async () => {
    const user = await signUp(app.url, 'signin');
    const signedIn = await api(app.url).post('/v1/auth/sign-in', { email: user.email.toUpperCase(), password: user.password });
    assert.equal(signedIn.status, 200, signedIn.text);
    assert.equal(signedIn.body.user.id, user.userId);
    const second = signedIn.body.sessionToken;
    assert.notEqual(second, user.token);
    assert.equal((await api(app.url, second).get('/v1/me')).status, 200);
    assert.equal((await api(app.url, second).post('/v1/auth/sign-out')).status, 204);
    assert.equal((await api(app.url, second).get('/v1/me')).status, 401);
    assert.equal((await api(app.url, user.token).get('/v1/me')).status, 200);
  });

  it('GET /v1/me lists the user\'s organizations with roles', async () => {
    const me = await api(app.url, tenant.admin.token).get('/v1/me');
    assert.equal(me.status, 200);
    assert.equal(me.body.user.email, tenant.admin.email);
    assert.equal(me.body.activeOrganizationId, tenant.orgId);
    const acme = me.body.organizations.find((o: { id: string }) => o.id === tenant.orgId);
    assert.equal(acme.role, 'admin');
    assert.equal(acme.memberId, tenant.admin.memberId);
  });

  it('lists members with cursor paging', async () => {
    const client = api(app.url, tenant.member.token);
    const first = await client.get(`/v1/orgs/${tenant.orgId}/members?limit=2`);
    assert.equal(first.status, 200, first.text);
    assert.equal(first.body.members.length, 2);
    assert.ok(first.body.nextCursor);
    const second = await client.get(`/v1/orgs/${tenant.orgId}/members?limit=2&cursor=${first.body.nextCursor}`);
    assert.equal(second.body.members.length, 1);
    assert.equal(second.body.nextCursor, null);
    const ids = [...first.body.members, ...second.body.members].map((m: { id: string }) => m.id).sort();
    assert.deepEqual(ids, [tenant.owner.memberId, tenant.admin.memberId, tenant.member.memberId].sort());
  });

  it('owners and admins list pending invitations newest first, without tokens, with cursor paging', async () => {
    const local = await createTenant(app.url);
    const owner = api(app.url, local.owner.token);
    const path = `/v1/orgs/${local.orgId}/invitations`;
    // The tenant's own invitations were accepted: nothing is pending yet.
    const empty = await owner.get(path);
    assert.equal(empty.status, 200, empty.text);
    assert.deepEqual(empty.body, { invitations: [], nextCursor: null });
    const created = [];
    for (const [client, role] of [[owner, 'member'], [api(app.url, local.admin.token), 'admin'], [owner, 'admin']] as const) {
      const response = await client.post(path, { email: uniqueEmail('pending'), role });
      assert.equal(response.status, 201, response.text);
      created.push(response.body as { invitation: { id: string }; token: string });
    }
    const newestFirst = created.map((c) => c.invitation).reverse();
    for (const caller of [local.owner, local.admin]) {
      const all = await api(app.url, caller.token).get(path);
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
    const local = await createTenant(app.url);
    const owner = api(app.url, local.owner.token);
    const path = `/v1/orgs/${local.orgId}/invitations`;
    const invite = async (client: ReturnType<typeof api>, email = uniqueEmail('invitee')) => {
      const response = await client.post(path, { email, role: 'member' });
      assert.equal(response.status, 201, response.text);
      return response.body as { invitation: { id: string }; token: string };
    };
    const pending = await invite(owner);
    const joiner = await signUp(app.url, 'joiner');
    const accepted = await invite(owner, joiner.email);
    assert.equal((await api(app.url, joiner.token).post(`/v1/invitations/${accepted.token}/accept`)).status, 200);
    const expired = await invite(owner);
    await app.db.query(`UPDATE invitations SET expires_at = now() - interval '1 second' WHERE id = $1`, [expired.invitation.id]);
    // Ended by the service: its sender is demoted to member.
    const sender = await signUp(app.url, 'sender');
    await addMember(app.url, local.owner, local.orgId, sender, 'admin');
    const ended = await invite(api(app.url, sender.token));
    assert.equal((await owner.patch(`/v1/orgs/${local.orgId}/members/${sender.memberId}`, { role: 'member' })).status, 200);
    const listed = await owner.get(path);
    assert.equal(listed.status, 200, listed.text);
    assert.deepEqual(listed.body.invitations.map((i: { id: string }) => i.id), [pending.invitation.id]);
    for (const gone of [accepted, expired, ended]) assert.ok(!listed.text.includes(gone.invitation.id));
  });

  it('revoking an invitation: 204, gone from the list, its token refused like an unknown one; the others still work', async () => {
    const local = await createTenant(app.url);
    const owner = api(app.url, local.owner.token);
    const path = `/v1/orgs/${local.orgId}/invitations`;
    const [wrongAddress, kept] = [await signUp(app.url, 'wrong-address'), await signUp(app.url, 'kept')];
    // Sent by the admin, revoked by the owner: any owner or admin revokes any pending invitation.
    const doomed = await api(app.url, local.admin.token).post(path, { email: wrongAddress.email, role: 'admin' });
    const other = await owner.post(path, { email: kept.email, role: 'member' });
    assert.equal(doomed.status, 201, doomed.text);
    assert.equal(other.status, 201, other.text);
    const revoked = await owner.delete(`${path}/${doomed.body.invitation.id}`);
    assert.equal(revoked.status, 204, revoked.text);
    assert.equal(revoked.text, '');
    const listed = await owner.get(path);
    assert.deepEqual(listed.body.invitations.map((i: { id: string }) => i.id), [other.body.invitation.id]);
    const unknown = await api(app.url, wrongAddress.token).post('/v1/invitations/opi_no-such-invitation/accept');
    const refused = await api(app.url, wrongAddress.token).post(`/v1/invitations/${doomed.body.token}/accept`);
    assert.deepEqual([refused.status, refused.body], [404, unknown.body]);
    assert.equal(unknown.body.error, 'invitation_not_found');
    assert.equal((await api(app.url, wrongAddress.token).get(`/v1/orgs/${local.orgId}/members`)).status, 404);
    const accepted = await api(app.url, kept.token).post(`/v1/invitations/${other.body.token}/accept`);
    assert.equal(accepted.status, 200, accepted.text);
    assert.equal(accepted.body.member.organizationId, local.orgId);
    // A new invitation to the revoked address works: revoking ends that one invitation, it bars nobody.
    const again = await owner.post(path, { email: wrongAddress.email, role: 'member' });
    assert.equal((await api(app.url, wrongAddress.token).post(`/v1/invitations/${again.body.token}/accept`)).status, 200);
  });

  it('GET /v1/org shows an owner whose address strict email syntax would refuse (an account provisioned by SCIM)', async () => {
    const local = await createTenant(app.url);
        // How the SCIM server adds a person: an account without a password, and a membership.
    const member = await app.db.transaction(async (tx) => {
      const user = await usersOf(app).ensureUser(tx, { email: 'jöhn+ops@corp.example', name: 'Jöhn' });
      return membershipOf(app).ensureMember(tx, local.orgId, user.id, 'member');
    });
    const transfer = await api(app.url, local.owner.token).post(`/v1/orgs/${local.orgId}/transfer-ownership`, { memberId: member.id });
    assert.equal(transfer.status, 200, transfer.text);
    const org = await api(app.url, local.admin.token).get('/v1/org');
    assert.equal(org.status, 200, org.text);
    assert.equal(org.body.organization.owner.email, 'jöhn+ops@corp.example');
  });

  it('changes roles, transfers ownership (exactly one owner), removes members', async () => {
    const local = await createTenant(app.url);
    const owner = api(app.url, local.owner.token);
    const promoted = await owner.patch(`/v1/orgs/${local.orgId}/members/${local.member.memberId}`, { role: 'admin' });
    assert.equal(promoted.status, 200, promoted.text);
    assert.equal(promoted.body.member.role, 'admin');

    const transferred = await owner.post(`/v1/orgs/${local.orgId}/transfer-ownership`, { memberId: local.admin.memberId });
    assert.equal(transferred.status, 200, transferred.text);
    const members = (await owner.get(`/v1/orgs/${local.orgId}/members`)).body.members as { id: string; role: string }[];
    assert.deepEqual(members.filter((m) => m.role === 'owner').map((m) => m.id), [local.admin.memberId]);
    assert.equal(members.find((m) => m.id === local.owner.memberId)?.role, 'admin');
    const org = await api(app.url, local.member.token).get('/v1/org');
    assert.equal(org.body.organization.owner.memberId, local.admin.memberId);

    const removed = await api(app.url, local.admin.token).delete(`/v1/orgs/${local.orgId}/members/${local.member.memberId}`);
    assert.equal(removed.status, 204);
    const gone = await api(app.url, local.member.token).get('/v1/org');
    assert.equal(gone.status, 404);
    assert.equal(gone.body.error, 'organization_not_found');
  });

  it('teams: create, list with member ids, add and remove members', async () => {
    const admin = api(app.url, tenant.admin.token);
    const team = await admin.post(`/v1/orgs/${tenant.orgId}/teams`, { name: 'Research' });
    assert.equal(team.status, 201, team.text);
    const teamId = team.body.team.id;
    assert.equal((await admin.post(`/v1/orgs/${tenant.orgId}/teams/${teamId}/members`, { memberId: tenant.member.memberId })).status, 204);
    let listed = await api(app.url, tenant.member.token).get(`/v1/orgs/${tenant.orgId}/teams`);
    assert.deepEqual(listed.body.teams.find((t: { id: string }) => t.id === teamId).memberIds, [tenant.member.memberId]);
    assert.equal((await admin.delete(`/v1/orgs/${tenant.orgId}/teams/${teamId}/members/${tenant.member.memberId}`)).status, 204);
    listed = await api(app.url, tenant.member.token).get(`/v1/orgs/${tenant.orgId}/teams`);
    assert.deepEqual(listed.body.teams.find((t: { id: string }) => t.id === teamId).memberIds, []);
  });

  it('API keys: the key is shown once, authenticates as x-api-key, and stops working when revoked', async () => {
    const owner = api(app.url, tenant.owner.token);
    const created = await owner.post(`/v1/orgs/${tenant.orgId}/api-keys`, { name: 'ci', role: 'member' });
    assert.equal(created.status, 201, created.text);
    const key = created.body.key as string;
    assert.match(key, /^opk_/);
    const listed = await owner.get(`/v1/orgs/${tenant.orgId}/api-keys`);
    assert.equal(listed.status, 200);
    assert.ok(!listed.text.includes(key), 'the key must not be listed again');
    const viaKey = await api(app.url).get(`/v1/orgs/${tenant.orgId}/members`, { headers: { 'x-api-key': key } });
    assert.equal(viaKey.status, 200, viaKey.text);
    assert.equal((await owner.delete(`/v1/orgs/${tenant.orgId}/api-keys/${created.body.apiKey.id}`)).status, 204);
    const revoked = await api(app.url).get(`/v1/orgs/${tenant.orgId}/members`, { headers: { 'x-api-key': key } });
    assert.equal(revoked.status, 401);
  });

  it('an instance administrator sets plans by API; the CLI path uses the same rule', async () => {
    const fresh = await startTestApp();
    try {
      const root = await api(fresh.url).post('/v1/bootstrap', { email: 'r@example.test', password: 'long enough pw', name: 'R', organizationName: 'Root org' });
      const other = await signUp(fresh.url, 'planned');
      const orgId = (await api(fresh.url, other.token).post('/v1/orgs', { name: 'Planned' })).body.organization.id;
      const set = await api(fresh.url, root.body.sessionToken).put(`/v1/admin/orgs/${orgId}/plan`, { plan: 'enterprise' });
      assert.equal(set.status, 200, set.text);
      assert.equal(set.body.organization.plan, 'enterprise');
      assert.equal((await api(fresh.url, other.token).get('/v1/org')).body.organization.plan, 'enterprise');
      const viaService = await setPlanAsOperator(fresh, orgId, 'team');
      assert.equal(viaService.plan, 'team');
    } finally {
      await fresh.close();
    }
  });

  it('health, OpenAPI and metrics answer', async () => {
    const health = await api(app.url).get('/health');
    assert.deepEqual([health.status, health.body], [200, { status: 'ok' }]);
    const openapi = await api(app.url).get('/openapi.json');
    assert.equal(openapi.body.openapi, '3.1.0');
    assert.equal(openapi.body.info.version, 'dev');
    for (const tag of ['System', 'Organizations', 'Invitations', 'API Keys', 'SCIM', 'SSO', 'Members', 'Teams', 'Admin', 'Users', 'Bootstrap']) {
      assert.ok(openapi.body.tags.some((t: { name: string }) => t.name === tag), `tag ${tag}`);
    }
    assert.ok(openapi.body.paths['/v1/org'].get);
    const docs = await fetch(new URL('/docs', app.url));
    assert.equal(docs.status, 200);
    assert.match(await docs.text(), /swagger/i);
    const metrics = await fetch(new URL('/metrics', app.url));
    assert.match(await metrics.text(), /orgplane_http_request_duration_seconds_bucket/);
  });
});
