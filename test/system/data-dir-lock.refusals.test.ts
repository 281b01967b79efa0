// The embedded database serves one process: every process that opens DATA_DIR's database holds its
// lock for its lifetime, and another process (the CLI, a second `start`, a `worker`) is refused
// while it lives, touching nothing. Its writes used to be lost or invisible to the server. A lock left
// by a killed process does not block the next one. With DATABASE_URL nothing is locked.
// This file: the CLI, a second start and a worker, refused while a server has DATA_DIR.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { freePort } from '../support/app.ts';
import { api } from '../support/http.ts';
import { runCli, stopProcess } from '../support/process.ts';
import {
  bootstrapByApi,
  embeddedOnly,
  inUseMessage,
  lockFileIn,
  snapshot,
  useDataDirs,
} from './data-dir-lock-support.ts';

describe('the embedded DATA_DIR is locked by the process that has it open', { skip: embeddedOnly }, () => {
  const { newDataDir, startServer } = useDataDirs();

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
});
