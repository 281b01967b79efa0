// A migrated PostgreSQL database that test databases are cloned from (`CREATE DATABASE x TEMPLATE y`,
// a tenth of a second) instead of each running every migration (seconds on a busy machine). It is named
// by the digest of the migration files, as the PGlite template is, so a changed or added migration gets a
// template of its own, and branches with other migrations on the same server never share one.
// `npm test` makes it once before its first file; a file run on its own makes it if it is missing.
import pg from 'pg';
import { openDatabase } from '../../src/db/database.ts';
import { migrate } from '../../src/db/migrate.ts';
import { migrationsDigest } from '../../src/db/migration-files.ts';

/** The administrative connection used to create and drop per-test databases. */
export const postgresAdminUrl = process.env.ORGPLANE_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

const prefix = 'orgplane_template_';
// Any constant: the processes that may build the same template at once serialize on it.
const buildLockKey = 7_402_914;
/** Another migration set's template is dropped once it has not been made for this long. */
const staleAfterMs = 24 * 3600_000;

export async function postgresTemplateName(): Promise<string> {
  return `${prefix}${await migrationsDigest()}`;
}

let ensured: Promise<string> | undefined;

/** The template for the migrations as they are now, made if missing; its name. */
export function ensurePostgresTemplate(adminUrl = postgresAdminUrl): Promise<string> {
  ensured ??= build(adminUrl).catch((error) => {
    ensured = undefined;
    throw error;
  });
  return ensured;
}

/** Forgets that the template was there (it was dropped since): the next ensure looks again. */
export function forgetPostgresTemplate(): void {
  ensured = undefined;
}

async function build(adminUrl: string): Promise<string> {
  const name = await postgresTemplateName();
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query('SELECT pg_advisory_lock($1)', [buildLockKey]);
    const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (exists.rowCount === 0) {
      // Built under another name and renamed once whole: a build that dies leaves no half template.
      const building = `${name}_building_${process.pid}`;
      await admin.query(`DROP DATABASE IF EXISTS ${building} WITH (FORCE)`);
      await admin.query(`CREATE DATABASE ${building}`);
      const url = new URL(adminUrl);
      url.pathname = `/${building}`;
      const db = await openDatabase({ databaseUrl: url.toString(), poolSize: 1 });
      try {
        await migrate(db);
      } finally {
        await db.close();
      }
      await admin.query(`ALTER DATABASE ${building} RENAME TO ${name}`);
      // A connection to it would make every clone fail ("being accessed by other users"): none is allowed.
      await admin.query(`ALTER DATABASE ${name} WITH ALLOW_CONNECTIONS false`);
    }
    await admin.query(`COMMENT ON DATABASE ${name} IS '${new Date().toISOString()}'`);
    await dropStaleTemplates(admin, name);
    return name;
  } finally {
    await admin.query('SELECT pg_advisory_unlock($1)', [buildLockKey]).catch(() => {});
    await admin.end();
  }
}

/** Templates of other migration sets not used for a day (each use marks its own when it was last ensured). */
async function dropStaleTemplates(admin: pg.Client, keep: string): Promise<void> {
  const { rows } = await admin.query<{ datname: string; comment: string | null }>(
    `SELECT datname, shobj_description(oid, 'pg_database') AS comment FROM pg_database
      WHERE datname LIKE '${prefix}%' AND datname NOT LIKE '%\\_building\\_%' AND datname <> $1`,
    [keep],
  );
  for (const { datname, comment } of rows) {
    const madeAt = Date.parse(comment ?? '');
    if (Number.isNaN(madeAt) || Date.now() - madeAt > staleAfterMs)
      await admin.query(`DROP DATABASE IF EXISTS ${datname}`).catch(() => {});
  }
}
