// Several processes on one PostgreSQL: a storm of one update_id sent concurrently to three server
// processes is accepted exactly once; a worker process killed with SIGKILL in the middle of a
// delivery loses nothing: the delivery is retried by another worker. PostgreSQL only: PGlite is
// the embedded database of a single process.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createPostgresDatabase } from '../support/app.ts';
import { startBotPlatform, type BotPlatform } from '../support/bot-platform.ts';
import { createTenant, type Tenant } from '../support/fixtures.ts';
import { api } from '../support/http.ts';
import { startServerProcess, startWorkerProcess, type Child, type ServerProcess } from './processes.ts';
import {
  backend,
  eventually,
  loopbackOnly,
  postUpdate,
  startDeliveryReceiver,
  type DeliveryReceiver,
} from './support.ts';

const skip = backend !== 'postgres' ? 'needs PostgreSQL: several processes share one database' : false;

describe('messenger across processes', { skip }, () => {
  let database: { url: string; drop(): Promise<void> };
  let platform: BotPlatform;
  let receiver: DeliveryReceiver;
  const servers: ServerProcess[] = [];
  const workers: Child[] = [];
  let tenant: Tenant;
  let env: Record<string, string>;

  before(async () => {
    database = await createPostgresDatabase();
    platform = await startBotPlatform();
    receiver = await startDeliveryReceiver();
    env = {
      DATABASE_URL: database.url,
      ORGPLANE_SECRET_KEY: `v1:${randomBytes(32).toString('base64')}`,
      MESSENGER_API_ROOT: platform.url,
      ALLOWED_PRIVATE_NETWORKS: loopbackOnly.join(','),
      // Deliveries only by the worker processes this file starts.
      RUN_WORKERS: 'false',
      MESSENGER_DELIVERY_ATTEMPTS: '5',
      MESSENGER_DELIVERY_RETRY_DELAY_SECONDS: '1',
      MESSENGER_DELIVERY_POLL_SECONDS: '0.5',
      // A delivery still running after 3 s is presumed lost (its lease ends) and taken again at the next poll.
      MESSENGER_DELIVERY_EXPIRE_SECONDS: '3',
      MESSENGER_DELIVERY_TIMEOUT_MS: '2000',
    };
    // The first one migrates; the others then start together.
    servers.push(await startServerProcess(env));
    servers.push(...(await Promise.all([startServerProcess(env), startServerProcess(env)])));
    tenant = await createTenant(servers[0]!.url);
  });

  after(async () => {
    await Promise.all([...servers, ...workers].map((child) => child.stop()));
    await receiver?.close();
    await platform?.close();
    await database?.drop();
  });

  test('a storm of one update_id on three processes is accepted exactly once', async () => {
    const bot = platform.addBot();
    const created = await api(servers[1]!.url, tenant.admin.token).post('/v1/messenger/connections', {
      botToken: bot.token,
      deliveryUrl: receiver.url,
    });
    assert.equal(created.status, 201, created.text);
    const connectionId = created.body.connection.id;
    const secret = platform.webhookOf(bot.token)!.secretToken!;
    const update = platform.messageUpdate(bot.token, { chatId: 700, text: 'storm' });
    const answers = await Promise.all(
      Array.from({ length: 90 }, (_, i) => postUpdate(servers[i % 3]!.url, connectionId, update, secret)),
    );
    assert.ok(
      answers.every((answer) => answer.status === 200),
      answers.map((a) => a.status).join(','),
    );
    const accepted = answers.filter((answer) => answer.json.accepted === true);
    const duplicates = answers.filter((answer) => answer.json.accepted === false && answer.json.reason === 'duplicate');
    assert.equal(accepted.length, 1);
    assert.equal(duplicates.length, 89);
    const { Client } = (await import('pg')).default;
    const client = new Client({ connectionString: database.url });
    await client.connect();
    try {
      const claims = await client.query('SELECT count(*)::int AS n FROM messenger_updates WHERE connection_id = $1', [
        connectionId,
      ]);
      assert.equal(claims.rows[0].n, 1);
      // The claim is the update's queue entry (migration 0504): one durable write, and no other queue
      // (nothing creates pg-boss's schema any more).
      const jobs = await client.query("SELECT to_regnamespace('pgboss') AS schema");
      assert.equal(jobs.rows[0].schema, null);
    } finally {
      await client.end();
    }
  });

  test('a worker killed with SIGKILL during a delivery loses nothing: another worker delivers', async () => {
    const bot = platform.addBot();
    const created = await api(servers[0]!.url, tenant.admin.token).post('/v1/messenger/connections', {
      botToken: bot.token,
      deliveryUrl: receiver.url,
    });
    assert.equal(created.status, 201, created.text);
    const connectionId = created.body.connection.id;
    const secret = platform.webhookOf(bot.token)!.secretToken!;
    const update = platform.messageUpdate(bot.token, { chatId: 701, text: 'survive' });

    // The first delivery attempt hangs (the worker is mid-delivery); later ones are answered.
    let signalInFlight!: () => void;
    const inFlight = new Promise<void>((resolve) => (signalInFlight = resolve));
    const previous = receiver.respond;
    receiver.respond = (delivery, res) => {
      if (delivery.json?.connectionId === connectionId && delivery.headers['x-orgplane-attempt'] === '1') {
        signalInFlight();
        return; // never answered
      }
      return previous(delivery, res);
    };
    try {
      const doomed = await startWorkerProcess(env);
      workers.push(doomed);
      const answer = await postUpdate(servers[2]!.url, connectionId, update, secret);
      assert.deepEqual(answer.json, { ok: true, accepted: true });
      await inFlight;
      doomed.process.kill('SIGKILL');
      const exit = await doomed.exited;
      assert.equal(exit.signal, 'SIGKILL');

      const survivor = await startWorkerProcess(env);
      workers.push(survivor);
      const redelivered = await eventually(
        () =>
          receiver.received.find(
            (d) => d.json?.connectionId === connectionId && d.headers['x-orgplane-attempt'] !== '1',
          ),
        { what: 'the redelivery', timeoutMs: 60_000 },
      );
      assert.deepEqual(redelivered.json, { connectionId, update });
      const state = await eventually(
        async () => {
          const listed = await api(servers[0]!.url, tenant.admin.token).get(
            `/v1/messenger/connections/${connectionId}/updates?status=delivered`,
          );
          return listed.body.updates.find((u: any) => u.updateId === update.update_id);
        },
        { what: 'the delivered state' },
      );
      assert.ok(state.attempts >= 2);
    } finally {
      receiver.respond = previous;
    }
  });
});
