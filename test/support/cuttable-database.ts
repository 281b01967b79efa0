// A test app on its own PostgreSQL database reached through a TCP proxy the test can cut and restore:
// the database goes away for this app alone. Registers the before/after hooks of the enclosing suite.
import { after, before } from 'node:test';
import type { Config } from '../../src/config.ts';
import { createPostgresDatabase, startTestApp, type TestApp } from './app.ts';
import { startTcpProxy, type TcpProxy } from './tcp-proxy.ts';

export interface AppWithCuttableDatabase {
  /** Set once the suite's `before` hook ran. */
  app: TestApp;
  proxy: TcpProxy;
}

export function useAppWithCuttableDatabase(overrides: Partial<Config> = {}): AppWithCuttableDatabase {
  const cuttable = {} as AppWithCuttableDatabase;
  let dropDatabase: () => Promise<void>;
  before(async () => {
    const database = await createPostgresDatabase();
    dropDatabase = database.drop;
    const url = new URL(database.url);
    cuttable.proxy = await startTcpProxy(url.hostname, Number(url.port || 5432));
    url.host = `127.0.0.1:${cuttable.proxy.port}`;
    cuttable.app = await startTestApp({ ...overrides, databaseUrl: url.toString() });
  });
  after(async () => {
    await cuttable.proxy.restore().catch(() => {});
    await cuttable.app.close();
    await cuttable.proxy.close();
    await dropDatabase();
  });
  return cuttable;
}
