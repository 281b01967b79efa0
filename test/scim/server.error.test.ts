// The SCIM server's errors: SCIM error bodies (status as a string, scimType) for every failure.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { api } from '../support/http.ts';
import { patchOp, rotateScimToken, scim, startScimEnv, userBody, type ScimEnv } from './helpers.ts';

let env: ScimEnv;
let token: string;
let client: ReturnType<typeof scim>;
before(async () => {
  env = await startScimEnv({ domain: 'acme.example' });
  token = await rotateScimToken(env.app, env.tenant.owner.token);
  client = scim(env.app, token);
});
after(async () => {
  await env.close();
});

const ERROR = 'urn:ietf:params:scim:api:messages:2.0:Error';
function assertScimError(response: { status: number; body: any; headers: Headers }, status: number, scimType?: string) {
  assert.equal(response.status, status, JSON.stringify(response.body));
  assert.deepEqual(response.body.schemas, [ERROR]);
  assert.equal(response.body.status, String(status));
  assert.equal(response.body.scimType, scimType);
  assert.equal(typeof response.body.detail, 'string');
  assert.match(response.headers.get('content-type')!, /^application\/scim\+json/);
}

test('duplicate userName (case-insensitive): 409 uniqueness', async () => {
  assert.equal((await client.post('/Users', userBody('ann@acme.example'))).status, 201);
  assertScimError(await client.post('/Users', userBody('ANN@acme.example')), 409, 'uniqueness');
  const other = await client.post('/Users', userBody('bob@acme.example'));
  // renaming onto a taken userName is a conflict too
  assertScimError(await client.patch(`/Users/${other.body.id}`, patchOp({ op: 'replace', path: 'userName', value: 'Ann@Acme.example' })), 409, 'uniqueness');
  assertScimError(await client.put(`/Users/${other.body.id}`, userBody('ann@acme.example')), 409, 'uniqueness');
});

test('unknown resources: 404', async () => {
  for (const response of [
    await client.get('/Users/scimu_01jqz3v6b8e9f0g1h2j3k4m5n6'),
    await client.put('/Users/nope', userBody('x@acme.example')),
    await client.delete('/Users/nope'),
    await client.get('/Groups/nope'),
    await client.patch('/Groups/nope', patchOp({ op: 'add', path: 'members', value: [] })),
    await client.delete('/Groups/nope'),
    await client.get('/Schemas/urn:example:nope'),
    await client.get('/ResourceTypes/Device'),
    await client.get('/Devices'),
  ]) {
    assertScimError(response, 404);
  }
});

test('bad filters: 400 invalidFilter', async () => {
  for (const filter of ['userName eq', 'userName like "a"', 'nickName eq "a"', 'userName gt "a"', 'active eq "yes"', '(userName eq "a"', 'emails[foo eq "x"]']) {
    assertScimError(await client.get(`/Users?filter=${encodeURIComponent(filter)}`), 400, 'invalidFilter');
  }
  assertScimError(await client.get(`/Groups?filter=${encodeURIComponent('owner eq "x"')}`), 400, 'invalidFilter');
});

test('bad paging values: 400 invalidValue', async () => {
  assertScimError(await client.get('/Users?count=ten'), 400, 'invalidValue');
  assertScimError(await client.get('/Users?startIndex=1.5'), 400, 'invalidValue');
});

test('bad bodies: invalid JSON, missing or invalid attributes, unknown members', async () => {
  const raw = await api(env.app.url, token).post('/scim/v2/Users', undefined, { raw: '{"userName":', headers: { 'content-type': 'application/scim+json' } });
  assertScimError(raw, 400, 'invalidSyntax');
  assertScimError(await client.post('/Users', { schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'] }), 400, 'invalidValue');
  assertScimError(await client.post('/Users', { userName: 'no-email-here' }), 400, 'invalidValue');
  assertScimError(await client.post('/Users', userBody('c@acme.example', { active: 'maybe' })), 400, 'invalidValue');
  assertScimError(await client.post('/Users', [userBody('c@acme.example')]), 400, 'invalidSyntax');
  assertScimError(await client.post('/Groups', { displayName: '' }), 400, 'invalidValue');
  assertScimError(await client.post('/Groups', { displayName: 'G', members: [{ value: 'scimu_not_a_user' }] }), 400, 'invalidValue');
  const text = await api(env.app.url, token).post('/scim/v2/Users', undefined, { raw: 'userName=x', headers: { 'content-type': 'text/plain' } });
  assertScimError(text, 415);
});

test('bad PATCH requests: 400 with the SCIM type that says why', async () => {
  const user = await client.post('/Users', userBody('patchy@acme.example'));
  const path = `/Users/${user.body.id}`;
  assertScimError(await client.patch(path, patchOp({ op: 'move', path: 'title', value: 'x' })), 400, 'invalidSyntax');
  assertScimError(await client.patch(path, { schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: [] }), 400, 'invalidSyntax');
  assertScimError(await client.patch(path, { schemas: ['urn:wrong'], Operations: [{ op: 'add', path: 'title', value: 'x' }] }), 400, 'invalidSyntax');
  assertScimError(await client.patch(path, patchOp({ op: 'remove' })), 400, 'noTarget');
  assertScimError(await client.patch(path, patchOp({ op: 'replace', path: 'emails[value eq "nobody@acme.example"].value', value: 'x' })), 400, 'noTarget');
  assertScimError(await client.patch(path, patchOp({ op: 'replace', path: 'id', value: 'mine' })), 400, 'mutability');
  assertScimError(await client.patch(path, patchOp({ op: 'replace', path: 'bad path!', value: 'x' })), 400, 'invalidPath');
  assertScimError(await client.patch(path, patchOp({ op: 'replace', path: 'userName', value: '' })), 400, 'invalidValue');
  // nothing was changed by the failed requests
  assert.equal((await client.get(path)).body.userName, 'patchy@acme.example');
});

test('an organization whose SSO domain is no longer verified cannot provision', async () => {
  await api(env.app.url, env.tenant.owner.token).put('/v1/sso/connection', { domain: 'changed.example', issuer: 'https://idp.example.test', clientId: 'c' });
  assertScimError(await client.post('/Users', userBody('new@changed.example')), 403);
  // reading still works
  assert.equal((await client.get('/Users')).status, 200);
});
