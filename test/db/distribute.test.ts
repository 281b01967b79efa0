// `orgplane distribute` (src/db/distribute.ts): what it would run on a Citus coordinator, checked against
// the migrated schema (Citus itself is not installable here), and its refusal on a database without Citus.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { distributionPlan, type DistributionStep } from '../../src/db/distribute.ts';
import { TABLE_CLASSES } from '../../src/db/distribution.ts';
import { migrate } from '../../src/db/migrate.ts';
import { createPostgresDatabase, openTestDatabase, testBackend, type TestDatabase } from '../support/app.ts';
import { runCli } from '../support/process.ts';

let database: TestDatabase;
let plan: DistributionStep[];

before(async () => {
  database = await openTestDatabase();
  await migrate(database.db);
  plan = await distributionPlan(database.db);
});
after(async () => {
  await database?.drop();
});

test('every reference and distributed table gets one step, local tables none', () => {
  const planned = plan.map((step) => step.table).sort();
  const expected = Object.entries(TABLE_CLASSES)
    .filter(([, found]) => found.kind !== 'local')
    .map(([table]) => table)
    .sort();
  assert.deepEqual(planned, expected);
});

test('reference tables come first, and every table after the tables its foreign keys reference', async () => {
  const position = new Map(plan.map((step, index) => [step.table, index]));
  const firstDistributed = plan.findIndex((step) => step.sql.startsWith('SELECT create_distributed_table'));
  assert.ok(plan.slice(0, firstDistributed).every((step) => step.sql.startsWith('SELECT create_reference_table')));
  assert.ok(plan.slice(firstDistributed).every((step) => step.sql.startsWith('SELECT create_distributed_table')));
  const { rows: keys } = await database.db.query<{ from: string; to: string }>(
    `SELECT t.relname AS from, r.relname AS to FROM pg_constraint k
       JOIN pg_class t ON t.oid = k.conrelid JOIN pg_class r ON r.oid = k.confrelid
      WHERE k.contype = 'f' AND t.relnamespace = 'public'::regnamespace AND t.oid <> r.oid`,
  );
  assert.ok(keys.length > 0);
  for (const key of keys) {
    assert.ok(position.get(key.to)! < position.get(key.from)!, `${key.to} (referenced by ${key.from}) comes first`);
  }
});

test('tenant tables are co-located with the first tenant table, user tables with the first user table', () => {
  const anchors = new Map<string, string>();
  for (const step of plan) {
    const found = TABLE_CLASSES[step.table]!;
    if (found.kind !== 'tenant' && found.kind !== 'user') continue;
    const anchor = anchors.get(found.kind);
    const expected = `SELECT create_distributed_table('${step.table}', '${found.column}', colocate_with => '${anchor ?? 'none'}')`;
    assert.equal(step.sql, expected);
    anchors.set(found.kind, anchor ?? step.table);
  }
  assert.equal(TABLE_CLASSES[anchors.get('tenant')!]!.kind, 'tenant');
  assert.equal(TABLE_CLASSES[anchors.get('user')!]!.kind, 'user');
});

test('a run that completes an earlier one skips what Citus has, and co-locates the rest with a table of the kind it distributed', async () => {
  // As an earlier run (Citus 13.2, by hand) left it: the messenger queue and the audit chains distributed, the rest not.
  const existing = new Set(['users', 'organizations', 'messenger_updates', 'audit_events', 'memories']);
  const rest = await distributionPlan(database.db, existing);
  assert.deepEqual(
    rest.filter((step) => existing.has(step.table)),
    [],
  );
  assert.equal(rest.length, plan.length - existing.size);
  const colocations = new Set(
    rest
      .filter((step) => step.sql.startsWith('SELECT create_distributed_table'))
      .map((step) => ({ kind: TABLE_CLASSES[step.table]!.kind, with: /colocate_with => '(\w+)'/.exec(step.sql)![1] }))
      .map((c) => `${c.kind}:${c.with}`),
  );
  assert.deepEqual([...colocations].sort(), ['tenant:audit_events', 'user:memories']);
});

test('on a database without the citus extension it refuses in one sentence and exits non-zero', {
  timeout: 90_000,
}, async () => {
  let env: Record<string, string>;
  let cleanup: () => Promise<void>;
  if (testBackend === 'postgres') {
    const created = await createPostgresDatabase();
    env = { DATABASE_URL: created.url };
    cleanup = created.drop;
  } else {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'orgplane-distribute-'));
    env = { DATA_DIR: dataDir };
    cleanup = () => rm(dataDir, { recursive: true, force: true });
  }
  try {
    const { code, output } = await runCli(['distribute'], env);
    assert.equal(code, 1, output);
    assert.equal(
      output.trim(),
      'orgplane: this database has no citus extension: `orgplane distribute` runs on a Citus coordinator (CREATE EXTENSION citus first), and one PostgreSQL server needs nothing distributed',
    );
  } finally {
    await cleanup();
  }
});
