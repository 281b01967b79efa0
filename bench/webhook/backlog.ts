// What the delivery benchmarks (take.ts, drain.ts) start from: a fresh, migrated database with one
// messenger connection (with its webhook route) and a backlog of `pending` updates spread over `chats` chats.
import { openDatabase, type Database } from '../../src/db/database.ts';
import { migrate } from '../../src/db/migrate.ts';
import { createDatabase } from '../support/servers.ts';

export interface Backlog {
  db: Database;
  close(): Promise<void>;
}

export async function openBacklog(
  backend: 'postgres' | 'pglite',
  options: {
    pending: number;
    chats: number;
    /** The connection's delivery URL and sealed secrets (placeholders when nothing is delivered). */
    deliveryUrl?: string;
    botTokenSealed?: string;
    deliverySecretSealed?: string;
  },
): Promise<Backlog> {
  const postgres = backend === 'postgres' ? await createDatabase() : undefined;
  const db = await openDatabase(postgres ? { databaseUrl: postgres.url } : { pgliteDataDir: 'memory://' });
  await migrate(db);
  await db.query(`INSERT INTO organizations (id, name) VALUES ('org_bench', 'Bench')`);
  await db.query(
    `INSERT INTO messenger_connections (id, organization_id, bot_id, bot_username, bot_token_sealed, webhook_secret_hash, delivery_url, delivery_secret_sealed)
     VALUES ('emc_bench', 'org_bench', 1, 'bench_bot', $1, 'hash', $2, $3)`,
    [
      options.botTokenSealed ?? 'sealed',
      options.deliveryUrl ?? 'http://127.0.0.1:9/',
      options.deliverySecretSealed ?? 'sealed',
    ],
  );
  await db.query(
    `INSERT INTO messenger_webhook_routes (connection_id, organization_id) VALUES ('emc_bench', 'org_bench')`,
  );
  await db.query(
    `INSERT INTO messenger_updates (connection_id, update_id, organization_id, chat_id, order_key, body)
     SELECT 'emc_bench', g, 'org_bench', (g % $2)::text, 'chat:' || (g % $2), '{"update_id":' || g || ',"message":{"text":"hi"}}' FROM generate_series(1, $1) g`,
    [options.pending, options.chats],
  );
  return {
    db,
    async close() {
      await db.close();
      await postgres?.drop();
    },
  };
}
