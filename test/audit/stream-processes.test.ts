// The audit-log stream delivered by `orgplane worker` processes (PostgreSQL only: PGlite is one process's
// database): the server runs no workers, two worker processes share the stream's batches, one at a time, in order.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { createPostgresDatabase, testBackend } from '../support/app.ts';
import { createTenant, type Tenant } from '../support/fixtures.ts';
import { api } from '../support/http.ts';
import { startServerProcess, startWorkerProcess, type Child, type ServerProcess } from '../messenger/processes.ts';
import {
  eventually,
  expectedSignature,
  loopbackOnly,
  startSiemReceiver,
  streamedEventsExpected,
  type SiemReceiver,
} from './stream-support.ts';

const skip = testBackend !== 'postgres' && "PGlite is one process's database";
let database: Awaited<ReturnType<typeof createPostgresDatabase>> | undefined;
let server: ServerProcess | undefined;
const workers: Child[] = [];
let receiver: SiemReceiver;
let tenant: Tenant;

before(async () => {
  if (skip) return;
  database = await createPostgresDatabase();
  receiver = await startSiemReceiver();
  const env = {
    DATABASE_URL: database.url,
    ORGPLANE_SECRET_KEY: `v1:${randomBytes(32).toString('base64')}`,
    ALLOWED_PRIVATE_NETWORKS: loopbackOnly.join(','),
    RUN_WORKERS: 'false',
    AUDIT_STREAM_BATCH_SIZE: '3',
    AUDIT_STREAM_POLL_SECONDS: '0.1',
    AUDIT_STREAM_RETRY_DELAY_SECONDS: '1',
  };
  server = await startServerProcess(env);
  workers.push(...(await Promise.all([startWorkerProcess(env), startWorkerProcess(env)])));
  tenant = await createTenant(server.url);
});

after(async () => {
  await Promise.all([server, ...workers].map((child) => child?.stop()));
  await receiver?.close();
  await database?.drop();
});

test('two worker processes deliver one stream in order, one batch at a time, every event once', { skip }, async () => {
  receiver.delayMs = 30;
  const put = await api(server!.url, tenant.owner.token).put(`/v1/orgs/${tenant.orgId}/audit-stream`, {
    url: receiver.url,
    enabled: true,
  });
  assert.equal(put.status, 200, put.text);
  for (let i = 0; i < 30; i++)
    assert.equal(
      (await api(server!.url, tenant.owner.token).post(`/v1/orgs/${tenant.orgId}/teams`, { name: `Team ${i}` })).status,
      201,
    );
  const expected = await streamedEventsExpected(server!.url, tenant.owner.token, tenant.orgId);
  await eventually(() => receiver.accepted().length >= expected.length, { what: 'every event' });
  assert.deepEqual(
    receiver.accepted().map((e) => e.id),
    expected.map((e) => e.id),
  );
  assert.equal(receiver.maxInFlight, 1);
  assert.ok(receiver.batches.length >= 11);
  for (const batch of receiver.batches)
    assert.equal(batch.headers['x-orgplane-signature'], expectedSignature(put.body.signingSecret, batch.body));
});
