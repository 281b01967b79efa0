// The migration files (migrations/*.sql, applied in file-name order) and their digest. Apart from
// migrate.ts because the embedded database's template (pglite-template.ts) names its digest, and
// migrate.ts names the Database that database.ts opens from that template: one file for both would
// close an import circle.
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';

export const migrationsDir = new URL('./migrations/', import.meta.url);

export async function migrationFiles(): Promise<string[]> {
  return (await readdir(migrationsDir)).filter((name) => name.endsWith('.sql')).sort();
}

/** Names and contents of every migration, hashed: what a database migrated from these files was made from. */
export async function migrationsDigest(): Promise<string> {
  const hash = createHash('sha256');
  for (const file of await migrationFiles()) {
    hash
      .update(`${file}\0`)
      .update(await readFile(new URL(file, migrationsDir)))
      .update('\0');
  }
  return hash.digest('hex').slice(0, 16);
}
