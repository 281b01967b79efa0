import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { DestinationStream } from 'pino';
import { buildApp } from './app.ts';
import type { Config } from './config.ts';
import { openDatabase, type Database } from './db/database.ts';
import { migrate } from './db/migrate.ts';
import { openSecretBox } from './platform/secrets.ts';

export interface RunningServer {
  app: FastifyInstance;
  db: Database;
  /** Base URL the server listens on, e.g. http://127.0.0.1:8080 */
  url: string;
  /** Stops accepting, lets in-flight requests finish, then closes the database. */
  close(): Promise<void>;
}

export interface ServerOptions {
  /** PGlite data directory when no DATABASE_URL; defaults to DATA_DIR/pglite. `memory://` for throw-away. */
  pgliteDataDir?: string;
  logStream?: DestinationStream;
  /** An already-open database (tests share one between apps); it is then not closed by `close()`. */
  db?: Database;
  /** The built console (console/dist by default); tests point it at a missing one. */
  consoleDir?: string;
}

/** Opens the database, migrates it, builds the app and listens: what `orgplane start` does. */
export async function startServer(config: Config, options: ServerOptions = {}): Promise<RunningServer> {
  const ownsDb = !options.db;
  const db =
    options.db ??
    (await openDatabase({
      databaseUrl: config.databaseUrl,
      pgliteDataDir: options.pgliteDataDir ?? path.join(config.dataDir, 'pglite'),
      poolSize: config.dbPoolSize,
    }));
  try {
    await migrate(db);
    const secrets = await openSecretBox(db, config.secretKey, config.dataDir);
    const app = await buildApp({
      config,
      db,
      secrets,
      ...(options.logStream ? { logStream: options.logStream } : {}),
      ...(options.consoleDir ? { consoleDir: options.consoleDir } : {}),
    });
    db.pool.on('error', (error) => app.log.warn({ err: error }, 'idle database connection failed'));
    await app.listen({ port: config.port, host: config.host });
    const address = app.server.address();
    const port = typeof address === 'object' && address ? address.port : config.port;
    const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
    return {
      app,
      db,
      url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
      async close() {
        await app.close();
        if (ownsDb) await db.close();
      },
    };
  } catch (error) {
    if (ownsDb) await db.close().catch(() => {});
    throw error;
  }
}
