// The embedded database serves one process: every process that opens DATA_DIR's database holds its
// lock for its lifetime, and another process (the CLI, a second `start`, a `worker`) is refused
// while it lives, touching nothing. Its writes used to be lost or invisible to the server. A lock left
// by a killed process does not block the next one. With DATABASE_URL nothing is locked.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { DataDirInUseError } from '../../src/db/data-dir-lock.ts';
import { openDatabase } from '../../src/db/database.ts';
import { createPostgresDatabase, freePort, testBackend } from '../support/app.ts';
import { api } from '../support/http.ts';
import { runCli, spawnServer, stopProcess, type CliProcess } from '../support/process.ts';

const embeddedOnly = testBackend !== 'pglite' && 'the embedded database only (runs in the PGlite run of the suite)';

const lockFileIn = (dataDir: string) => path.join(dataDir, 'pglite.lock');
const inUseMessage = (dataDir: string, pid: number) =>
  `DATA_DIR ${dataDir} is in use by process ${pid}; the embedded database serves one process: stop it first, or use the API / DATABASE_URL`;

/** What a refused process must leave as it was: the files of DATA_DIR (names, sizes), the key and the lock. */
async function snapshot(dataDir: string) {
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

async function bootstrapByApi(url: string) {
  const response = await api(url).post('/v1/bootstrap', {
    email: 'owner@example.test',
    password: 'a long enough password',
    name: 'Owner',
    organizationName: 'Locked Org',
  });
  assert.equal(response.status, 201, response.text);
  return { token: response.body.sessionToken as string, organizationId: response.body.organization.id as string };
}

describe('the embedded DATA_DIR is locked by the process that has it open', { skip: embeddedOnly }, () => {
  const dataDirs: string[] = [];
  const running: CliProcess[] = [];
  const newDataDir = async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'orgplane-lock-'));
    dataDirs.push(dataDir);
    return dataDir;
  };
  const startServer = async (dataDir: string) => {
    const server = await spawnServer({ DATA_DIR: dataDir });
    running.push(server);
    assert.ok(await server.healthy, server.output());
    return server;
  };
  after(async () => {
    await Promise.all(running.map((server) => stopProcess(server, 'SIGKILL')));
    await Promise.all(dataDirs.map((dataDir) => rm(dataDir, { recursive: true, force: true })));
  });

  it('refuses the CLI, a second start and a worker while the server runs, touching nothing; after it stops they work and the server sees their writes', async () => {
    const dataDir = await newDataDir();
    const server = await startServer(dataDir);
    assert.equal(readFileSync(lockFileIn(dataDir), 'utf8').split('\n')[0], String(server.pid));
    const { token, organizationId } = await bootstrapByApi(server.url);
    const before = await snapshot(dataDir);

    const env = { DATA_DIR: dataDir, PORT: String(await freePort()) };
    const refused = await Promise.all([
      runCli(
        [
          'bootstrap',
          '--email',
          'second@example.test',
          '--password',
          'a long enough password',
          '--name',
          'Second',
          '--org',
          'Second',
        ],
        env,
      ),
      runCli(['org', 'set-plan', organizationId, 'team'], env),
      runCli(['migrate'], env),
      runCli(['worker'], env),
      runCli(['start'], env),
    ]);
    for (const run of refused) {
      assert.equal(run.code, 1, run.output);
      assert.ok(run.output.includes(inUseMessage(dataDir, server.pid)), run.output);
      assert.doesNotMatch(run.output, /\n\s+at |listening|worker running|migrations applied/);
    }
    assert.deepEqual(await snapshot(dataDir), before, 'DATA_DIR as it was');
    const org = await api(server.url, token).get('/v1/org');
    assert.equal(org.status, 200, org.text);
    assert.equal(org.body.organization.plan, 'free');

    assert.equal(await stopProcess(server), 0, server.output());
    assert.equal(existsSync(lockFileIn(dataDir)), false, 'a clean stop removes the lock');
    const setPlan = await runCli(['org', 'set-plan', organizationId, 'team'], env);
    assert.equal(setPlan.code, 0, setPlan.output);
    assert.equal(existsSync(lockFileIn(dataDir)), false, 'the CLI gave it back when it exited');

    const restarted = await startServer(dataDir);
    const after = await api(restarted.url, token).get('/v1/org');
    assert.equal(after.status, 200, after.text);
    assert.equal(after.body.organization.plan, 'team', 'the CLI write is what the server sees');
    await stopProcess(restarted);
  });

  it('a lock left by a process killed with SIGKILL does not block the next start, nor the CLI', async () => {
    const dataDir = await newDataDir();
    const first = await startServer(dataDir);
    const { token, organizationId } = await bootstrapByApi(first.url);
    await stopProcess(first, 'SIGKILL');
    assert.equal(
      readFileSync(lockFileIn(dataDir), 'utf8').split('\n')[0],
      String(first.pid),
      'the killed process left its lock',
    );

    const second = await startServer(dataDir);
    assert.equal(readFileSync(lockFileIn(dataDir), 'utf8').split('\n')[0], String(second.pid));
    assert.equal((await api(second.url, token).get('/v1/me')).status, 200, 'the data is all there');
    await stopProcess(second, 'SIGKILL');

    const setPlan = await runCli(['org', 'set-plan', organizationId, 'enterprise'], { DATA_DIR: dataDir });
    assert.equal(setPlan.code, 0, setPlan.output);
    assert.match(setPlan.output, /"plan":"enterprise"/);
    assert.equal(existsSync(lockFileIn(dataDir)), false);
  });

  it('of several processes starting at once on one DATA_DIR, with a stale lock in it, exactly one gets it', async () => {
    const dataDir = await newDataDir();
    // The lock of a process that is gone (no process has this pid: it is above every pid_max).
    await writeFile(lockFileIn(dataDir), '999999999\n\n');
    const servers = await Promise.all([0, 1, 2].map(() => spawnServer({ DATA_DIR: dataDir })));
    running.push(...servers);
    const healthy = await Promise.all(servers.map((server) => server.healthy));
    assert.equal(healthy.filter(Boolean).length, 1, servers.map((server) => server.output()).join('\n---\n'));
    const winner = servers[healthy.indexOf(true)]!;
    for (const server of servers.filter((candidate) => candidate !== winner)) {
      assert.equal(await server.exited, 1, server.output());
      assert.ok(server.output().includes(inUseMessage(dataDir, winner.pid)), server.output());
    }
    assert.equal(readFileSync(lockFileIn(dataDir), 'utf8').split('\n')[0], String(winner.pid));
    await stopProcess(winner);
  });

  it("a live process with a dead owner's pid (pid reuse) does not hold the lock; a live owner does", {
    skip: !existsSync('/proc/self/stat') && 'needs /proc',
  }, async () => {
    const dataDir = await newDataDir();
    // This test process is alive, but it did not start at tick 1 after boot: the pid was reused.
    await writeFile(lockFileIn(dataDir), `${process.pid}\n1\n`);
    const migrated = await runCli(['migrate'], { DATA_DIR: dataDir });
    assert.equal(migrated.code, 0, migrated.output);
    assert.equal(existsSync(lockFileIn(dataDir)), false);

    const stat = readFileSync('/proc/self/stat', 'utf8');
    const started = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
    await writeFile(lockFileIn(dataDir), `${process.pid}\n${started}\n`);
    const refused = await runCli(['migrate'], { DATA_DIR: dataDir });
    assert.equal(refused.code, 1, refused.output);
    assert.ok(refused.output.includes(inUseMessage(dataDir, process.pid)), refused.output);
  });

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
