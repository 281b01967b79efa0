// The audit-log stream: set, read, changed and removed by owners and admins; events POSTed in order,
// in signed NDJSON batches, to a receiver on loopback.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { useTenantApp } from '../support/harness.ts';
import { allEvents } from './helpers.ts';
import {
  eventually,
  expectedSignature,
  startSiemReceiver,
  streamConfig,
  streamedEventsExpected,
  type SiemReceiver,
} from './stream-support.ts';

const t = useTenantApp({ config: streamConfig() });
let receiver: SiemReceiver;
before(async () => {
  receiver = await startSiemReceiver();
});
after(async () => {
  await receiver.close();
});

const path = () => `/v1/orgs/${t.tenant.orgId}/audit-stream`;

test('PUT creates the stream: the signing secret once, the state without it; events arrive in order, batched, signed', async () => {
  await t.ready;
  const { owner, admin, orgId } = t.tenant;
  const created = await t.as(admin.token).put(path(), { url: receiver.url, enabled: true });
  assert.equal(created.status, 200, created.text);
  const secret = created.body.signingSecret as string;
  assert.match(secret, /^[A-Za-z0-9_-]{43}$/);
  assert.equal(created.body.stream.url, receiver.url);
  assert.equal(created.body.stream.enabled, true);
  assert.equal(created.body.stream.state, 'active');
  assert.equal(created.body.stream.failedAttempts, 0);
  assert.equal(created.body.stream.deadLetteredAt, null);

  // Seven more events: with batches of three, at least three POSTs.
  for (let i = 0; i < 7; i++)
    assert.equal((await t.as(owner.token).post(`/v1/orgs/${orgId}/teams`, { name: `Streamed team ${i}` })).status, 201);
  const expected = await streamedEventsExpected(t.app.url, owner.token, orgId);
  assert.ok(expected.length >= 8);
  const last = expected.at(-1)!.id;
  await eventually(() => receiver.accepted().some((event) => event.id === last), {
    what: 'the last event at the receiver',
  });

  // Every event once, in the log's order, exactly as the export gives it (the stream's own creation first).
  assert.deepEqual(receiver.accepted().slice(0, expected.length), expected);
  assert.equal(receiver.accepted()[0].action, 'audit_stream.created');
  assert.ok(receiver.batches.length >= 3);
  for (const batch of receiver.batches) {
    assert.ok(batch.events.length >= 1 && batch.events.length <= 3, 'at most AUDIT_STREAM_BATCH_SIZE events per POST');
    assert.equal(batch.headers['x-orgplane-signature'], expectedSignature(secret, batch.body));
    assert.match(String(batch.headers['content-type']), /^application\/x-ndjson/);
    assert.equal(batch.headers['x-orgplane-organization-id'], orgId);
    assert.equal(batch.headers['x-orgplane-event-count'], String(batch.events.length));
    assert.ok(batch.body.endsWith('\n'));
    assert.ok(batch.events.every((event) => event.organizationId === orgId));
  }
  // Events before the stream existed are not sent (the export has them).
  assert.ok(
    !receiver.accepted().some((event) => event.action === 'member.added' || event.action === 'organization.created'),
  );

  const read = await t.as(owner.token).get(path());
  assert.equal(read.status, 200);
  assert.ok(!read.text.includes(secret), 'GET never shows the secret');
  assert.equal(read.body.stream.state, 'active');
  assert.equal(read.body.stream.lastDeliveredEventId, receiver.accepted().at(-1).id);
  assert.ok(Date.parse(read.body.stream.lastDeliveredAt) > 0);
  assert.equal(typeof read.body.stream.pendingEvents, 'number');
});

test('PUT again changes the stream and keeps its secret (null in the answer) unless rotateSecret; each change is an event with the secret redacted', async () => {
  await t.ready;
  const { owner, orgId } = t.tenant;
  const first = await t.as(owner.token).get(path());
  assert.equal(first.status, 200);
  const again = await t.as(owner.token).put(path(), { url: `${receiver.url}?v=2`, enabled: true });
  assert.equal(again.status, 200);
  assert.equal(again.body.signingSecret, null);
  assert.equal(again.body.stream.url, `${receiver.url}?v=2`);
  const rotated = await t.as(owner.token).put(path(), { url: receiver.url, enabled: true, rotateSecret: true });
  assert.equal(rotated.status, 200);
  const secret = rotated.body.signingSecret as string;
  assert.match(secret, /^[A-Za-z0-9_-]{43}$/);
  // The next batch is signed with the new secret.
  assert.equal((await t.as(owner.token).post(`/v1/orgs/${orgId}/teams`, { name: 'After rotation' })).status, 201);
  const batch = await eventually(
    () => receiver.batches.find((b) => b.events.some((event) => event.target.name === 'After rotation')),
    { what: 'the batch after rotation' },
  );
  assert.equal(batch.headers['x-orgplane-signature'], expectedSignature(secret, batch.body));

  const events = await allEvents(t.app, owner.token, orgId, '&action=audit_stream.');
  assert.deepEqual(
    events.slice(0, 3).map((e) => e.action),
    ['audit_stream.updated', 'audit_stream.updated', 'audit_stream.created'],
  );
  assert.deepEqual(events[0].changes, { url: receiver.url, enabled: true, signingSecret: 'redacted' });
  assert.deepEqual(events[1].changes, { url: `${receiver.url}?v=2`, enabled: true });
  const dump =
    JSON.stringify((await t.app.db.query('SELECT * FROM audit_events')).rows) +
    JSON.stringify((await t.app.db.query('SELECT * FROM audit_streams')).rows);
  assert.ok(!dump.includes(secret), 'the secret is stored sealed and in no event');
  assert.ok(!t.app.logText().includes(secret), 'nor in the logs');
});

test('a disabled stream sends nothing and keeps its place; enabling it sends what waited', async () => {
  await t.ready;
  const { owner, orgId } = t.tenant;
  assert.equal((await t.as(owner.token).put(path(), { url: receiver.url, enabled: false })).status, 200);
  const sent = receiver.batches.length;
  assert.equal((await t.as(owner.token).post(`/v1/orgs/${orgId}/teams`, { name: 'While disabled' })).status, 201);
  const waiting = await t.as(owner.token).get(path());
  assert.equal(waiting.body.stream.state, 'disabled');
  assert.ok(waiting.body.stream.pendingEvents >= 2);
  assert.ok(waiting.body.stream.oldestPendingAt);
  await new Promise((resolve) => setTimeout(resolve, 500));
  assert.equal(receiver.batches.length, sent, 'nothing sent while disabled');
  assert.equal((await t.as(owner.token).put(path(), { url: receiver.url, enabled: true })).status, 200);
  await eventually(() => receiver.accepted().some((event) => event.target.name === 'While disabled'), {
    what: 'the waiting event',
  });
  await eventually(async () => (await t.as(owner.token).get(path())).body.stream.pendingEvents === 0, {
    what: 'nothing pending',
  });
});

test('DELETE removes the stream (204), then GET and DELETE are 404; deliveries stop', async () => {
  await t.ready;
  const { owner, orgId } = t.tenant;
  const deleted = await t.as(owner.token).delete(path());
  assert.equal(deleted.status, 204);
  assert.equal((await t.as(owner.token).get(path())).body.error, 'audit_stream_not_found');
  assert.equal((await t.as(owner.token).delete(path())).status, 404);
  const [event] = await allEvents(t.app, owner.token, orgId, '&action=audit_stream.deleted');
  assert.equal(event.target.id, orgId);
  const sent = receiver.batches.length;
  assert.equal((await t.as(owner.token).post(`/v1/orgs/${orgId}/teams`, { name: 'After deletion' })).status, 201);
  await new Promise((resolve) => setTimeout(resolve, 500));
  assert.equal(receiver.batches.length, sent);
});
