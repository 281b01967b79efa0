// The audit-log stream's delivery: a receiver down for a while gets every event once it is back, no loss
// and no event accepted twice; a receiver down for good dead-letters the stream, visibly, and enabling it
// again resumes where it stopped; two app instances on one database deliver one stream's batches one at
// a time, in order (PostgreSQL only: PGlite is one process's database).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestApp, testBackend, type TestApp } from '../support/app.ts';
import { createTenant, type Tenant } from '../support/fixtures.ts';
import { api } from '../support/http.ts';
import { checkTenantRouting } from '../db/tenant-routing.ts';
import {
  eventually,
  expectedSignature,
  startSiemReceiver,
  streamConfig,
  streamedEventsExpected,
  type SiemReceiver,
} from './stream-support.ts';

let app: TestApp;
let tenant: Tenant;
let receiver: SiemReceiver;
const tenantRouting = checkTenantRouting();
before(async () => {
  receiver = await startSiemReceiver();
  app = await startTestApp(streamConfig({ maxAttempts: 3 }));
  tenant = await createTenant(app.url);
});
after(async () => {
  await app?.close();
  await receiver?.close();
});

const streamPath = () => `/v1/orgs/${tenant.orgId}/audit-stream`;
const addTeams = async (app: TestApp, prefix: string, count: number) => {
  for (let i = 0; i < count; i++) {
    const created = await api(app.url, tenant.owner.token).post(`/v1/orgs/${tenant.orgId}/teams`, {
      name: `${prefix} ${i}`,
    });
    assert.equal(created.status, 201, created.text);
  }
};
const state = async () => (await api(app.url, tenant.owner.token).get(streamPath())).body.stream;

test('a receiver down for a while gets every event once it is back: nothing lost, nothing accepted twice', async () => {
  const put = await api(app.url, tenant.owner.token).put(streamPath(), { url: receiver.url, enabled: true });
  assert.equal(put.status, 200);
  const secret = put.body.signingSecret as string;
  await eventually(() => receiver.accepted().length > 0, { what: 'the first batch' });

  receiver.status = 503;
  await addTeams(app, 'During the outage', 5);
  const retrying = await eventually(
    async () => {
      const stream = await state();
      return stream.state === 'retrying' && stream.failedAttempts >= 2 && stream;
    },
    { what: 'two failed attempts' },
  );
  assert.match(retrying.lastError, /attempt \d+: the receiver answered HTTP 503/);
  assert.ok(retrying.nextAttemptAt);
  assert.ok(retrying.pendingEvents >= 5);

  receiver.status = 200;
  const expected = await streamedEventsExpected(app.url, tenant.owner.token, tenant.orgId);
  await eventually(() => receiver.accepted().length >= expected.length, { what: 'every event after the outage' });
  assert.deepEqual(
    receiver
      .accepted()
      .slice(0, expected.length)
      .map((e) => e.id),
    expected.map((e) => e.id),
    'in order, each once',
  );
  // A refused batch starts at the same event on its next attempt (it may hold more: events recorded since fill it up to the batch size).
  const refused = receiver.batches.filter((batch) => batch.status === 503);
  assert.ok(refused.length >= 2);
  assert.equal(refused[1]!.events[0].id, refused[0]!.events[0].id);
  assert.deepEqual(
    refused[1]!.events.slice(0, refused[0]!.events.length).map((e) => e.id),
    refused[0]!.events.map((e) => e.id),
  );
  for (const batch of receiver.batches)
    assert.equal(batch.headers['x-orgplane-signature'], expectedSignature(secret, batch.body));
  assert.equal(
    Number(refused[1]!.headers['x-orgplane-attempt']),
    Number(refused[0]!.headers['x-orgplane-attempt']) + 1,
  );
  // The last batch's answer is settled just after the receiver recorded it.
  const recovered = await eventually(
    async () => {
      const stream = await state();
      return stream.pendingEvents === 0 && stream;
    },
    { what: 'nothing pending' },
  );
  assert.equal(recovered.state, 'active');
  assert.equal(recovered.failedAttempts, 0);
  assert.match(recovered.lastError, /503/, 'the last error stays visible after recovery');
});

test('a receiver that stays down dead-letters the stream after the configured attempts; PUT enabled=true resumes it from the same event', async () => {
  receiver.status = 500;
  const acceptedBefore = receiver.accepted().length;
  await addTeams(app, 'Before the dead letter', 2);
  const dead = await eventually(
    async () => {
      const stream = await state();
      return stream.state === 'dead' && stream;
    },
    { what: 'the dead letter' },
  );
  assert.equal(dead.failedAttempts, 3);
  assert.ok(dead.deadLetteredAt);
  assert.match(dead.lastError, /^attempt 3: the receiver answered HTTP 500/);
  assert.ok(dead.pendingEvents >= 2);
  // Dead: no more attempts, however long; events keep being recorded and wait.
  const attempts = receiver.batches.length;
  await addTeams(app, 'While dead', 2);
  await new Promise((resolve) => setTimeout(resolve, 1500));
  assert.equal(receiver.batches.length, attempts, 'a dead stream is not attempted');
  assert.ok((await state()).pendingEvents >= dead.pendingEvents + 2);

  receiver.status = 200;
  const resumed = await api(app.url, tenant.owner.token).put(streamPath(), { url: receiver.url, enabled: true });
  assert.equal(resumed.status, 200);
  assert.equal(resumed.body.stream.state, 'active');
  assert.equal(resumed.body.stream.deadLetteredAt, null);
  const expected = await streamedEventsExpected(app.url, tenant.owner.token, tenant.orgId);
  await eventually(() => receiver.accepted().length >= expected.length, { what: 'everything after resuming' });
  assert.deepEqual(
    receiver.accepted().map((e) => e.id),
    expected.map((e) => e.id),
    'nothing skipped, nothing twice',
  );
  assert.ok(receiver.accepted().length > acceptedBefore);
});

test('two app instances on one database: one batch of a stream in flight at a time, in order', {
  skip: testBackend !== 'postgres' && "PGlite is one process's database",
}, async () => {
  const second = await startTestApp(streamConfig({ maxAttempts: 3 }), { shareDatabaseWith: app });
  try {
    receiver.delayMs = 30;
    receiver.maxInFlight = 0;
    const before = receiver.accepted().length;
    // Writes through both instances; both run stream workers.
    await Promise.all([addTeams(app, 'Through the first', 12), addTeams(second, 'Through the second', 12)]);
    const expected = await streamedEventsExpected(app.url, tenant.owner.token, tenant.orgId);
    await eventually(() => receiver.accepted().length >= expected.length, {
      what: 'every event through two instances',
    });
    assert.deepEqual(
      receiver.accepted().map((e) => e.id),
      expected.map((e) => e.id),
      'in order, each once',
    );
    assert.ok(receiver.accepted().length - before >= 24);
    assert.equal(receiver.maxInFlight, 1, 'never two batches of the stream at once');
  } finally {
    receiver.delayMs = 0;
    await second.close();
  }
});

// These flows' statements stay on one tenant (test/db/tenant-routing.ts): on a database distributed by
// tenant, each runs on one node.
test('their statements stay on one tenant', async () => {
  await tenantRouting.assertStatementsStayOnOneTenant(app.db, 10);
});
