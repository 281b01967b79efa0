// The request sequence Microsoft Entra ID sends (its SCIM validator's and provisioning service's
// requests): filter lookups, a create with the enterprise extension, PATCH with capitalised ops,
// "False" strings, filtered paths, group membership checks with excludedAttributes, and delete.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { health, memberOf, patchOp, rotateScimToken, scim, startScimEnv, type ScimEnv } from './helpers.ts';

const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';

let env: ScimEnv;
let client: ReturnType<typeof scim>;
before(async () => {
  env = await startScimEnv({ domain: 'contoso.example' });
  client = scim(env.app, await rotateScimToken(env.app, env.tenant.owner.token));
});
after(async () => {
  await env.close();
});

const q = (filter: string, extra = '') => `?filter=${encodeURIComponent(filter)}${extra}`;

test('Entra ID: user lifecycle', async () => {
  const upn = 'Adele.Vance@Contoso.example';
  // Entra first checks for a user it knows cannot exist, then for the real one.
  assert.equal((await client.get(`/Users${q('userName eq "non-existent user"')}`)).body.totalResults, 0);
  assert.equal((await client.get(`/Users${q(`userName eq "${upn}"`)}`)).body.totalResults, 0);

  const created = await client.post('/Users', {
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:User', ENTERPRISE],
    externalId: '6f2a9c4e-0000-4000-8000-000000000001',
    userName: upn,
    active: true,
    addresses: [{ primary: true, type: 'work', country: 'US', locality: 'Seattle' }],
    displayName: 'Adele Vance',
    emails: [{ primary: true, type: 'work', value: upn }],
    meta: { resourceType: 'User' },
    name: { formatted: 'Adele Vance', familyName: 'Vance', givenName: 'Adele' },
    title: 'Retail Manager',
    roles: [],
    [ENTERPRISE]: { employeeNumber: '1001', department: 'Retail' },
  });
  assert.equal(created.status, 201, created.text);
  const id = created.body.id;
  assert.deepEqual(created.body.schemas, ['urn:ietf:params:scim:schemas:core:2.0:User', ENTERPRISE]);
  assert.deepEqual(created.body[ENTERPRISE], { employeeNumber: '1001', department: 'Retail' });
  assert.equal((await memberOf(env.app, env.tenant.orgId, upn))?.status, 'active');

  // Matching by externalId and by e-mail work as well (externalId is case-exact).
  assert.equal(
    (await client.get(`/Users${q('externalId eq "6f2a9c4e-0000-4000-8000-000000000001"')}`)).body.totalResults,
    1,
  );
  assert.equal(
    (await client.get(`/Users${q('externalId eq "6F2A9C4E-0000-4000-8000-000000000001"')}`)).body.totalResults,
    0,
  );
  assert.equal((await client.get(`/Users${q('emails.value eq "adele.vance@contoso.example"')}`)).body.totalResults, 1);
  assert.equal(
    (await client.get(`/Users${q('emails[type eq "work" and value eq "ADELE.VANCE@contoso.example"]')}`)).body
      .totalResults,
    1,
  );

  // Attribute updates, the way Entra sends them.
  const updated = await client.patch(
    `/Users/${id}`,
    patchOp(
      { op: 'Replace', path: 'displayName', value: 'Adele V.' },
      { op: 'Add', path: 'emails[type eq "other"].value', value: 'adele@personal.contoso.example' },
      { op: 'Replace', path: 'name.familyName', value: 'Vance-Smith' },
      { op: 'Add', path: `${ENTERPRISE}:department`, value: 'Sales' },
      { op: 'Add', path: `${ENTERPRISE}:manager`, value: 'manager-id-1' },
      { op: 'Replace', path: 'title', value: 'Sales Lead' },
    ),
  );
  assert.equal(updated.status, 200, updated.text);
  assert.equal(updated.body.displayName, 'Adele V.');
  assert.equal(updated.body.name.familyName, 'Vance-Smith');
  assert.deepEqual(
    updated.body.emails.map((e: { type: string; value: string }) => [e.type, e.value]),
    [
      ['work', upn],
      ['other', 'adele@personal.contoso.example'],
    ],
  );
  assert.deepEqual(updated.body[ENTERPRISE], {
    employeeNumber: '1001',
    department: 'Sales',
    manager: { value: 'manager-id-1' },
  });
  assert.equal(updated.body.title, 'Sales Lead');
  assert.equal((await client.get(`/Users${q('displayName eq "adele v."')}`)).body.totalResults, 1);

  // Disable with the string "False"; enable with "True".
  const disabled = await client.patch(`/Users/${id}`, patchOp({ op: 'Replace', path: 'active', value: 'False' }));
  assert.equal(disabled.status, 200, disabled.text);
  assert.equal(disabled.body.active, false);
  assert.equal((await memberOf(env.app, env.tenant.orgId, upn))?.status, 'suspended');
  const enabled = await client.patch(`/Users/${id}`, patchOp({ op: 'Replace', path: 'active', value: 'True' }));
  assert.equal(enabled.body.active, true);
  assert.equal((await memberOf(env.app, env.tenant.orgId, upn))?.status, 'active');

  // Delete: the member leaves the organization.
  assert.equal((await client.delete(`/Users/${id}`)).status, 204);
  assert.equal((await client.get(`/Users/${id}`)).status, 404);
  assert.equal(await memberOf(env.app, env.tenant.orgId, upn), undefined);
});

test('Entra ID: group lifecycle with membership checks', async () => {
  const users = [];
  for (const name of ['megan', 'lynne']) {
    const response = await client.post('/Users', {
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
      userName: `${name}@contoso.example`,
      active: true,
    });
    assert.equal(response.status, 201, response.text);
    users.push(response.body.id as string);
  }
  const [megan, lynne] = users as [string, string];
  assert.equal(
    (await client.get(`/Groups${q('displayName eq "Sales Team"', '&excludedAttributes=members')}`)).body.totalResults,
    0,
  );
  const group = await client.post('/Groups', {
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'],
    externalId: '8aa1a0c0-0000-4000-8000-000000000002',
    displayName: 'Sales Team',
    meta: { resourceType: 'Group' },
    members: [],
  });
  assert.equal(group.status, 201, group.text);
  const gid = group.body.id;
  assert.equal(group.body.externalId, '8aa1a0c0-0000-4000-8000-000000000002');

  const added = await client.patch(
    `/Groups/${gid}`,
    patchOp({ op: 'Add', path: 'members', value: [{ value: megan }, { value: lynne }] }),
  );
  assert.equal(added.status, 200, added.text);
  // Entra asks "is this user in the group?" with a filter and without the member list.
  const check = (userId: string) =>
    client.get(`/Groups${q(`id eq "${gid}" and members[value eq "${userId}"]`, '&excludedAttributes=members')}`);
  const yes = await check(megan);
  assert.equal(yes.body.totalResults, 1);
  assert.equal(yes.body.Resources[0].members, undefined, 'excludedAttributes=members leaves them out');
  assert.equal(yes.body.Resources[0].displayName, 'Sales Team');
  const single = await client.get(`/Groups/${gid}?excludedAttributes=members`);
  assert.equal(single.body.members, undefined);
  assert.equal(single.body.id, gid);

  const removed = await client.patch(
    `/Groups/${gid}`,
    patchOp({ op: 'Remove', path: 'members', value: [{ value: megan }] }),
  );
  assert.deepEqual(
    removed.body.members.map((m: { value: string }) => m.value),
    [lynne],
  );
  assert.equal((await check(megan)).body.totalResults, 0);
  assert.equal((await check(lynne)).body.totalResults, 1);

  const renamed = await client.patch(`/Groups/${gid}`, patchOp({ op: 'Replace', path: 'displayName', value: 'Sales' }));
  assert.equal(renamed.body.displayName, 'Sales');
  assert.equal((await client.delete(`/Groups/${gid}`)).status, 204);
  // deleting a group leaves its users alone
  assert.equal((await client.get(`/Users/${lynne}`)).status, 200);
  assert.equal((await health(env.app, env.tenant.owner.token)).unresolvedFailureCount, 0);
});
