// A person's copy of their memberships (user_memberships, migration 1000) is what the session lookup
// and GET /v1/me read; the membership core writes it with every change of members. These tests change
// members every way the API can (invitation, role, ownership, SCIM suspension and reactivation,
// SCIM provisioning, removal) and compare the two tables after each change, then check that what the
// person is shown follows.
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

type Row = { user_id: string; organization_id: string; member_id: string; role: string; status: string };

async function assertCopyMatchesMembers(step: string): Promise<Row[]> {
  const members = await env.app.db.query<Row>(
    'SELECT user_id, organization_id, id AS member_id, role, status FROM members ORDER BY user_id, organization_id',
  );
  const copies = await env.app.db.query<Row>(
    'SELECT user_id, organization_id, member_id, role, status FROM user_memberships ORDER BY user_id, organization_id',
  );
  assert.deepEqual(copies.rows, members.rows, `after ${step}`);
  return members.rows;
}

const organizationsOf = async (token: string) =>
  ((await api(env.app.url, token).get('/v1/me')).body.organizations as { id: string; role: string; memberId: string }[])
    .map(({ id, role, memberId }) => ({ id, role, memberId }));

test('every change of members changes the person\'s copy in the same transaction', async () => {
  const { tenant } = env;
  const rows = await assertCopyMatchesMembers('invitations were accepted');
  assert.equal(rows.filter((row) => row.organization_id === tenant.orgId).length, 3);

  const owner = api(env.app.url, tenant.owner.token);
  assert.equal((await owner.patch(`/v1/orgs/${tenant.orgId}/members/${tenant.member.memberId}`, { role: 'admin' })).status, 200);
  await assertCopyMatchesMembers('a role change');
  assert.deepEqual(await organizationsOf(tenant.member.token), [{ id: tenant.orgId, role: 'admin', memberId: tenant.member.memberId }]);
  assert.equal((await owner.patch(`/v1/orgs/${tenant.orgId}/members/${tenant.member.memberId}`, { role: 'member' })).status, 200);

  assert.equal((await owner.post(`/v1/orgs/${tenant.orgId}/transfer-ownership`, { memberId: tenant.admin.memberId })).status, 200);
  await assertCopyMatchesMembers('a transfer of ownership');
  assert.equal((await organizationsOf(tenant.admin.token))[0]?.role, 'owner');
  assert.equal((await organizationsOf(tenant.owner.token))[0]?.role, 'admin');

  const client = scim(env.app, await rotateScimToken(env.app, tenant.admin.token));
  const linked = await client.post('/Users', userBody(tenant.member.email, { emails: [] }));
  assert.equal(linked.status, 201, linked.text);
  assert.equal((await client.patch(`/Users/${linked.body.id}`, patchOp({ op: 'replace', value: { active: false } }))).status, 200);
  await assertCopyMatchesMembers('a SCIM deactivation');
  const signIn = await api(env.app.url).post('/v1/auth/sign-in', { email: tenant.member.email, password: tenant.member.password });
  assert.equal(signIn.status, 200, signIn.text);
  assert.deepEqual(await organizationsOf(signIn.body.sessionToken), [], 'a suspended member is shown no organization');
  assert.equal((await api(env.app.url, signIn.body.sessionToken).get('/v1/org')).status, 404);

  assert.equal((await client.patch(`/Users/${linked.body.id}`, patchOp({ op: 'replace', value: { active: true } }))).status, 200);
  await assertCopyMatchesMembers('a SCIM reactivation');
  assert.deepEqual(await organizationsOf(signIn.body.sessionToken), [{ id: tenant.orgId, role: 'member', memberId: tenant.member.memberId }]);

  const provisioned = await client.post('/Users', userBody('newcomer@example.test'));
  assert.equal(provisioned.status, 201, provisioned.text);
  const afterProvisioning = await assertCopyMatchesMembers('SCIM provisioning');
  assert.equal(afterProvisioning.filter((row) => row.organization_id === tenant.orgId).length, 4);

  assert.equal((await api(env.app.url, tenant.admin.token).delete(`/v1/orgs/${tenant.orgId}/members/${tenant.member.memberId}`)).status, 204);
  await assertCopyMatchesMembers('a removal');
  assert.deepEqual(await organizationsOf(signIn.body.sessionToken), []);
});
