// Helpers shared by the messenger tests (the app-level helpers live in test/support/).
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { openDatabase, type Database } from '../../src/db/database.ts';

export const backend = (process.env.ORGPLANE_TEST_BACKEND ?? 'pglite') === 'postgres' ? 'postgres' : 'pglite';
const adminUrl = process.env.ORGPLANE_TEST_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export interface TestDatabase {
  db: Database;
  /** PostgreSQL only: the connection string of the fresh database. */
  url: string | undefined;
  drop(): Promise<void>;
}

/** A fresh, empty database on the backend the run selected; `drop()` closes and removes it. */
export async function openTestDatabase(): Promise<TestDatabase> {
  if (backend === 'pglite') {
    const db = await openDatabase({ pgliteDataDir: 'memory://' });
    return { db, url: undefined, drop: () => db.close() };
  }
  const name = `orgplane_msgq_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = adminUrl.replace(/\/[^/]*$/, `/${name}`);
  const db = await openDatabase({ databaseUrl: url, poolSize: 10 });
  return {
    db,
    url,
    async drop() {
      await db.close().catch(() => {});
      const client = new pg.Client({ connectionString: adminUrl });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}

/** Resolves when `predicate` holds, checking every `intervalMs`; fails after `timeoutMs` (a bound, not an assertion on speed). */
export async function eventually<T>(predicate: () => Promise<T | undefined | false> | T | undefined | false, { timeoutMs = 30_000, intervalMs = 100, what = 'condition' } = {}): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await predicate();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
