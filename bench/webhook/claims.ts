// The ingress's claims without HTTP: concurrent callers claim distinct updates through the real
// ingress (group commit, one statement per batch: the claims, which are the queue's entries) on a fresh PostgreSQL
// database, for the database's share of the webhook's cost. Linux only: PostgreSQL's CPU is read
// from /proc for every process named postgres (so run it alone on the machine).
import { openDatabase } from '../../src/db/database.ts';
import { migrate } from '../../src/db/migrate.ts';
import { createIngress } from '../../src/modules/messenger/ingress.ts';
import { createMessengerStore } from '../../src/modules/messenger/store.ts';
import { postgresCpuMicros, processCpuMicros } from '../support/cpu.ts';
import { createDatabase } from '../support/servers.ts';

const callers = Number(process.env.BENCH_CALLERS ?? 100);
const seconds = Number(process.env.BENCH_SECONDS ?? 6);

const database = await createDatabase();
const db = await openDatabase({ databaseUrl: database.url });
try {
  await migrate(db);
  // One organization and one active connection, written directly: the claims are what is measured.
  await db.query("INSERT INTO organizations (id, name) VALUES ('org_bench', 'Bench')");
  await db.query(
    `INSERT INTO messenger_connections (id, organization_id, bot_id, bot_username, bot_token_sealed, webhook_secret_hash, delivery_url, delivery_secret_sealed)
     VALUES ('emc_bench', 'org_bench', 1, 'bench_bot', 'unused', 'unused', 'http://127.0.0.1:9/unused', 'unused')`,
  );
  await db.query(
    "INSERT INTO messenger_webhook_routes (connection_id, organization_id) VALUES ('emc_bench', 'org_bench')",
  );
  const ingress = createIngress({ db, store: createMessengerStore() });
  let nextUpdateId = 1;
  const claimFor = async (ms: number) => {
    let claimed = 0;
    const end = Date.now() + ms;
    await Promise.all(
      Array.from({ length: callers }, async () => {
        while (Date.now() < end) {
          const id = nextUpdateId++;
          const update = {
            update_id: id,
            message: {
              message_id: id,
              from: { id: 1000 + (id % 500), is_bot: false, first_name: 'Bench' },
              chat: { id: 1000 + (id % 500), type: 'private' },
              date: 1_700_000_000,
              text: `message ${id}`,
            },
          };
          const outcome = await ingress.claim('emc_bench', update, JSON.stringify(update));
          if (!outcome.accepted) throw new Error(`update ${id} was not accepted`);
          claimed += 1;
        }
      }),
    );
    return claimed;
  };
  await claimFor(1_500);
  const postgresBefore = postgresCpuMicros();
  const ownBefore = processCpuMicros(process.pid)!;
  const started = performance.now();
  const claimed = await claimFor(seconds * 1000);
  const elapsed = (performance.now() - started) / 1000;
  const perClaim = (micros: number) => (micros / claimed).toFixed(1);
  console.log(
    `${callers} callers, ${seconds} s: ${Math.round(claimed / elapsed)} claims/s committed; CPU per claim: PostgreSQL ${perClaim(postgresCpuMicros() - postgresBefore)} us, this process ${perClaim(processCpuMicros(process.pid)! - ownBefore)} us`,
  );
} finally {
  await db.close();
  await database.drop();
}
