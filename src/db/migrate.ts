import { readFile } from 'node:fs/promises';
import type { Database } from './database.ts';
import { migrationFiles, migrationsDir } from './migration-files.ts';

// Any constant works; it only has to be the same in every process so that concurrent starts serialize.
const migrationLockKey = 7_402_913;

/**
 * Applies every migration file not yet recorded, in file-name order, all in one transaction.
 * Several processes may start at once: an advisory lock lets one migrate while the others wait.
 */
export async function migrate(db: Database): Promise<string[]> {
  const files = await migrationFiles();
  const applied: string[] = [];
  await db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [migrationLockKey]);
    await tx.query(
      `CREATE TABLE IF NOT EXISTS schema_migrations (
         name text PRIMARY KEY,
         applied_at timestamptz NOT NULL DEFAULT now()
       )`,
    );
    const done = new Set(
      (await tx.query<{ name: string }>('SELECT name FROM schema_migrations')).rows.map((row) => row.name),
    );
    for (const file of files) {
      if (done.has(file)) continue;
      const sql = await readFile(new URL(file, migrationsDir), 'utf8');
      await tx.query(sql);
      await tx.query('INSERT INTO schema_migrations (name) VALUES ($1)', [file]);
      applied.push(file);
    }
  });
  return applied;
}

/**
 * The migration files this build has that the database has not applied (all of them when it has
 * none): a process whose database is behind its code is not ready to serve (GET /ready).
 */
export async function pendingMigrations(db: Pick<Database, 'query'>): Promise<string[]> {
  const files = await migrationFiles();
  const { rows } = await db.query<{ present: boolean }>(
    "SELECT to_regclass('schema_migrations') IS NOT NULL AS present",
  );
  if (!rows[0]?.present) return files;
  const done = new Set(
    (await db.query<{ name: string }>('SELECT name FROM schema_migrations')).rows.map((row) => row.name),
  );
  return files.filter((file) => !done.has(file));
}
