// A person's copy of their memberships and teams (user_memberships, migration 1000) and each
// organization's owner (organization_owners) are what the session lookup, GET /v1/me and GET /v1/org read; the
// membership core writes them with every change of members, the teams module through it. These tests
// change members and teams every way the API can (invitation, role, ownership, teams, SCIM suspension
// and reactivation, SCIM provisioning, removal) and compare the copies with the tables after each
// change, then check that what the person is shown follows.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { api } from '../support/http.ts';
import { patchOp, rotateScimToken, scim, startScimEnv, userBody, type ScimEnv } from '../scim/helpers.ts';

let env: ScimEnv;
before(async () => {
  env = await startScimEnv({ domain: 'example.test' });
});
after(async () => {
  await env.close();
});

type Row = {
  user_id: string;
  organization_id: string;
  member_id: string;
  role: string;
  status: string;
  since: Date;
  teams: unknown;
};

/** The copies (each person's memberships with their teams, each organization's owner) against the tables they copy. */
async function assertCopyMatchesMembers(step: string): Promise<Row[]> {
  const members = await env.app.db.query<Row>(
    `/* test */ SELECT m.user_id, m.organization_id, m.id AS member_id, m.role, m.status, m.created_at AS since,
            coalesce((SELECT jsonb_agg(jsonb_build_object('id', t.id, 'organization_id', t.organization_id, 'name', t.name, 'role_id', t.role_id, 'created_at', t.created_at)
                                       ORDER BY t.name, t.id)
                        FROM team_members tm JOIN teams t ON t.organization_id = tm.organization_id AND t.id = tm.team_id
                       WHERE tm.organization_id = m.organization_id AND tm.member_id = m.id), '[]') AS teams
       FROM members m ORDER BY m.user_id, m.organization_id`,
  );
  const copies = await env.app.db.query<Row>(
    '/* test */ SELECT user_id, organization_id, member_id, role, status, member_since AS since, teams FROM user_memberships ORDER BY user_id, organization_id',
  );
  assert.deepEqual(copies.rows, members.rows, `memberships after ${step}`);
  const owners = await env.app.db.query(
    `/* test */ SELECT o.id, c.member_id AS copied_member, c.user_id AS copied_user, c.status AS copied_status, c.member_since AS copied_since,
            m.id AS member_id, m.user_id, m.status, m.created_at
       FROM organizations o
       LEFT JOIN organization_owners c ON c.organization_id = o.id
       LEFT JOIN members m ON m.organization_id = o.id AND m.role = 'owner' ORDER BY o.id`,
  );
  for (const row of owners.rows) {
    assert.deepEqual(
      [row.copied_member, row.copied_user, row.copied_status, row.copied_since],
      [row.member_id, row.user_id, row.status, row.created_at],
      `owner of ${row.id} after ${step}`,
    );
  }
  return members.rows;
}

const organizationsOf = async (token: string) =>
  (
    (await api(env.app.url, token).get('/v1/me')).body.organizations as { id: string; role: string; memberId: string }[]
  ).map(({ id, role, memberId }) => ({ id, role, memberId }));

test("every change of members changes the person's copy in the same transaction", async () => {
  const { tenant } = env;
  const rows = await assertCopyMatchesMembers('invitations were accepted');
  assert.equal(rows.filter((row) => row.organization_id === tenant.orgId).length, 3);

  const owner = api(env.app.url, tenant.owner.token);
  assert.equal(
    (await owner.patch(`/v1/orgs/${tenant.orgId}/members/${tenant.member.memberId}`, { role: 'admin' })).status,
    200,
  );
  await assertCopyMatchesMembers('a role change');
  assert.deepEqual(await organizationsOf(tenant.member.token), [
    { id: tenant.orgId, role: 'admin', memberId: tenant.member.memberId },
  ]);
  assert.equal(
    (await owner.patch(`/v1/orgs/${tenant.orgId}/members/${tenant.member.memberId}`, { role: 'member' })).status,
    200,
  );

  assert.equal(
    (await owner.post(`/v1/orgs/${tenant.orgId}/transfer-ownership`, { memberId: tenant.admin.memberId })).status,
    200,
  );
  await assertCopyMatchesMembers('a transfer of ownership');
  assert.equal((await organizationsOf(tenant.admin.token))[0]?.role, 'owner');
  assert.equal((await organizationsOf(tenant.owner.token))[0]?.role, 'admin');
  assert.equal(
    (await api(env.app.url, tenant.member.token).get('/v1/org')).body.organization.owner.memberId,
    tenant.admin.memberId,
  );

  // Teams: two added at once (each change locks the copy, then reads the teams), then one removed.
  const admin = api(env.app.url, tenant.admin.token);
  const teamIds: string[] = [];
  for (const name of ['Blue', 'Amber']) {
    const team = await admin.post(`/v1/orgs/${tenant.orgId}/teams`, { name });
    assert.equal(team.status, 201, team.text);
    teamIds.push(team.body.team.id);
  }
  const added = await Promise.all(
    teamIds.map((teamId) =>
      admin.post(`/v1/orgs/${tenant.orgId}/teams/${teamId}/members`, { memberId: tenant.member.memberId }),
    ),
  );
  assert.deepEqual(
    added.map((response) => response.status),
    [204, 204],
  );
  await assertCopyMatchesMembers('two teams joined at once');
  const shown = await api(env.app.url, tenant.member.token).get('/v1/org');
  assert.deepEqual(
    shown.body.currentMemberTeams.map((team: { name: string }) => team.name),
    ['Amber', 'Blue'],
  );
  assert.equal(
    (await admin.delete(`/v1/orgs/${tenant.orgId}/teams/${teamIds[0]}/members/${tenant.member.memberId}`)).status,
    204,
  );
  await assertCopyMatchesMembers('a team left');
  assert.deepEqual(
    (await api(env.app.url, tenant.member.token).get('/v1/org')).body.currentMemberTeams.map(
      (team: { name: string }) => team.name,
    ),
    ['Amber'],
  );

  const client = scim(env.app, await rotateScimToken(env.app, tenant.admin.token));
  const linked = await client.post('/Users', userBody(tenant.member.email, { emails: [] }));
  assert.equal(linked.status, 201, linked.text);
  assert.equal(
    (await client.patch(`/Users/${linked.body.id}`, patchOp({ op: 'replace', value: { active: false } }))).status,
    200,
  );
  await assertCopyMatchesMembers('a SCIM deactivation');
  const signIn = await api(env.app.url).post('/v1/auth/sign-in', {
    email: tenant.member.email,
    password: tenant.member.password,
  });
  assert.equal(signIn.status, 200, signIn.text);
  assert.deepEqual(await organizationsOf(signIn.body.sessionToken), [], 'a suspended member is shown no organization');
  assert.equal((await api(env.app.url, signIn.body.sessionToken).get('/v1/org')).status, 404);

  assert.equal(
    (await client.patch(`/Users/${linked.body.id}`, patchOp({ op: 'replace', value: { active: true } }))).status,
    200,
  );
  await assertCopyMatchesMembers('a SCIM reactivation');
  assert.deepEqual(await organizationsOf(signIn.body.sessionToken), [
    { id: tenant.orgId, role: 'member', memberId: tenant.member.memberId },
  ]);

  const provisioned = await client.post('/Users', userBody('newcomer@example.test'));
  assert.equal(provisioned.status, 201, provisioned.text);
  const afterProvisioning = await assertCopyMatchesMembers('SCIM provisioning');
  assert.equal(afterProvisioning.filter((row) => row.organization_id === tenant.orgId).length, 4);

  assert.equal(
    (await api(env.app.url, tenant.admin.token).delete(`/v1/orgs/${tenant.orgId}/members/${tenant.member.memberId}`))
      .status,
    204,
  );
  await assertCopyMatchesMembers('a removal');
  assert.deepEqual(await organizationsOf(signIn.body.sessionToken), []);
});
