import assert from 'node:assert/strict';
import { test } from 'node:test';
import { useTenantApp } from '../support/harness.ts';
import { addMember, signUp } from '../support/fixtures.ts';
import { allEvents, eventsOfRequest, freshRequestId } from './helpers.ts';
import { checkTenantRouting } from '../db/tenant-routing.ts';

const t = useTenantApp();
const tenantRouting = checkTenantRouting();

test('a role change writes one event with who, what, where and the change, in its transaction', async () => {
  await t.ready;
  const { owner, orgId } = t.tenant;
  const user = await signUp(t.app.url, 'audited');
  await addMember(t.app.url, owner, orgId, user, 'member');
  const requestId = freshRequestId();
  const changed = await t
    .as(owner.token)
    .patch(
      `/v1/orgs/${orgId}/members/${user.memberId}`,
      { role: 'admin' },
      { headers: { 'x-request-id': requestId, 'user-agent': 'audit-test/1' } },
    );
  assert.equal(changed.status, 200);
  const [event] = await allEvents(t.app, owner.token, orgId, `&action=member.role_changed&target=${user.memberId}`);
  assert.ok(event, 'the role change has an event');
  assert.equal(event.organizationId, orgId);
  assert.equal(event.outcome, 'success');
  assert.deepEqual(event.actor, { type: 'user', id: owner.userId, name: owner.name, email: owner.email });
  assert.deepEqual(event.target, { type: 'member', id: user.memberId, name: user.email });
  assert.deepEqual(event.changes, { role: { from: 'member', to: 'admin' } });
  assert.equal(event.requestId, requestId);
  assert.equal(event.userAgent, 'audit-test/1');
  assert.match(event.ip, /127\.0\.0\.1/);
  assert.equal((await eventsOfRequest(t.app, requestId)).length, 1);
});

test('a change that is refused writes no event (it rolled back)', async () => {
  await t.ready;
  const { owner, admin, orgId } = t.tenant;
  const requestId = freshRequestId();
  const refused = await t
    .as(admin.token)
    .patch(
      `/v1/orgs/${orgId}/members/${owner.memberId}`,
      { role: 'member' },
      { headers: { 'x-request-id': requestId } },
    );
  assert.equal(refused.status, 409);
  assert.deepEqual(await eventsOfRequest(t.app, requestId), []);
});

test('a secret appears only as "redacted": a new API key is in no event, in clear or hashed', async () => {
  await t.ready;
  const { owner, orgId } = t.tenant;
  const requestId = freshRequestId();
  const created = await t
    .as(owner.token)
    .post(
      `/v1/orgs/${orgId}/api-keys`,
      { name: 'audited key', role: 'member' },
      { headers: { 'x-request-id': requestId } },
    );
  assert.equal(created.status, 201);
  const [row] = await eventsOfRequest(t.app, requestId);
  assert.equal(row.action, 'api_key.created');
  assert.deepEqual(row.changes, { name: 'audited key', role: 'member', key: 'redacted' });
  const dump = JSON.stringify(await t.app.db.query('/* test */ SELECT * FROM audit_events')).toLowerCase();
  assert.ok(!dump.includes(created.body.key.toLowerCase()), 'the key is nowhere in the log');
  const { createHash } = await import('node:crypto');
  assert.ok(!dump.includes(createHash('sha256').update(created.body.key).digest('hex')), 'nor its hash');
});

test("a refused privileged call (403) writes a denied event in the caller's organization", async () => {
  await t.ready;
  const { member, owner, orgId } = t.tenant;
  const requestId = freshRequestId();
  const refused = await t
    .as(member.token)
    .post(`/v1/orgs/${orgId}/api-keys`, { name: 'nope', role: 'member' }, { headers: { 'x-request-id': requestId } });
  assert.equal(refused.status, 403);
  const [event] = (await allEvents(t.app, owner.token, orgId, '&outcome=denied')).filter(
    (e) => e.requestId === requestId,
  );
  assert.ok(event, 'the refusal is in the log');
  assert.equal(event.action, 'request.denied');
  assert.deepEqual(event.target, { type: 'route', id: 'POST /v1/orgs/:organizationId/api-keys', name: null });
  assert.deepEqual(event.changes, { error: 'forbidden' });
  assert.equal(event.actor.id, member.userId);
});

test("sign-in success and failure, and sign-out, are events of the account's organizations", async () => {
  await t.ready;
  const { owner, member, orgId } = t.tenant;
  const failed = await t.as().post('/v1/auth/sign-in', { email: member.email, password: 'wrong-password-1' });
  assert.equal(failed.status, 401);
  const signedIn = await t.as().post('/v1/auth/sign-in', { email: member.email, password: member.password });
  assert.equal(signedIn.status, 200);
  assert.equal((await t.as(signedIn.body.sessionToken).post('/v1/auth/sign-out')).status, 204);
  const events = await allEvents(t.app, owner.token, orgId, `&actor=${member.userId}&action=user.`);
  assert.deepEqual(
    events.slice(0, 3).map((e) => [e.action, e.outcome]),
    [
      ['user.signed_out', 'success'],
      ['user.signed_in', 'success'],
      ['user.sign_in_failed', 'failure'],
    ],
  );
  // An unknown account's failure has no organization: it is in the instance's own log only.
  const unknownEmail = `nobody.${Date.now()}@example.test`;
  assert.equal((await t.as().post('/v1/auth/sign-in', { email: unknownEmail, password: 'whatever-123' })).status, 401);
  const { rows } = await t.app.db.query(
    '/* test */ SELECT organization_id, chain_id, target_name FROM audit_events WHERE action = $1 AND target_name = $2',
    ['user.sign_in_failed', unknownEmail],
  );
  assert.deepEqual(rows, [{ organization_id: null, chain_id: 'instance', target_name: unknownEmail }]);
});

test('filters: actor (id or e-mail), action prefix, target, outcome, time range; newest first with a cursor', async () => {
  await t.ready;
  const { owner, admin, orgId } = t.tenant;
  for (const name of ['f-one', 'f-two', 'f-three'])
    assert.equal((await t.as(admin.token).post(`/v1/orgs/${orgId}/teams`, { name })).status, 201);
  const teams = await allEvents(t.app, owner.token, orgId, `&action=team.&actor=${encodeURIComponent(admin.email)}`);
  assert.deepEqual(
    teams.slice(0, 3).map((e) => e.target.name),
    ['f-three', 'f-two', 'f-one'],
  );
  assert.ok(teams.every((e) => e.actor.id === admin.userId && e.action.startsWith('team.')));
  const paged = await t
    .as(owner.token)
    .get(`/v1/orgs/${orgId}/audit-events?limit=1&action=team.created&actor=${admin.userId}`);
  assert.equal(paged.body.events.length, 1);
  const next = await t
    .as(owner.token)
    .get(
      `/v1/orgs/${orgId}/audit-events?limit=1&action=team.created&actor=${admin.userId}&cursor=${paged.body.nextCursor}`,
    );
  assert.equal(next.body.events[0].target.name, 'f-two');
  const one = teams[0];
  const byTarget = await t.as(owner.token).get(`/v1/orgs/${orgId}/audit-events?target=${one.target.id}`);
  assert.deepEqual(
    byTarget.body.events.map((e: any) => e.id),
    [one.id],
  );
  const future = await t.as(owner.token).get(`/v1/orgs/${orgId}/audit-events?since=2999-01-01T00:00Z`);
  assert.deepEqual(future.body, { events: [], nextCursor: null });
  const window = await t
    .as(owner.token)
    .get(
      `/v1/orgs/${orgId}/audit-events?since=${one.occurredAt}&until=${new Date(Date.parse(one.occurredAt) + 1).toISOString()}&action=team.`,
    );
  assert.ok(window.body.events.some((e: any) => e.id === one.id));
});

test('export: NDJSON and CSV of a time range, oldest first', async () => {
  await t.ready;
  const { owner, orgId } = t.tenant;
  const all = await allEvents(t.app, owner.token, orgId);
  const ndjson = await t.as(owner.token).get(`/v1/orgs/${orgId}/audit-events/export?format=ndjson`);
  assert.equal(ndjson.status, 200);
  assert.match(ndjson.headers.get('content-type')!, /application\/x-ndjson/);
  const lines = ndjson.text
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line));
  assert.ok(lines.length >= all.length);
  assert.deepEqual(
    lines.slice(0, all.length).map((e) => e.id),
    all.map((e) => e.id).reverse(),
  );
  const csv = await t.as(owner.token).get(`/v1/orgs/${orgId}/audit-events/export?format=csv&since=2000-01-01T00:00Z`);
  assert.equal(csv.status, 200);
  const rows = csv.text.trimEnd().split('\r\n');
  assert.equal(
    rows[0],
    'id,occurredAt,organizationId,action,outcome,actorType,actorId,actorName,actorEmail,targetType,targetId,targetName,ip,userAgent,requestId,changes',
  );
  assert.ok(rows.length - 1 >= all.length);
  const empty = await t.as(owner.token).get(`/v1/orgs/${orgId}/audit-events/export?since=2999-01-01T00:00Z`);
  assert.equal(empty.status, 200);
  assert.equal(empty.text, '');
});

test('the chain verifies', async () => {
  await t.ready;
  const { owner, orgId } = t.tenant;
  const verified = await t.as(owner.token).get(`/v1/orgs/${orgId}/audit-events/verify`);
  assert.equal(verified.status, 200);
  assert.equal(verified.body.ok, true);
  assert.ok(verified.body.checked > 5);
});

// These flows' statements stay on one tenant (test/db/tenant-routing.ts): on a database distributed by
// tenant, each runs on one node.
test('their statements stay on one tenant', async () => {
  await tenantRouting.assertStatementsStayOnOneTenant(t.app.db, 10);
});
