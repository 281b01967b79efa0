import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import pg from 'pg';
import { loadConfig, type Config } from '../../src/config.ts';
import { openDatabase, type Database } from '../../src/db/database.ts';
import { startServer, type RunningServer } from '../../src/server.ts';
import { ensurePostgresTemplate, forgetPostgresTemplate, postgresAdminUrl } from './postgres-template.ts';

export type TestBackend = 'postgres' | 'pglite';

/** Which backend this run of the suite uses (`npm test` runs the suite once per backend). */
export const testBackend: TestBackend = process.env.ORGPLANE_TEST_BACKEND === 'postgres' ? 'postgres' : 'pglite';

export { postgresAdminUrl } from './postgres-template.ts';

export interface TestApp extends RunningServer {
  config: Config;
  /** Every log line the app wrote, parsed (for redaction tests). */
  logLines: Record<string, unknown>[];
  /** The raw log text. */
  logText(): string;
  /** The connection string of this app's PostgreSQL database (undefined on PGlite). */
  databaseUrl: string | undefined;
}

/**
 * A port for a server whose URL must be known before it listens (PUBLIC_URL). It is drawn below the
 * kernel's ephemeral range (32768+ here): a port from that range, once released, can be handed to any
 * outgoing connection (a PostgreSQL client, say) before the server binds it, which made test apps fail
 * with EADDRINUSE now and then. Below it, only another test's random pick can collide, and the bind
 * check right here makes that unlikely.
 */
export async function freePort(): Promise<number> {
  for (let attempt = 0; ; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    const free = await new Promise<boolean>((resolve) => {
      const server = createServer();
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
    });
    if (free) return port;
    if (attempt >= 50) throw new Error('no free port found below the ephemeral range');
  }
}

/**
 * Creates a fresh PostgreSQL database and returns its URL and a dropper: empty, or with `migrated` a clone
 * of the migrated template (test/support/postgres-template.ts), as a PGlite test database starts.
 */
export async function createPostgresDatabase(
  options: { migrated?: boolean } = {},
): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `orgplane_test_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: postgresAdminUrl });
  await admin.connect();
  try {
    if (!options.migrated) await admin.query(`CREATE DATABASE ${name}`);
    else {
      try {
        await admin.query(`CREATE DATABASE ${name} TEMPLATE ${await ensurePostgresTemplate(postgresAdminUrl)}`);
      } catch (error) {
        // Dropped since this process looked (another run cleaning up): made again, once.
        if ((error as { code?: string }).code !== '3D000') throw error;
        forgetPostgresTemplate();
        await admin.query(`CREATE DATABASE ${name} TEMPLATE ${await ensurePostgresTemplate(postgresAdminUrl)}`);
      }
    }
  } finally {
    await admin.end();
  }
  const url = new URL(postgresAdminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const dropper = new pg.Client({ connectionString: postgresAdminUrl });
      await dropper.connect();
      await dropper.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await dropper.end();
    },
  };
}

export interface TestDatabase {
  db: Database;
  /** PostgreSQL only: the connection string of the fresh database. */
  url: string | undefined;
  /** Closes the database and, on PostgreSQL, drops it. */
  drop(): Promise<void>;
}

/**
 * A fresh database on the backend of this run, for tests below the HTTP app. On PostgreSQL it is empty
 * unless `migrated`; on PGlite it starts from the migrated template when there is one.
 */
export async function openTestDatabase(options: { migrated?: boolean } = {}): Promise<TestDatabase> {
  if (testBackend === 'pglite') {
    const db = await openDatabase({ pgliteDataDir: 'memory://' });
    return { db, url: undefined, drop: () => db.close() };
  }
  const created = await createPostgresDatabase(options);
  const db = await openDatabase({ databaseUrl: created.url, poolSize: 10 });
  return {
    db,
    url: created.url,
    async drop() {
      await db.close().catch(() => {});
      await created.drop();
    },
  };
}

export interface TestAppOptions {
  /** Another test app whose database this one shares (PostgreSQL only): several processes, one database. */
  shareDatabaseWith?: TestApp;
  /** The built console the server serves (console/dist by default). */
  consoleDir?: string;
  /** A PostgreSQL database the test made itself (a Citus coordinator's), used as it is and not dropped. */
  databaseUrl?: string;
}

/**
 * Starts the real server on a free loopback port with its own fresh database on the backend of this
 * run, logs captured in memory. `close()` stops it and drops the database.
 */
export async function startTestApp(overrides: Partial<Config> = {}, options: TestAppOptions = {}): Promise<TestApp> {
  const port = await freePort();
  const dataDir = await mkdtemp(path.join(tmpdir(), 'orgplane-test-'));
  let databaseUrl: string | undefined;
  let dropDatabase: (() => Promise<void>) | undefined;
  let sharedDb: Database | undefined;
  if (options.shareDatabaseWith) {
    databaseUrl = options.shareDatabaseWith.databaseUrl;
    if (!databaseUrl) sharedDb = options.shareDatabaseWith.db;
  } else if (options.databaseUrl) {
    databaseUrl = options.databaseUrl;
  } else if (testBackend === 'postgres') {
    // Migrated already (the start then finds nothing to do), as a PGlite test app's database is.
    const created = await createPostgresDatabase({ migrated: true });
    databaseUrl = created.url;
    dropDatabase = created.drop;
  }

  const config: Config = {
    // The messenger's timings from the test's environment (test/messenger/support.ts shortens them there,
    // where the server processes some tests start find them too); nothing else of it.
    ...loadConfig(
      Object.fromEntries(
        Object.entries(process.env).filter(
          ([name]) => name.startsWith('MESSENGER_DELIVERY_') || name.startsWith('MESSENGER_QUEUE_'),
        ),
      ),
    ),
    port,
    host: '127.0.0.1',
    publicUrl: `http://127.0.0.1:${port}`,
    databaseUrl,
    dataDir,
    secretKey: options.shareDatabaseWith?.config.secretKey ?? `v1:${randomBytes(32).toString('base64')}`,
    logLevel: 'info',
    dbPoolSize: 5,
    // Every test signs its people up from 127.0.0.1: the per-address sign-up limit would soon refuse
    // them. The tests of that limit set it themselves.
    signUpAttemptsPerAddress: 1_000_000,
    // Likewise for starting SSO sign-ins (the fuzz run starts hundreds); test/sso/sso-start-limits.test.ts sets its own.
    ssoStartAttemptsPerAddress: 1_000_000,
    // The background MCP credential checks would probe the test servers of any file that runs long
    // enough; test/mcp-connections/health-job*.test.ts turn them on (and drive them) themselves.
    mcpHealth: { ...loadConfig({}).mcpHealth, intervalSeconds: 0 },
    ...overrides,
  };

  let logText = '';
  const logLines: Record<string, unknown>[] = [];
  const logStream = new Writable({
    write(chunk, _encoding, callback) {
      const text = chunk.toString();
      logText += text;
      for (const line of text.split('\n').filter(Boolean)) {
        try {
          logLines.push(JSON.parse(line));
        } catch {
          logLines.push({ raw: line });
        }
      }
      callback();
    },
  });

  const db = sharedDb ?? (databaseUrl ? undefined : await openDatabase({ pgliteDataDir: 'memory://' }));
  const server = await startServer(config, {
    logStream,
    ...(db ? { db } : {}),
    ...(options.consoleDir ? { consoleDir: options.consoleDir } : {}),
  });
  return {
    ...server,
    config,
    databaseUrl,
    logLines,
    logText: () => logText,
    async close() {
      await server.close();
      if (db && !sharedDb) await db.close();
      if (dropDatabase) await dropDatabase();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
