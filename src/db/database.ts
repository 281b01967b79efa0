import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { lockDataDir, type DataDirLock } from './data-dir-lock.ts';
import { isStatementError } from './errors.ts';
import { readPgliteTemplate } from './pglite-template.ts';

/** Anything that runs SQL: the database itself or a transaction's client. */
export interface Queryable {
  // biome-ignore lint/suspicious/noExplicitAny: a row's shape is the caller's to state (R); untyped reads stay loose on purpose
  query<R = any>(text: string, params?: unknown[]): Promise<{ rows: R[]; rowCount: number | null }>;
}

export interface Database extends Queryable {
  readonly backend: 'postgres' | 'pglite';
  /** Both backends are a pg.Pool, so every store has one code path. */
  readonly pool: pg.Pool;
  /** Connections the pool may open (1 on PGlite); callers that batch size their concurrency by it. */
  readonly maxConnections: number;
  /**
   * A named prepared statement: PostgreSQL parses and plans it once per connection instead of on every
   * call (measured 2.5-5x faster on the authentication queries). For hot, fixed statements only:
   * `name` must always go with the same `text`. Not applied to every query, because a prepared
   * statement keeps the plan and result shape it was prepared with.
   */
  // biome-ignore lint/suspicious/noExplicitAny: as for query()
  prepared<R = any>(name: string, text: string, params: unknown[]): Promise<{ rows: R[]; rowCount: number | null }>;
  /** Runs `fn` inside BEGIN/COMMIT on one connection; rolls back when it throws. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /** Resolves when the database answers a trivial query within `timeoutMs`. */
  ping(timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

// Counts and sums are far below 2^53; numbers are easier to use than strings everywhere.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));
pg.types.setTypeParser(pg.types.builtins.NUMERIC, (value) => Number(value));

export interface DatabaseOptions {
  /** PostgreSQL connection string; when absent the embedded PGlite is used. */
  databaseUrl?: string | undefined;
  /** PGlite data directory, or `memory://` for a throw-away database. */
  pgliteDataDir?: string;
  poolSize?: number;
  onPoolError?: (error: Error) => void;
}

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  if (options.databaseUrl) {
    const pool = new pg.Pool({
      connectionString: options.databaseUrl,
      max: options.poolSize ?? 10,
      connectionTimeoutMillis: 5_000,
      idleTimeoutMillis: 30_000,
    });
    // An idle client whose server went away emits 'error' on the pool; unhandled it would crash the process.
    pool.on('error', (error) => options.onPoolError?.(error));
    return wrapPool(pool, 'postgres', async () => {});
  }

  const dataDir = options.pgliteDataDir ?? 'memory://';
  const inMemory = dataDir.startsWith('memory://');
  if (inMemory) return databaseOverPglite(await createPglite(dataDir, true), options.onPoolError);

  // A directory is one process's database, and one PGlite's: refused before anything in it is touched
  // when another process (DataDirInUseError) or another open database of this process has it.
  const directory = path.resolve(dataDir);
  if (openDirectories.has(directory))
    throw new Error(`the embedded database in ${directory} is already open in this process`);
  openDirectories.add(directory);
  let lock: DataDirLock;
  try {
    lock = await lockDataDir(directory);
  } catch (error) {
    openDirectories.delete(directory);
    throw error;
  }
  const letGo = () => {
    openDirectories.delete(directory);
    lock.release();
  };
  try {
    await mkdir(directory, { recursive: true });
    const lite = await createPglite(directory, !existsSync(path.join(directory, 'PG_VERSION')));
    const db = await databaseOverPglite(lite, options.onPoolError);
    return {
      ...db,
      async close() {
        try {
          await db.close();
        } finally {
          letGo();
        }
      },
    };
  } catch (error) {
    letGo();
    throw error;
  }
}

/** Embedded database directories open in this process. */
const openDirectories = new Set<string>();

async function createPglite(dataDir: string, fresh: boolean): Promise<PGlite> {
  const template = fresh ? await readPgliteTemplate() : undefined;
  const { PGlite } = await import('@electric-sql/pglite');
  return PGlite.create(dataDir, template ? { loadDataDir: template } : {});
}

/** A Database over an open PGlite (one connection, so a pool of one); closing it closes the PGlite. */
export async function databaseOverPglite(lite: PGlite, onPoolError?: (error: Error) => void): Promise<Database> {
  const { createPgConfig } = await import('@electric-sql/pglite/node-postgres');
  const pool = new pg.Pool({ ...(createPgConfig(lite) as unknown as pg.PoolConfig), max: 1 });
  pool.on('error', (error) => onPoolError?.(error));
  return wrapPool(pool, 'pglite', () => lite.close());
}

function wrapPool(pool: pg.Pool, backend: Database['backend'], closeBackend: () => Promise<void>): Database {
  /**
   * Runs `work` on a checked-out connection, then returns it to the pool, which discards it only if
   * it was marked broken. A checked-out client has no pool listener: if its server goes away it emits
   * 'error', which unheard would crash the process; heard, it marks the client broken, and the
   * statement in flight fails on its own.
   */
  async function withClient<T>(
    work: (client: pg.PoolClient, markBroken: (error: Error) => void) => Promise<T>,
  ): Promise<T> {
    const client = await pool.connect();
    let broken: Error | undefined;
    const markBroken = (error: Error) => {
      broken ??= error;
    };
    client.on('error', markBroken);
    try {
      return await work(client, markBroken);
    } finally {
      client.removeListener('error', markBroken);
      client.release(broken);
    }
  }

  /**
   * One statement on a pooled connection. Not pool.query(): that discards the connection after any
   * error, also when only the statement was refused (a duplicate key, say). On PostgreSQL that cost
   * a reconnect and the connection's prepared statements; on PGlite, whose pool connections all share
   * one in-process session, the discarded client's end and the failed statement's late ReadyForQuery
   * reached the next client, and the next two statements failed ("Connection terminated
   * unexpectedly", "unexpected rowDescription"). Here the connection is kept unless it is broken.
   */
  const runStatement = <R>(config: pg.QueryConfig) =>
    withClient(async (client, markBroken) => {
      try {
        return (await client.query(config)) as unknown as { rows: R[]; rowCount: number | null };
      } catch (error) {
        if (!isStatementError(error)) markBroken(error as Error);
        throw error;
      }
    });

  return {
    backend,
    pool,
    maxConnections: pool.options.max,
    query: <R>(text: string, params?: unknown[]) => runStatement<R>({ text, ...(params ? { values: params } : {}) }),
    prepared: <R>(name: string, text: string, params: unknown[]) => runStatement<R>({ name, text, values: params }),
    transaction: (fn) =>
      withClient(async (client, markBroken) => {
        try {
          await client.query('BEGIN');
          const result = await fn(client);
          await client.query('COMMIT');
          return result;
        } catch (error) {
          // A connection that could not even roll back is discarded rather than reused.
          await client.query('ROLLBACK').catch(markBroken);
          throw error;
        }
      }),
    async ping(timeoutMs = 2_000) {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('database ping timed out')), timeoutMs);
      });
      try {
        await Promise.race([pool.query('SELECT 1'), timeout]);
      } finally {
        clearTimeout(timer);
      }
    },
    async close() {
      await pool.end();
      await closeBackend();
    },
  };
}
