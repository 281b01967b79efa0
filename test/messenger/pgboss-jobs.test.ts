// Migration 0505: delivery jobs earlier versions left queued in pg-boss become entries of the claims
// table, and the delivery loop delivers them. The database is the one such a version left: pg-boss
// 12.35.0's schema made by its own SQL (fixtures/pgboss-12.35.0.sql), orgplane's queue in it, jobs as
// its ingress queued them, and claim rows without bodies (claimed before 0502). Where pg-boss never ran,
// the migration does nothing.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, test } from 'node:test';
import { migrate } from '../../src/db/migrate.ts';
import {
  connectBot,
  type CreatedConnection,
  eventually,
  expectedSignature,
  type MessengerEnv,
  startMessengerEnv,
} from './support.ts';

const MIGRATION = '0505_messenger_pgboss_jobs.sql';
let env: MessengerEnv;
let bot: CreatedConnection;

before(async () => {
  env = await startMessengerEnv();
  bot = await connectBot(env);
});
after(async () => {
  await env?.close();
});

const update = (updateId: number, chatId: number, text: string) => ({
  update_id: updateId,
  message: { message_id: updateId, chat: { id: chatId, type: 'private' }, text },
});

/** A claim row as a version before 0502 wrote it (no body), pending, or in the given state. */
async function claimWithoutBody(updateId: number, chatId: number, status = 'queued') {
  await env.app.db.query(
    `INSERT INTO messenger_updates (organization_id, connection_id, update_id, chat_id, status, order_key)
     VALUES ($1, $2, $3, $4, $5, CASE WHEN $5 IN ('queued', 'retrying') THEN 'chat:' || $4 END)`,
    [env.tenant.orgId, bot.id, updateId, String(chatId), status],
  );
}

async function rowOf(updateId: number) {
  const { rows } = await env.app.db.query<{ status: string; body: string | null }>(
    'SELECT status, body FROM messenger_updates WHERE organization_id = $1 AND connection_id = $2 AND update_id = $3',
    [env.tenant.orgId, bot.id, updateId],
  );
  return rows[0];
}

test('on a database where pg-boss never ran, the migration was applied and did nothing', async () => {
  const { rows } = await env.app.db.query<{ applied: boolean; schema: string | null }>(
    `SELECT EXISTS (SELECT 1 FROM schema_migrations WHERE name = $1) AS applied, to_regnamespace('pgboss')::text AS schema`,
    [MIGRATION],
  );
  assert.deepEqual(rows[0], { applied: true, schema: null });
});

test("jobs left queued in pg-boss are delivered from the claims table; settled jobs, other jobs' updates and delivered updates are left", async () => {
  const waiting = update(510_001, 901, 'queued in pg-boss, never attempted');
  const inFlight = update(510_002, 902, 'in the middle of an attempt when its process stopped');
  const retrying = update(510_003, 903, 'waiting for a retry');
  const delivered = update(510_004, 904, 'delivered, its completion lost');
  const completed = update(510_005, 905, 'a completed job');
  await claimWithoutBody(waiting.update_id, 901);
  await claimWithoutBody(inFlight.update_id, 902);
  await claimWithoutBody(retrying.update_id, 903, 'retrying');
  await claimWithoutBody(delivered.update_id, 904, 'delivered');
  await claimWithoutBody(completed.update_id, 905);

  // pg-boss's schema and orgplane's queue, by pg-boss's own SQL, then the jobs as the ingress queued them.
  await env.app.db.query(await readFile(new URL('./fixtures/pgboss-12.35.0.sql', import.meta.url), 'utf8'));
  const job = (data: ReturnType<typeof update>, state: string, chatId: number) => ({
    state,
    key: `${bot.id}:chat:${chatId}`,
    data: { connectionId: bot.id, updateId: data.update_id, chatId: String(chatId), update: data },
  });
  const jobs = [
    job(waiting, 'created', 901),
    job(inFlight, 'active', 902),
    job(retrying, 'retry', 903),
    job(delivered, 'created', 904),
    job(completed, 'completed', 905),
    // A job of a connection deleted since.
    {
      state: 'created',
      key: 'emc_gone:chat:1',
      data: { connectionId: 'emc_gone', updateId: 1, chatId: '1', update: update(1, 1, 'gone') },
    },
  ];
  for (const { state, key, data } of jobs) {
    await env.app.db.query(
      `INSERT INTO pgboss.job (name, data, state, singleton_key, policy, retry_limit, retry_count)
       VALUES ('messenger-delivery', $1::jsonb, $2::pgboss.job_state, $3, 'key_strict_fifo', 10, $4)`,
      [JSON.stringify(data), state, key, state === 'retry' ? 1 : 0],
    );
  }
  for (const id of [waiting, inFlight, retrying, completed].map((u) => u.update_id))
    assert.equal((await rowOf(id))!.body, null, 'nothing delivers a claim without a body before the migration');

  // The upgrade: 0505 had run on this database before pg-boss's jobs were there; it runs again as it would
  // on the first start of this version.
  await env.app.db.query('DELETE FROM schema_migrations WHERE name = $1', [MIGRATION]);
  assert.deepEqual(await migrate(env.app.db), [MIGRATION]);

  for (const sent of [waiting, inFlight, retrying]) {
    const delivery = await eventually(
      () => env.receiver.received.find((d) => d.json?.update?.update_id === sent.update_id),
      { what: `the delivery of ${sent.update_id}` },
    );
    assert.deepEqual(delivery.json, { connectionId: bot.id, update: sent });
    assert.equal(delivery.headers['x-orgplane-signature'], expectedSignature(bot.deliverySecret, delivery.body));
    await eventually(async () => (await rowOf(sent.update_id))?.status === 'delivered', {
      what: `${sent.update_id} marked delivered`,
    });
  }
  assert.deepEqual(await rowOf(delivered.update_id), { status: 'delivered', body: null });
  assert.deepEqual(await rowOf(completed.update_id), { status: 'queued', body: null });
  assert.equal(
    env.receiver.received.filter((d) => [delivered.update_id, completed.update_id].includes(d.json?.update?.update_id))
      .length,
    0,
  );
  // pg-boss's schema is not orgplane's to drop: it is left, jobs and all.
  const { rows } = await env.app.db.query<{ n: number }>('SELECT count(*)::int AS n FROM pgboss.job');
  assert.equal(rows[0]!.n, jobs.length);
});
