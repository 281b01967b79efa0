// The embedded database serves one process: every process that opens DATA_DIR's database holds its
// lock for its lifetime, and another process (the CLI, a second `start`, a `worker`) is refused
// while it lives, touching nothing. Its writes used to be lost or invisible to the server. A lock left
// by a killed process does not block the next one. With DATABASE_URL nothing is locked.
// This file: locks left behind: by a killed process, with several processes starting at once, and a reused pid.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { describe, it } from 'node:test';
import { api } from '../support/http.ts';
import { runCli, spawnServer, stopProcess } from '../support/process.ts';
import { bootstrapByApi, embeddedOnly, inUseMessage, lockFileIn, useDataDirs } from './data-dir-lock-support.ts';

describe('the embedded DATA_DIR is locked by the process that has it open', { skip: embeddedOnly }, () => {
  const { running, newDataDir, startServer } = useDataDirs();

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
});
