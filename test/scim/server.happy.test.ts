// The SCIM server: discovery documents, paging, and what provisioning does to organization members.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { testBackend } from '../support/app.ts';
import { api } from '../support/http.ts';
import { holdLocks } from '../support/held-locks.ts';
import { addMember, signUp } from '../support/fixtures.ts';
import { checkTenantRouting } from '../db/tenant-routing.ts';
import { health, memberOf, patchOp, rotateScimToken, scim, startScimEnv, userBody, type ScimEnv } from './helpers.ts';

const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';

let env: ScimEnv;
let client: ReturnType<typeof scim>;
const tenantRouting = checkTenantRouting();
before(async () => {
  // The fixtures' accounts use example.test addresses, so existing members can be provisioned too.
  env = await startScimEnv({ domain: 'example.test' });
  client = scim(env.app, await rotateScimToken(env.app, env.tenant.owner.token));
});
after(async () => {
  await env.close();
});

test('discovery: ServiceProviderConfig, ResourceTypes, Schemas', async () => {
  const spc = await client.get('/ServiceProviderConfig');
  assert.equal(spc.status, 200);
  assert.match(spc.headers.get('content-type')!, /^application\/scim\+json/);
  assert.deepEqual(spc.body.schemas, ['urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig']);
  assert.equal(spc.body.patch.supported, true);
  assert.equal(spc.body.filter.supported, true);
  assert.equal(spc.body.filter.maxResults, 200);
  assert.equal(spc.body.authenticationSchemes[0].type, 'oauthbearertoken');
  const types = await client.get('/ResourceTypes');
  assert.equal(types.body.totalResults, 2);
  assert.deepEqual(
    types.body.Resources.map((t: { endpoint: string }) => t.endpoint),
    ['/Users', '/Groups'],
  );
  assert.equal((await client.get('/ResourceTypes/User')).body.schema, 'urn:ietf:params:scim:schemas:core:2.0:User');
  const schemas = await client.get('/Schemas');
  assert.equal(schemas.body.totalResults, 3);
  const user = await client.get('/Schemas/urn:ietf:params:scim:schemas:core:2.0:User');
  assert.equal(user.status, 200);
  assert.ok(user.body.attributes.some((a: { name: string }) => a.name === 'userName'));
});

test('paging: 1-based startIndex, count, numeric totalResults', async () => {
  for (let i = 0; i < 5; i++) {
    assert.equal((await client.post('/Users', userBody(`page${i}@example.test`))).status, 201);
  }
  const filter = encodeURIComponent('userName sw "page"');
  const page = await client.get(`/Users?filter=${filter}&startIndex=3&count=2`);
  assert.equal(page.status, 200);
  assert.equal(page.body.totalResults, 5);
  assert.equal(page.body.startIndex, 3);
  assert.equal(page.body.itemsPerPage, 2);
  assert.deepEqual(
    page.body.Resources.map((r: { userName: string }) => r.userName),
    ['page2@example.test', 'page3@example.test'],
  );
  for (const key of ['totalResults', 'startIndex', 'itemsPerPage']) assert.equal(typeof page.body[key], 'number');
  const countOnly = await client.get(`/Users?filter=${filter}&count=0`);
  assert.equal(countOnly.body.totalResults, 5);
  assert.deepEqual(countOnly.body.Resources, []);
  const past = await client.get(`/Users?filter=${filter}&startIndex=10`);
  assert.equal(past.body.totalResults, 5);
  assert.equal(past.body.itemsPerPage, 0);
  const or = await client.get(
    `/Users?filter=${encodeURIComponent('userName eq "page0@example.test" or (userName eq "page4@example.test" and active eq true)')}`,
  );
  assert.equal(or.body.totalResults, 2);
  const projected = await client.get(`/Users?filter=${filter}&count=1&attributes=userName`);
  assert.deepEqual(Object.keys(projected.body.Resources[0]).sort(), ['id', 'meta', 'schemas', 'userName']);
});

test('provisioning an existing account links it; deactivation suspends it and revokes its sessions; reactivation restores', async () => {
  const { member } = env.tenant;
  assert.equal((await api(env.app.url, member.token).get('/v1/org')).status, 200);
  const created = await client.post('/Users', userBody(member.email.toUpperCase(), { emails: [] }));
  assert.equal(created.status, 201, created.text);
  const before = await memberOf(env.app, env.tenant.orgId, member.email);
  assert.equal(before?.id, member.memberId, 'the existing membership is reused');
  assert.equal(before?.status, 'active');

  const off = await client.patch(`/Users/${created.body.id}`, patchOp({ op: 'replace', value: { active: false } }));
  assert.equal(off.status, 200, off.text);
  assert.equal((await memberOf(env.app, env.tenant.orgId, member.email))?.status, 'suspended');
  assert.equal((await api(env.app.url, member.token).get('/v1/org')).status, 401, 'their session was revoked');
  // Signing in again gives a session, but not access to this organization while suspended.
  const signIn = await api(env.app.url).post('/v1/auth/sign-in', { email: member.email, password: member.password });
  assert.equal(signIn.status, 200);
  const blocked = await api(env.app.url, signIn.body.sessionToken).post(
    `/v1/orgs/${env.tenant.orgId}/install-links`,
    {},
  );
  assert.equal(blocked.status, 404);

  const on = await client.patch(`/Users/${created.body.id}`, patchOp({ op: 'replace', value: { active: true } }));
  assert.equal(on.body.active, true);
  assert.equal((await memberOf(env.app, env.tenant.orgId, member.email))?.status, 'active');
  const restored = await api(env.app.url, signIn.body.sessionToken).post(
    `/v1/orgs/${env.tenant.orgId}/install-links`,
    {},
  );
  assert.equal(restored.status, 201, restored.text);
});

test('a PUT with active false also suspends; a member removed meanwhile is re-added on activation', async () => {
  const created = await client.post('/Users', userBody('returner@example.test'));
  const id = created.body.id;
  assert.equal(
    (await client.put(`/Users/${id}`, userBody('returner@example.test', { active: false }))).body.active,
    false,
  );
  assert.equal((await memberOf(env.app, env.tenant.orgId, 'returner@example.test'))?.status, 'suspended');
  await env.app.db.query(
    'DELETE FROM members WHERE organization_id = $1 AND user_id = (SELECT user_id FROM scim_users WHERE organization_id = $1 AND id = $2)',
    [env.tenant.orgId, id],
  );
  const back = await client.put(`/Users/${id}`, userBody('returner@example.test', { active: true }));
  assert.equal(back.status, 200, back.text);
  assert.equal((await memberOf(env.app, env.tenant.orgId, 'returner@example.test'))?.status, 'active');
});

test('concurrent PATCHes of one user both take effect: a deactivation is not undone by a PATCH of another attribute', async () => {
  for (let round = 0; round < 4; round++) {
    const email = `racer${round}@example.test`;
    const created = await client.post('/Users', userBody(email));
    assert.equal(created.status, 201, created.text);
    const path = `/Users/${created.body.id}`;
    // On PostgreSQL the user's row is held locked until both requests wait for it, so they surely overlap;
    // PGlite has one connection and runs them one after the other.
    const lock =
      testBackend === 'postgres'
        ? await holdLocks(env.app, 'SELECT 1 FROM scim_users WHERE organization_id = $2 AND id = $1 FOR UPDATE', [
            created.body.id,
            env.tenant.orgId,
          ])
        : undefined;
    const requests = Promise.all([
      client.patch(path, patchOp({ op: 'replace', path: 'active', value: false })),
      client.patch(path, patchOp({ op: 'replace', path: 'title', value: `Title ${round}` })),
    ]);
    if (lock) {
      await lock.waitForBlocked(2);
      await lock.release();
    }
    for (const response of await requests) assert.equal(response.status, 200, response.text);
    const stored = await client.get(path);
    assert.equal(stored.body.active, false, `round ${round}: the deactivation holds`);
    assert.equal(stored.body.title, `Title ${round}`, `round ${round}: the other change holds`);
    assert.equal((await memberOf(env.app, env.tenant.orgId, email))?.status, 'suspended');
  }
});

test('health: failures are counted with time, action and message; a success clears the count and sets lastSuccessfulSyncAt', async () => {
  const before = await health(env.app, env.tenant.owner.token);
  assert.equal(before.unresolvedFailureCount, 0);
  assert.ok(before.lastSuccessfulSyncAt);
  assert.equal((await client.post('/Users', userBody('page0@example.test'))).status, 409);
  assert.equal(
    (await client.patch('/Users/scimu_unknown', patchOp({ op: 'replace', value: { active: false } }))).status,
    404,
  );
  const failed = await health(env.app, env.tenant.owner.token);
  assert.equal(failed.unresolvedFailureCount, 2);
  assert.match(String(failed.lastFailureAt), /Z$/);
  assert.equal(failed.lastFailureAction, 'patch_user');
  assert.match(String(failed.lastFailureMessage), /^404 User scimu_unknown not found/);
  // reads are not provisioning: a failed read is not counted
  assert.equal((await client.get('/Users/scimu_unknown')).status, 404);
  assert.equal((await health(env.app, env.tenant.owner.token)).unresolvedFailureCount, 2);
  assert.equal((await client.post('/Users', userBody('fresh@example.test'))).status, 201);
  const after = await health(env.app, env.tenant.owner.token);
  assert.equal(after.unresolvedFailureCount, 0);
  assert.ok(String(after.lastSuccessfulSyncAt) >= String(failed.lastFailureAt));
  assert.equal(after.lastFailureAction, 'patch_user', 'the last failure stays on record');
  // the token route reports the same health
  const rotated = await api(env.app.url, env.tenant.owner.token).post('/v1/scim/token');
  assert.equal(rotated.body.health.lastFailureAction, 'patch_user');
  client = scim(env.app, rotated.body.scimToken);
});

test('discovery: a group member references a user, the only kind of member a group takes', async () => {
  const group = await client.get('/Schemas/urn:ietf:params:scim:schemas:core:2.0:Group');
  const members = group.body.attributes.find((a: { name: string }) => a.name === 'members');
  const ref = members.subAttributes.find((a: { name: string }) => a.name === '$ref');
  assert.deepEqual(ref.referenceTypes, ['User']);
});

test('attributes and excludedAttributes: enterprise attributes by their full name, the extension by its URN, a sub-attribute alone', async () => {
  const created = await client.post(
    '/Users',
    userBody('projected@example.test', { [ENTERPRISE]: { employeeNumber: '42', department: 'R&D' } }),
  );
  assert.equal(created.status, 201, created.text);
  const get = async (query: string) => {
    const response = await client.get(`/Users/${created.body.id}?${query}`);
    assert.equal(response.status, 200, response.text);
    return response.body;
  };
  const attributes = (names: string) => `attributes=${encodeURIComponent(names)}`;
  const excluded = (names: string) => `excludedAttributes=${encodeURIComponent(names)}`;

  const one = await get(attributes(`${ENTERPRISE}:employeeNumber`));
  assert.deepEqual(Object.keys(one).sort(), ['id', 'meta', 'schemas', ENTERPRISE].sort());
  assert.deepEqual(one[ENTERPRISE], { employeeNumber: '42' });
  // schema URNs and attribute names are case-insensitive
  assert.deepEqual((await get(attributes(`${ENTERPRISE.toUpperCase()}:EMPLOYEENUMBER`)))[ENTERPRISE], {
    employeeNumber: '42',
  });
  assert.deepEqual((await get(attributes(ENTERPRISE)))[ENTERPRISE], { employeeNumber: '42', department: 'R&D' });

  const without = await get(excluded(`${ENTERPRISE}:employeeNumber`));
  assert.deepEqual(without[ENTERPRISE], { department: 'R&D' });
  assert.equal(without.userName, 'projected@example.test');
  const withoutExtension = await get(excluded(ENTERPRISE));
  assert.equal(withoutExtension[ENTERPRISE], undefined);
  assert.equal(withoutExtension.displayName, 'Ann Lee');

  const given = await get(attributes('name.givenName'));
  assert.deepEqual(Object.keys(given).sort(), ['id', 'meta', 'name', 'schemas']);
  assert.deepEqual(given.name, { givenName: 'Ann' });
  const qualified = await get(attributes(`${USER}:name.familyName,emails.value`));
  assert.deepEqual([qualified.name, qualified.emails], [{ familyName: 'Lee' }, [{ value: 'projected@example.test' }]]);
  assert.deepEqual((await get(excluded('name.givenName'))).name, { familyName: 'Lee' });

  const list = await client.get(
    `/Users?filter=${encodeURIComponent('userName eq "projected@example.test"')}&${attributes(`${ENTERPRISE}:department`)}`,
  );
  assert.deepEqual(list.body.Resources[0][ENTERPRISE], { department: 'R&D' });
  assert.equal(list.body.Resources[0].userName, undefined);
});

test('the account follows an active SCIM user: name and e-mail change with a PUT or PATCH and show in the member list', async () => {
  const listed = async (userId: string) => {
    const members = await api(env.app.url, env.tenant.owner.token).get(
      `/v1/orgs/${env.tenant.orgId}/members?limit=100`,
    );
    const member = members.body.members.find((m: { userId: string }) => m.userId === userId);
    return [member?.name, member?.email];
  };
  const created = await client.post('/Users', userBody('follower@example.test'));
  assert.equal(created.status, 201, created.text);
  const path = `/Users/${created.body.id}`;
  const userId = (await memberOf(env.app, env.tenant.orgId, 'follower@example.test'))!.user_id;
  assert.deepEqual(await listed(userId), ['Ann Lee', 'follower@example.test']);

  const put = await client.put(
    path,
    userBody('follower@example.test', {
      displayName: 'Fay Lower',
      emails: [{ value: 'fay.lower@example.test', primary: true }],
    }),
  );
  assert.equal(put.status, 200, put.text);
  assert.deepEqual(await listed(userId), ['Fay Lower', 'fay.lower@example.test']);

  const patched = await client.patch(
    path,
    patchOp(
      { op: 'remove', path: 'displayName' },
      { op: 'replace', path: 'name', value: { givenName: 'Fay', familyName: 'Lowe' } },
      { op: 'replace', path: 'emails', value: [{ value: 'Fay.Lowe@Example.test', primary: true }] },
    ),
  );
  assert.equal(patched.status, 200, patched.text);
  assert.deepEqual(
    await listed(userId),
    ['Fay Lowe', 'fay.lowe@example.test'],
    'named as on creation: given and family name when there is no displayName',
  );

  // A deactivation only suspends: the account keeps what it had.
  const off = await client.put(
    path,
    userBody('follower@example.test', {
      active: false,
      displayName: 'Gone',
      emails: [{ value: 'gone@example.test', primary: true }],
    }),
  );
  assert.equal(off.status, 200, off.text);
  assert.deepEqual(await listed(userId), ['Fay Lowe', 'fay.lowe@example.test']);

  // An existing account linked by a POST (a member the organization has already) takes the directory's name.
  const person = await signUp(env.app.url, 'linked');
  await addMember(env.app.url, env.tenant.owner, env.tenant.orgId, person, 'member');
  const linked = await client.post('/Users', userBody(person.email, { displayName: 'Linda Inked' }));
  assert.equal(linked.status, 201, linked.text);
  assert.deepEqual(await listed(person.userId), ['Linda Inked', person.email]);
});

test('attributes of no supported schema are ignored, not stored and echoed back', async () => {
  const created = await client.post(
    '/Users',
    userBody('unknowns@example.test', {
      customThing: 1,
      'urn:example:custom:2.0:User': { badge: 'x' },
      name: { givenName: 'Una', familyName: 'Known', nickname2: 'x' },
    }),
  );
  assert.equal(created.status, 201, created.text);
  const path = `/Users/${created.body.id}`;
  const patched = await client.patch(path, patchOp({ op: 'add', path: 'otherThing', value: 2 }));
  assert.equal(patched.status, 200, patched.text);
  for (const body of [created.body, patched.body, (await client.get(path)).body]) {
    assert.equal(body.customThing, undefined);
    assert.equal(body.otherThing, undefined);
    assert.equal(body['urn:example:custom:2.0:User'], undefined);
    assert.deepEqual(body.schemas, [USER]);
    assert.deepEqual(body.name, { givenName: 'Una', familyName: 'Known' });
  }
  const { rows } = await env.app.db.query(
    'SELECT resource::text AS text FROM scim_users WHERE organization_id = $2 AND id = $1',
    [created.body.id, env.tenant.orgId],
  );
  assert.doesNotMatch(rows[0].text, /customThing|otherThing|badge|nickname2/);
});

// These flows' statements stay on one tenant (test/db/tenant-routing.ts): on a database distributed by
// tenant, each runs on one node.
test('their statements stay on one tenant', async () => {
  await tenantRouting.assertStatementsStayOnOneTenant(env.app.db, 20);
});
