// The embedded database serves one process: every process that opens DATA_DIR's database holds its
// lock for its lifetime, and another process (the CLI, a second `start`, a `worker`) is refused
// while it lives, touching nothing. Its writes used to be lost or invisible to the server. A lock left
// by a killed process does not block the next one. With DATABASE_URL nothing is locked.
// This file: a lock from another pid namespace or boot, the holder keeping it fresh, and opening in one process; with DATABASE_URL nothing is locked.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { DataDirInUseError } from '../../src/db/data-dir-lock.ts';
import { openDatabase } from '../../src/db/database.ts';
import { createPostgresDatabase, testBackend } from '../support/app.ts';
import { api } from '../support/http.ts';
import { runCli, spawnServer, stopProcess } from '../support/process.ts';
import { bootstrapByApi, embeddedOnly, inUseMessage, lockFileIn, useDataDirs } from './data-dir-lock-support.ts';

describe('the embedded DATA_DIR is locked by the process that has it open', { skip: embeddedOnly }, () => {
  const { newDataDir, startServer } = useDataDirs();

  // Another container on the same volume, or the machine before a reboot: the pid (here this very
  // process's own, as pid 1 is in every container) says nothing; the lock holds while it is fresh.
  it('a lock from another pid namespace or machine boot holds while it is refreshed, and is taken over once it has not been for 30 s', {
    skip: !existsSync('/proc/sys/kernel/random/boot_id') && 'needs /proc',
  }, async () => {
    const dataDir = await newDataDir();
    await writeFile(lockFileIn(dataDir), `${process.pid}\n1\nanother-boot pid:[1]\n`);
    const refused = await runCli(['migrate'], { DATA_DIR: dataDir });
    assert.equal(refused.code, 1, refused.output);
    assert.ok(refused.output.includes(inUseMessage(dataDir, process.pid)), refused.output);
    const longAgo = new Date(Date.now() - 60_000);
    await utimes(lockFileIn(dataDir), longAgo, longAgo);
    const migrated = await runCli(['migrate'], { DATA_DIR: dataDir });
    assert.equal(migrated.code, 0, migrated.output);
  });

  it('a process holding the lock keeps its file fresh, and names where its pid belongs', {
    skip: !existsSync('/proc/sys/kernel/random/boot_id') && 'needs /proc',
  }, async () => {
    const dataDir = await newDataDir();
    const server = await startServer(dataDir);
    assert.ok(readFileSync(lockFileIn(dataDir), 'utf8').split('\n')[2]);
    const longAgo = new Date(Date.now() - 60_000);
    await utimes(lockFileIn(dataDir), longAgo, longAgo);
    // Refreshed every 5 s: waited for, within a bound.
    const deadline = Date.now() + 20_000;
    while ((await stat(lockFileIn(dataDir))).mtimeMs < Date.now() - 30_000) {
      assert.ok(Date.now() < deadline, 'the lock file was not refreshed');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    await stopProcess(server);
  });

  it("in one process: a database directory opens once at a time, its lock lives as long as it is open, and refuses other processes' locks", async () => {
    const dataDir = await newDataDir();
    const pgliteDir = path.join(dataDir, 'pglite');
    const db = await openDatabase({ pgliteDataDir: pgliteDir });
    assert.equal(readFileSync(lockFileIn(dataDir), 'utf8').split('\n')[0], String(process.pid));
    await assert.rejects(openDatabase({ pgliteDataDir: pgliteDir }), /already open in this process/);
    await db.close();
    assert.equal(existsSync(lockFileIn(dataDir)), false);

    const server = await startServer(dataDir);
    await assert.rejects(
      openDatabase({ pgliteDataDir: pgliteDir }),
      (error: unknown) => error instanceof DataDirInUseError && error.pid === server.pid,
    );
    await stopProcess(server);
    const reopened = await openDatabase({ pgliteDataDir: pgliteDir });
    await reopened.close();

    // Throw-away databases (the tests' own) are never locked: any number open at once.
    const inMemory = await Promise.all([0, 1].map(() => openDatabase({ pgliteDataDir: 'memory://' })));
    await Promise.all(inMemory.map((each) => each.close()));
  });
});

describe('with DATABASE_URL, DATA_DIR is not locked', {
  skip: testBackend !== 'postgres' && 'needs PostgreSQL',
}, () => {
  let dropDatabase: () => Promise<void>;
  let databaseUrl: string;
  let dataDir: string;
  before(async () => {
    ({ url: databaseUrl, drop: dropDatabase } = await createPostgresDatabase());
    dataDir = await mkdtemp(path.join(tmpdir(), 'orgplane-lock-'));
  });
  after(async () => {
    await dropDatabase();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('two servers and the CLI share one DATA_DIR (for its secret key) and one database', async () => {
    const env = { DATA_DIR: dataDir, DATABASE_URL: databaseUrl };
    // One after the other: two first starts at the same moment on a fresh PostgreSQL database race
    // in the queue's schema set-up (a separate matter; the migrations themselves are serialized).
    const servers = [await spawnServer(env)];
    try {
      assert.ok(await servers[0]!.healthy, servers[0]!.output());
      servers.push(await spawnServer(env));
      assert.ok(await servers[1]!.healthy, servers[1]!.output());
      const { token, organizationId } = await bootstrapByApi(servers[0]!.url);
      const setPlan = await runCli(['org', 'set-plan', organizationId, 'team'], env);
      assert.equal(setPlan.code, 0, setPlan.output);
      const org = await api(servers[1]!.url, token).get('/v1/org');
      assert.equal(org.body.organization.plan, 'team');
      assert.equal(existsSync(lockFileIn(dataDir)), false);
    } finally {
      await Promise.all(servers.map((server) => stopProcess(server)));
    }
  });
});
