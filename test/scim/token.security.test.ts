// POST /v1/scim/token: who may rotate, and one organization's token never reaching another's data.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { testBackend } from '../support/app.ts';
import { addMember, signUp } from '../support/fixtures.ts';
import { holdLocks } from '../support/held-locks.ts';
import { api } from '../support/http.ts';
import { rotateScimToken, scim, startScimEnv, userBody, verifySso, type ScimEnv } from './helpers.ts';

let env: ScimEnv;
before(async () => {
  env = await startScimEnv({ domain: 'acme.example' });
  await verifySso(env.app, env.dns, env.tenant.otherOrgId, env.tenant.otherAdmin.token, 'globex.example');
});
after(async () => {
  await env.close();
});

test('anonymous and forged sessions: 401; a member: 403 forbidden and the token is not rotated', async () => {
  const token = await rotateScimToken(env.app, env.tenant.owner.token);
  for (const session of [undefined, 'ops_forged']) {
    const response = await api(env.app.url, session).post('/v1/scim/token');
    assert.equal(response.status, 401);
    assert.equal(response.body.error, 'unauthorized');
  }
  const member = await api(env.app.url, env.tenant.member.token).post('/v1/scim/token');
  assert.equal(member.status, 403);
  assert.equal(member.body.error, 'forbidden');
  assert.equal(member.body.scimToken, undefined);
  assert.equal((await api(env.app.url, env.tenant.member.token).get('/v1/scim/connection')).status, 403);
  assert.equal((await scim(env.app, token).get('/Users')).status, 200, 'the existing token still works');
});

test("tokens of one organization never work for another's resources", async () => {
  const ours = await rotateScimToken(env.app, env.tenant.owner.token);
  const theirs = await rotateScimToken(env.app, env.tenant.otherAdmin.token);
  const created = await scim(env.app, ours).post('/Users', userBody('ann@acme.example'));
  assert.equal(created.status, 201, created.text);
  const id = created.body.id;
  // Their token sees their (empty) organization only; our user is simply not there.
  const list = await scim(env.app, theirs).get('/Users');
  assert.equal(list.body.totalResults, 0);
  for (const response of [
    await scim(env.app, theirs).get(`/Users/${id}`),
    await scim(env.app, theirs).put(`/Users/${id}`, userBody('ann@acme.example', { active: false })),
    await scim(env.app, theirs).patch(`/Users/${id}`, {
      schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
      Operations: [{ op: 'replace', value: { active: false } }],
    }),
    await scim(env.app, theirs).delete(`/Users/${id}`),
  ]) {
    assert.equal(response.status, 404, response.text);
  }
  // And our user is untouched.
  const ourView = await scim(env.app, ours).get(`/Users/${id}`);
  assert.equal(ourView.body.active, true);
  // Their groups cannot reference our users.
  const group = await scim(env.app, theirs).post('/Groups', { displayName: 'Spies', members: [{ value: id }] });
  assert.equal(group.status, 400);
  assert.equal(group.body.scimType, 'invalidValue');
  // Their IdP cannot provision our domain's people into their organization.
  const hijack = await scim(env.app, theirs).post('/Users', userBody('boss@acme.example'));
  assert.equal(hijack.status, 400);
  assert.equal(hijack.body.scimType, 'invalidValue');
});

test('tampered and foreign tokens are refused', async () => {
  const token = await rotateScimToken(env.app, env.tenant.owner.token);
  const flipped = token.slice(0, -1) + (token.endsWith('A') ? 'B' : 'A');
  for (const bad of [flipped, `${token}x`, `opscim_${'A'.repeat(43)}`, env.tenant.owner.token, '']) {
    const response = await scim(env.app, bad || undefined).get('/Users');
    assert.equal(response.status, 401, bad);
    assert.deepEqual(response.body, {
      schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'],
      status: '401',
      detail: 'A valid SCIM bearer token is required',
    });
    assert.equal(response.headers.get('www-authenticate'), 'Bearer realm="scim"');
  }
  // and a SCIM token is not a session token for the rest of the API
  assert.equal((await api(env.app.url, token).get('/v1/org')).status, 401);
});

test('the SCIM token appears in no log line', async () => {
  const token = await rotateScimToken(env.app, env.tenant.owner.token);
  await scim(env.app, token).get('/Users');
  assert.ok(!env.app.logText().includes(token.slice(7)));
});

test('an admin demoted, suspended or removed while rotating the token: refused as they now are, and the token in use keeps working', {
  skip: testBackend !== 'postgres' && 'holding row locks needs PostgreSQL',
}, async () => {
  const current = await rotateScimToken(env.app, env.tenant.owner.token);
  const changes: [string, string, number, string][] = [
    ['demoted', "UPDATE members SET role = 'member' WHERE id = $1", 403, 'forbidden'],
    ['suspended', "UPDATE members SET status = 'suspended' WHERE id = $1", 404, 'organization_not_found'],
    ['removed', 'DELETE FROM members WHERE id = $1', 404, 'organization_not_found'],
  ];
  for (const [change, sql, status, error] of changes) {
    const admin = await signUp(env.app.url, `rotator-${change}`);
    await addMember(env.app.url, env.tenant.owner, env.tenant.orgId, admin, 'admin');
    // The change held uncommitted, with the connector's row: the rotation passes the route's role check,
    // then waits (on the member's row, or else on the connector's) until the change commits.
    const lock = await holdLocks(
      env.app,
      `WITH change AS (${sql} RETURNING 1) SELECT 1 FROM scim_connectors WHERE organization_id = $2 FOR UPDATE`,
      [admin.memberId, env.tenant.orgId],
    );
    const rotation = api(env.app.url, admin.token).post('/v1/scim/token');
    await lock.waitForBlocked(1);
    await lock.release();
    const response = await rotation;
    assert.deepEqual([response.status, response.body.error], [status, error], `${change}: ${response.text}`);
    assert.equal(response.body.scimToken, undefined);
    const now = await api(env.app.url, admin.token).post('/v1/scim/token');
    assert.deepEqual([now.status, now.body.error], [status, error], `${change}: the same request now`);
    assert.equal((await scim(env.app, current).get('/Users')).status, 200, `${change}: the token in use was rotated`);
  }
});
