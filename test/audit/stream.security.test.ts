// Who may set, read and remove an organization's audit-log stream: owners and admins with a session;
// members 403 (itself an event); another organization's caller 404; API keys 401; a session whose
// authentication is old gets 403 reauth on PUT and DELETE; the signing secret is shown once only.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ageSession, reauthBody } from '../identity/reauth-support.ts';
import { useTenantApp } from '../support/harness.ts';
import { allEvents } from './helpers.ts';
import { streamConfig } from './stream-support.ts';

const t = useTenantApp({ config: streamConfig() });
const url = 'http://127.0.0.1:9/intake';
const path = (orgId = t.tenant.orgId) => `/v1/orgs/${orgId}/audit-stream`;

async function everyRoute(token: string | undefined, orgId?: string) {
  return [
    await t.as(token).put(path(orgId), { url, enabled: false }),
    await t.as(token).get(path(orgId)),
    await t.as(token).delete(path(orgId)),
  ];
}

test('anonymous and garbage tokens: 401 on every route', async () => {
  await t.ready;
  for (const token of [undefined, 'ops_garbage']) {
    for (const response of await everyRoute(token)) assert.equal(response.status, 401);
  }
});

test("a member gets 403 (a denied event); an outsider and another organization's admin 404; nothing is created", async () => {
  await t.ready;
  const { member, outsider, otherAdmin, owner, orgId } = t.tenant;
  for (const response of await everyRoute(member.token)) {
    assert.equal(response.status, 403);
    assert.equal(response.body.error, 'forbidden');
  }
  for (const token of [outsider.token, otherAdmin.token]) {
    for (const response of await everyRoute(token)) {
      assert.equal(response.status, 404);
      assert.equal(response.body.error, 'organization_not_found');
    }
  }
  assert.equal((await t.as(owner.token).get(path())).status, 404, 'no stream was created');
  const denied = await allEvents(t.app, owner.token, orgId, `&outcome=denied&actor=${member.userId}`);
  assert.ok(denied.some((event) => event.target.id === 'PUT /v1/orgs/:organizationId/audit-stream'));
  assert.ok(denied.some((event) => event.target.id === 'DELETE /v1/orgs/:organizationId/audit-stream'));
});

test("another organization's admin cannot read or change this stream, and their own is theirs", async () => {
  await t.ready;
  const { owner, otherAdmin, otherOrgId } = t.tenant;
  const mine = await t.as(owner.token).put(path(), { url, enabled: false });
  assert.equal(mine.status, 200);
  const theirs = await t.as(otherAdmin.token).put(path(otherOrgId), { url: `${url}/b`, enabled: false });
  assert.equal(theirs.status, 200);
  assert.notEqual(theirs.body.signingSecret, mine.body.signingSecret);
  assert.equal((await t.as(otherAdmin.token).get(path())).status, 404);
  assert.equal((await t.as(otherAdmin.token).delete(path())).status, 404);
  const read = await t.as(owner.token).get(path());
  assert.equal(read.body.stream.url, url, 'unchanged by the other organization');
  assert.ok(!read.text.includes(mine.body.signingSecret));
  assert.ok(
    !(await t.as(owner.token).get(`/v1/orgs/${t.tenant.orgId}/audit-events`)).text.includes(mine.body.signingSecret),
  );
  const tampered = `${t.tenant.orgId.slice(0, -1)}${t.tenant.orgId.endsWith('0') ? '1' : '0'}`;
  assert.equal(
    (await t.as(owner.token).get(path(tampered))).status,
    404,
    'an id one character off (never the same id)',
  );
  assert.equal((await t.as(otherAdmin.token).delete(path(otherOrgId))).status, 204);
});

test('an API key is refused (401): privileged routes are for people', async () => {
  await t.ready;
  const { owner, orgId } = t.tenant;
  const key = await t.as(owner.token).post(`/v1/orgs/${orgId}/api-keys`, { name: 'streamer', role: 'admin' });
  assert.equal(key.status, 201);
  for (const method of ['PUT', 'GET', 'DELETE']) {
    const response = await fetch(`${t.app.url}${path()}`, {
      method,
      headers: { 'x-api-key': key.body.key, ...(method === 'PUT' ? { 'content-type': 'application/json' } : {}) },
      ...(method === 'PUT' ? { body: JSON.stringify({ url, enabled: true }) } : {}),
    });
    assert.equal(response.status, 401, method);
  }
});

test('PUT and DELETE need a recent authentication (403 reauth, nothing changed); GET does not', async () => {
  await t.ready;
  const { admin } = t.tenant;
  const signedIn = await t.as().post('/v1/auth/sign-in', { email: admin.email, password: admin.password });
  const token = signedIn.body.sessionToken as string;
  await ageSession(t.app, token);
  const put = await t.as(token).put(path(), { url: `${url}/changed`, enabled: true });
  assert.equal(put.status, 403);
  assert.deepEqual({ error: put.body.error, reason: put.body.reason }, reauthBody);
  const del = await t.as(token).delete(path());
  assert.equal(del.status, 403);
  assert.equal(del.body.error, 'reauth');
  const read = await t.as(token).get(path());
  assert.equal(read.status, 200);
  assert.equal(read.body.stream.url, url, 'unchanged');
});
