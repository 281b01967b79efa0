// The request sequence Okta sends when it provisions, updates, deactivates and reactivates a user
// and pushes a group (Okta's SCIM 2.0 integration: PUT for profile updates, path-less PATCH for
// active, group PATCH with the id echoed back and members[value eq "..."] removals).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { api } from '../support/http.ts';
import { health, memberOf, patchOp, rotateScimToken, scim, startScimEnv, type ScimEnv } from './helpers.ts';

let env: ScimEnv;
let client: ReturnType<typeof scim>;
before(async () => {
  env = await startScimEnv({ domain: 'okta-corp.example' });
  client = scim(env.app, await rotateScimToken(env.app, env.tenant.owner.token));
});
after(async () => {
  await env.close();
});

const q = (filter: string) => `?filter=${encodeURIComponent(filter)}&startIndex=1&count=100`;

test('Okta: import check, create, read, profile PUT, deactivate, reactivate; then group push', async () => {
  const email = 'dana.smith@okta-corp.example';
  // 1. Does the user exist?
  const lookup = await client.get(`/Users${q(`userName eq "${email}"`)}`);
  assert.equal(lookup.status, 200);
  assert.deepEqual(lookup.body, {
    schemas: ['urn:ietf:params:scim:api:messages:2.0:ListResponse'],
    totalResults: 0,
    startIndex: 1,
    itemsPerPage: 0,
    Resources: [],
  });

  // 2. Create (Okta sends a password when password sync is on; it must never be kept)
  const created = await client.post('/Users', {
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
    userName: email,
    name: { givenName: 'Dana', familyName: 'Smith' },
    emails: [{ primary: true, value: email, type: 'work' }],
    displayName: 'Dana Smith',
    locale: 'en-US',
    externalId: '00u1abcdEFGH',
    groups: [],
    password: 'Okta-Pa55word!',
    active: true,
  });
  assert.equal(created.status, 201, created.text);
  assert.match(created.headers.get('content-type')!, /^application\/scim\+json/);
  const id = created.body.id;
  assert.equal(created.headers.get('location'), `${env.app.config.publicUrl}/scim/v2/Users/${id}`);
  assert.equal(created.body.userName, email);
  assert.equal(created.body.externalId, '00u1abcdEFGH');
  assert.equal(created.body.active, true);
  assert.equal(created.body.meta.resourceType, 'User');
  assert.equal(created.body.password, undefined);
  assert.ok(!created.text.includes('Okta-Pa55word!'));
  const member = await memberOf(env.app, env.tenant.orgId, email);
  assert.equal(member?.status, 'active');
  assert.equal(member?.role, 'member');
  const dump =
    JSON.stringify((await env.app.db.query('SELECT * FROM scim_users')).rows) +
    JSON.stringify((await env.app.db.query('SELECT * FROM users')).rows);
  assert.ok(!dump.includes('Okta-Pa55word!'), 'the password is not stored anywhere');

  // 3. Okta re-reads it, also by filter with different case
  assert.equal((await client.get(`/Users/${id}`)).body.id, id);
  const found = await client.get(`/Users${q(`userName eq "DANA.SMITH@okta-corp.example"`)}`);
  assert.equal(found.body.totalResults, 1);
  assert.equal(found.body.Resources[0].id, id);

  // 4. Profile update with PUT (the whole resource)
  const put = await client.put(`/Users/${id}`, {
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
    id,
    userName: email,
    name: { givenName: 'Dana', familyName: 'Smith-Jones' },
    emails: [{ primary: true, value: email, type: 'work' }],
    displayName: 'Dana Smith-Jones',
    externalId: '00u1abcdEFGH',
    active: true,
  });
  assert.equal(put.status, 200, put.text);
  assert.equal(put.body.name.familyName, 'Smith-Jones');
  assert.equal(put.body.locale, undefined, 'PUT replaces: attributes not sent are gone');

  // 5. Deactivate: path-less replace with a value object
  const deactivated = await client.patch(`/Users/${id}`, patchOp({ op: 'replace', value: { active: false } }));
  assert.equal(deactivated.status, 200, deactivated.text);
  assert.equal(deactivated.body.active, false);
  assert.equal((await memberOf(env.app, env.tenant.orgId, email))?.status, 'suspended');
  const inactive = await client.get(`/Users${q('active eq false')}`);
  assert.deepEqual(
    inactive.body.Resources.map((r: { id: string }) => r.id),
    [id],
  );

  // 6. Reactivate
  const reactivated = await client.patch(`/Users/${id}`, patchOp({ op: 'replace', value: { active: true } }));
  assert.equal(reactivated.body.active, true);
  assert.equal((await memberOf(env.app, env.tenant.orgId, email))?.status, 'active');

  // 7. Group push: lookup, create, rename (id echoed), add member, remove member, delete
  assert.equal((await client.get(`/Groups${q('displayName eq "Engineering"')}`)).body.totalResults, 0);
  const group = await client.post('/Groups', {
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'],
    displayName: 'Engineering',
    members: [],
  });
  assert.equal(group.status, 201, group.text);
  const gid = group.body.id;
  const renamed = await client.patch(
    `/Groups/${gid}`,
    patchOp({ op: 'replace', value: { id: gid, displayName: 'Engineering Team' } }),
  );
  assert.equal(renamed.status, 200, renamed.text);
  assert.equal(renamed.body.displayName, 'Engineering Team');
  const added = await client.patch(
    `/Groups/${gid}`,
    patchOp({ op: 'add', path: 'members', value: [{ value: id, display: email }] }),
  );
  assert.deepEqual(
    added.body.members.map((m: { value: string }) => m.value),
    [id],
  );
  const userGroups = (await client.get(`/Users/${id}`)).body.groups;
  assert.deepEqual(
    userGroups.map((g: { value: string; display: string }) => [g.value, g.display]),
    [[gid, 'Engineering Team']],
  );
  const removed = await client.patch(`/Groups/${gid}`, patchOp({ op: 'remove', path: `members[value eq "${id}"]` }));
  assert.deepEqual(removed.body.members, []);
  // metadata_only: no team was made from the group
  const teams = await env.app.db.query('SELECT count(*)::int AS n FROM teams WHERE organization_id = $1', [
    env.tenant.orgId,
  ]);
  assert.equal(teams.rows[0].n, 0);
  assert.equal((await client.delete(`/Groups/${gid}`)).status, 204);
  assert.equal((await client.get(`/Groups/${gid}`)).status, 404);

  // every write above succeeded: health shows a sync and no failures
  const h = await health(env.app, env.tenant.owner.token);
  assert.equal(h.unresolvedFailureCount, 0);
  assert.match(String(h.lastSuccessfulSyncAt), /Z$/);
  assert.equal(h.lastFailureAt, undefined);
  // the organization's own API still lists the member
  const view = await api(env.app.url, env.tenant.owner.token).get(`/v1/orgs/${env.tenant.orgId}/members?limit=100`);
  assert.ok(
    view.body.members.some((m: { userId?: string; user?: { email: string } }) => JSON.stringify(m).includes(email)),
  );
});
