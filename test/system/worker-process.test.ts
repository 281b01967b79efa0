// `orgplane worker` runs every background job `orgplane start` runs (with RUN_WORKERS), so a deployment
// that splits them (API processes with RUN_WORKERS=false, plus `orgplane worker`) loses none. It once
// built its jobs by hand and left audit retention out: AUDIT_RETENTION_DAYS was never enforced there.
// Both commands log the list of the jobs they started (from the one place that starts them); the
// worker's pruning is observed in the database.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { createPostgresDatabase, testBackend } from '../support/app.ts';
import { type CliProcess, runCli, spawnCli, spawnServer, stopProcess } from '../support/process.ts';

const env: Record<string, string> = {
  LOG_LEVEL: 'info',
  AUDIT_RETENTION_DAYS: '1',
  // The first pruning at once rather than a minute after the start.
  AUDIT_RETENTION_FIRST_RUN_SECONDS: '0',
};
let dataDir: string;
let dropDatabase: (() => Promise<void>) | undefined;

before(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), 'orgplane-worker-'));
  env.DATA_DIR = dataDir;
  if (testBackend === 'postgres') {
    const database = await createPostgresDatabase();
    env.DATABASE_URL = database.url;
    dropDatabase = database.drop;
  }
});
after(async () => {
  await dropDatabase?.();
  await rm(dataDir, { recursive: true, force: true });
});

/** Runs `sql` on the database of `env`; on PGlite only while no process holds it. */
async function query<T>(sql: string): Promise<T[]> {
  if (env.DATABASE_URL) {
    const client = new pg.Client({ connectionString: env.DATABASE_URL });
    await client.connect();
    try {
      return (await client.query(sql)).rows as T[];
    } finally {
      await client.end();
    }
  }
  const { openDatabase } = await import('../../src/db/database.ts');
  const db = await openDatabase({ pgliteDataDir: path.join(dataDir, 'pglite') });
  try {
    return (await db.query(sql)).rows as T[];
  } finally {
    await db.close();
  }
}

function logLines(output: string): Array<Record<string, unknown>> {
  return output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** Waits (bounded) for a log line with this message; undefined when the process ended or time ran out. */
async function logLine(cli: CliProcess, msg: string, timeoutMs = 30_000): Promise<Record<string, unknown> | undefined> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const line = logLines(cli.output()).find((entry) => entry.msg === msg);
    if (line || Date.now() > deadline || cli.child.exitCode !== null) return line;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

test('`orgplane worker` prunes audit events past AUDIT_RETENTION_DAYS and starts the same jobs as `orgplane start`', {
  timeout: 180_000,
}, async () => {
  // A few audit events (the bootstrap's), made two days old.
  const bootstrap = await runCli(
    [
      'bootstrap',
      '--email',
      'ada@example.test',
      '--password',
      'a long enough password',
      '--name',
      'Ada',
      '--org',
      'Engines',
    ],
    env,
  );
  assert.equal(bootstrap.code, 0, bootstrap.output);
  await query("UPDATE audit_events SET occurred_at = occurred_at - interval '2 days'");
  const [old] = await query<{ n: number }>(
    "SELECT count(*)::int AS n FROM audit_events WHERE occurred_at < now() - interval '1 day'",
  );
  assert.ok(old!.n > 0, 'the bootstrap wrote audit events');

  const worker = spawnCli(['worker'], env);
  let workerJobs: unknown;
  try {
    workerJobs = (await logLine(worker, 'background workers started'))?.workers;
    assert.ok(await logLine(worker, 'audit: pruned'), `the worker pruned:\n${worker.output()}`);
  } finally {
    assert.equal(await stopProcess(worker), 0, worker.output());
  }
  const [left] = await query<{ n: number }>(
    "SELECT count(*)::int AS n FROM audit_events WHERE occurred_at < now() - interval '1 day'",
  );
  assert.equal(left!.n, 0, 'no event older than the retention is left');
  const checkpoints = await query<{ n: number }>('SELECT count(*)::int AS n FROM audit_checkpoints');
  assert.equal(checkpoints[0]!.n, 1, 'the pruned chain keeps a checkpoint');

  const server = await spawnServer(env);
  let serverJobs: unknown;
  try {
    assert.ok(await server.healthy, server.output());
    serverJobs = (await logLine(server, 'background workers started'))?.workers;
  } finally {
    assert.equal(await stopProcess(server), 0, server.output());
  }
  assert.deepEqual(serverJobs, [
    'audit-retention',
    'audit-streams',
    'mcp-health',
    'messenger-delivery',
    'memory-expiry',
  ]);
  assert.deepEqual(workerJobs, serverJobs, 'the worker starts every job the server starts');
});
