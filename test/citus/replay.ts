// The statements the tenant-routing check covers (test/db/tenant-routing.ts), and those of its files
// that name only reference tables, run on a real Citus cluster: the check reads PostgreSQL's plan and says whether a statement stays on one tenant, but only
// Citus says whether it accepts it (now() inside CASE in an UPDATE, a subquery it cannot push down, a row
// lock across shards are refused by Citus alone). Each statement runs in a transaction that is rolled
// back, with the parameters of its first use in the flow that ran it. Its rows are not on the cluster, so
// a constraint it breaks there (a foreign key to a row that is not there) is expected; any other error
// is a statement Citus refuses, and fails the test naming it.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { before, test } from 'node:test';
import pg from 'pg';
import { distributeOn, useCitusCluster } from '../support/citus-cluster.ts';
import type { CapturedStatement } from '../support/statement-capture.ts';
import {
  SPOOL_VARIABLE,
  fillSpool,
  replayGroupOf,
  spooledStatements,
  tenantRoutingFiles,
} from '../support/statement-spool.ts';

// Integrity constraint violations (23) depend on the rows, which are not there. One violated on a
// worker reaches the coordinator as XX000 when Citus ran the statement in steps (an INSERT ... SELECT, a
// CTE that writes): known by its message then. Data exceptions (22) are not excused: the parameters are
// those the statement ran with, and Citus's own steps fail with them (22P04 from its internal COPY).
const dataDependent = (code: string | undefined, message: string) =>
  (!!code && code.startsWith('23')) || /violates (foreign key|unique|check|not-null) constraint/.test(message);

export interface Refusal {
  statement: string;
  error: string;
}

/** Runs each statement on `url` in a transaction rolled back after it; returns those refused for another reason than their data. */
export async function replayStatements(url: string, statements: CapturedStatement[]): Promise<Refusal[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const refusals: Refusal[] = [];
  try {
    for (const statement of statements) {
      await client.query('BEGIN');
      try {
        await client.query(statement.text, statement.values);
      } catch (error) {
        const { code, message } = error as { code?: string; message: string };
        if (!dataDependent(code, message))
          refusals.push({
            statement: statement.text.replace(/\s+/g, ' ').trim(),
            error: `${code ?? 'no SQLSTATE'} ${message}`,
          });
      } finally {
        await client.query('ROLLBACK');
      }
    }
  } finally {
    await client.end();
  }
  return refusals;
}

/**
 * The tests of one replay file: a cluster, `orgplane distribute` on it, then per tenant-routing file of
 * the group a test that replays its statements. The statements come from this `npm test` run's spool
 * when the file already ran; otherwise the file is run here first (on this run's backend) to fill one.
 */
export function replayGroup(group: string): void {
  const citus = useCitusCluster();
  const files = tenantRoutingFiles().filter((file) => replayGroupOf(file) === group);
  const captured = new Map<string, CapturedStatement[]>();
  const runOutputs = new Map<string, string>();
  const ranHere = new Set<string>();

  let distributed: Promise<string> | undefined;
  before(
    async () => {
      if (citus.skip) return;
      // `orgplane distribute` runs as soon as the cluster is up, while the flows below (if any) run.
      distributed = citus.ready.then(() => distributeOn(citus.cluster));
      distributed.catch(() => {});
      const shared = process.env[SPOOL_VARIABLE];
      const missing: string[] = [];
      for (const file of files) {
        const found = shared ? await spooledStatements(shared, file) : undefined;
        if (found) captured.set(file, found);
        else missing.push(file);
      }
      if (missing.length === 0) return;
      const own = await mkdtemp(path.join(tmpdir(), 'orgplane-spool-'));
      try {
        // The flows run while the cluster starts and is distributed (each takes a while).
        const [outputs] = await Promise.all([fillSpool(own, missing), distributed.catch(() => {})]);
        for (const [file, output] of outputs) {
          runOutputs.set(file, output);
          ranHere.add(file);
          const found = await spooledStatements(own, file);
          if (found) captured.set(file, found);
        }
      } finally {
        await rm(own, { recursive: true, force: true });
      }
    },
    { timeout: 20 * 60_000 },
  );

  test(`orgplane distribute makes the cluster's tables what src/db/distribution.ts says`, {
    skip: citus.skip,
    timeout: 450_000,
  }, async () => {
    await citus.ready;
    const output = await distributed!;
    assert.match(output, /^users: reference$/m);
    assert.match(output, /^members: distributed$/m);
    assert.match(output, /^memory_blocks: distributed$/m);
  });

  test(`the ${group} group has tenant-routing files to replay`, { skip: citus.skip }, () => {
    assert.ok(files.length > 0, `no file calls checkTenantRouting() in the ${group} group`);
  });

  for (const file of files) {
    test(`Citus runs every statement ${file} checks`, { skip: citus.skip, timeout: 300_000 }, async (t) => {
      const statements = captured.get(file);
      t.diagnostic(
        ranHere.has(file) ? 'its statements: from running it here' : "its statements: from this npm test run's spool",
      );
      assert.ok(
        statements,
        `${file} left no statements (its tenant-routing test did not run):\n${(runOutputs.get(file) ?? '').slice(-4000)}`,
      );
      assert.ok(statements.length > 0, `${file} checked no statement`);
      const refusals = await replayStatements(citus.cluster.coordinatorUrl, statements);
      assert.deepEqual(
        refusals,
        [],
        `Citus refused ${refusals.length} of the ${statements.length} statements of ${file}:\n${refusals.map((r) => `  ${r.error}\n    in: ${r.statement.slice(0, 400)}`).join('\n')}`,
      );
    });
  }
}
