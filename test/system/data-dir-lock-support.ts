// What the data-directory lock tests (test/system/data-dir-lock.*.test.ts) share: the lock file, the
// refusal message, a snapshot of DATA_DIR, and fresh data directories with their servers, cleaned up after.
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after } from 'node:test';
import { testBackend } from '../support/app.ts';
import { api } from '../support/http.ts';
import { spawnServer, stopProcess, type CliProcess } from '../support/process.ts';

export const embeddedOnly =
  testBackend !== 'pglite' && 'the embedded database only (runs in the PGlite run of the suite)';

export const lockFileIn = (dataDir: string) => path.join(dataDir, 'pglite.lock');
export const inUseMessage = (dataDir: string, pid: number) =>
  `DATA_DIR ${dataDir} is in use by process ${pid}; the embedded database serves one process: stop it first, or use the API / DATABASE_URL`;

/** What a refused process must leave as it was: the files of DATA_DIR (names, sizes), the key and the lock. */
export async function snapshot(dataDir: string) {
  const entries = await readdir(dataDir, { recursive: true });
  const files = await Promise.all(
    entries
      .sort()
      .filter((name) => !name.startsWith('pglite/'))
      .map(async (name) => [name, (await stat(path.join(dataDir, name))).size]),
  );
  return {
    files,
    key: await readFile(path.join(dataDir, 'secret.key'), 'utf8'),
    lock: await readFile(lockFileIn(dataDir), 'utf8'),
  };
}

export async function bootstrapByApi(url: string) {
  const response = await api(url).post('/v1/bootstrap', {
    email: 'owner@example.test',
    password: 'a long enough password',
    name: 'Owner',
    organizationName: 'Locked Org',
  });
  assert.equal(response.status, 201, response.text);
  return { token: response.body.sessionToken as string, organizationId: response.body.organization.id as string };
}

/**
 * For a describe block: fresh data directories and the servers started on them, all killed and
 * removed after its tests.
 */
export function useDataDirs() {
  const dataDirs: string[] = [];
  const running: CliProcess[] = [];
  after(async () => {
    await Promise.all(running.map((server) => stopProcess(server, 'SIGKILL')));
    await Promise.all(dataDirs.map((dataDir) => rm(dataDir, { recursive: true, force: true })));
  });
  return {
    running,
    async newDataDir() {
      const dataDir = await mkdtemp(path.join(tmpdir(), 'orgplane-lock-'));
      dataDirs.push(dataDir);
      return dataDir;
    },
    async startServer(dataDir: string) {
      const server = await spawnServer({ DATA_DIR: dataDir });
      running.push(server);
      assert.ok(await server.healthy, server.output());
      return server;
    },
  };
}
