// `orgplane secrets reseal`: after a rotation (v2 in front of v1), every sealed secret is re-sealed under
// v2 and v1 forgotten, so the instance then starts with v2 alone and its secrets still open. Before the
// reseal, v2 alone is refused. Run as an operator runs it: separate processes on one database.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { sealedColumns } from '../../src/composition.ts';
import { openDatabase, type Database } from '../../src/db/database.ts';
import { migrate } from '../../src/db/migrate.ts';
import { resealSecrets } from '../../src/operations/reseal.ts';
import { createSecretBox } from '../../src/platform/secrets.ts';
import { createPostgresDatabase, testBackend } from '../support/app.ts';
import { createTenant } from '../support/fixtures.ts';
import { api } from '../support/http.ts';
import { runCli, spawnServer, startServerProcess } from '../support/process.ts';
import { checkTenantRouting } from '../db/tenant-routing.ts';

const tenantRouting = checkTenantRouting();
const key = () => randomBytes(32).toString('base64');
const v1 = `v1:${key()}`;
const v2 = `v2:${key()}`;

describe('orgplane secrets reseal', () => {
  const env: Record<string, string> = { RUN_WORKERS: 'false' };
  let dataDir: string;
  let dropDatabase: (() => Promise<void>) | undefined;
  /** The signing secrets the API showed when the streams were made, by organization. */
  const secrets = new Map<string, string>();

  const withKey = (ring: string) => ({ ...env, ORGPLANE_SECRET_KEY: ring });
  /** The database, opened by the test while no orgplane process holds it. */
  async function withDatabase<T>(work: (db: Database) => Promise<T>): Promise<T> {
    const db = await openDatabase(
      env.DATABASE_URL ? { databaseUrl: env.DATABASE_URL } : { pgliteDataDir: path.join(dataDir, 'pglite') },
    );
    try {
      return await work(db);
    } finally {
      await db.close();
    }
  }
  const sealedStreams = (db: Database) =>
    db.query<{ organization_id: string; signing_secret_sealed: string }>(
      '/* test */ SELECT organization_id, signing_secret_sealed FROM audit_streams ORDER BY organization_id',
    );
  const recordedVersions = async (db: Database) =>
    (await db.query<{ version: string }>('SELECT version FROM secret_key_checks ORDER BY version')).rows.map(
      (row) => row.version,
    );

  before(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'orgplane-reseal-'));
    env.DATA_DIR = dataDir;
    if (testBackend === 'postgres') {
      const database = await createPostgresDatabase();
      env.DATABASE_URL = database.url;
      dropDatabase = database.drop;
    }
    // Secrets sealed under v1: two organizations' audit streams (their signing secrets).
    const server = await startServerProcess(withKey(v1));
    try {
      const tenant = await createTenant(server.url);
      for (const [organizationId, token] of [
        [tenant.orgId, tenant.owner.token],
        [tenant.otherOrgId, tenant.otherAdmin.token],
      ] as const) {
        const put = await api(server.url, token).put(`/v1/orgs/${organizationId}/audit-stream`, {
          url: 'https://siem.example.test/intake',
          enabled: true,
        });
        assert.equal(put.status, 200, put.text);
        secrets.set(organizationId, put.body.signingSecret);
      }
    } finally {
      await server.stop();
    }
    // The rotation: v2 in front, v1 kept to open what it sealed.
    await (await startServerProcess(withKey(`${v2},${v1}`))).stop();
  });
  after(async () => {
    await dropDatabase?.();
    await rm(dataDir, { recursive: true, force: true });
  });

  test('before the reseal, a ring with v2 alone is refused, naming v1 and the command', async () => {
    const server = await spawnServer(withKey(v2));
    assert.equal(await server.healthy, false, server.output());
    assert.equal(await server.exited, 1, server.output());
    assert.match(server.output(), /orgplane: The secret key ring lacks v1, .*orgplane secrets reseal/);
    // The command itself refuses such a ring too (it could not open what it is to re-seal).
    const reseal = await runCli(['secrets', 'reseal'], withKey(v2));
    assert.equal(reseal.code, 1, reseal.output);
    assert.match(reseal.output, /lacks v1/);
    for (const output of [server.output(), reseal.output])
      assert.ok(!output.includes(v2.slice(3)) && !output.includes(v1.slice(3)), 'no key in the output');
    await withDatabase(async (db) => {
      const { rows } = await sealedStreams(db);
      assert.deepEqual(
        rows.map((row) => row.signing_secret_sealed.split(':')[0]),
        ['v1', 'v1'],
      );
      assert.deepEqual(await recordedVersions(db), ['v1', 'v2']);
    });
  });

  test('reseal re-seals every secret under v2, counts per table, forgets v1; a second run has nothing to do', async () => {
    const first = await runCli(['secrets', 'reseal'], withKey(`${v2},${v1}`));
    assert.equal(first.code, 0, first.output);
    assert.match(first.output, /^audit_streams: 2 re-sealed under v2, 0 failed$/m);
    for (const spec of sealedColumns)
      if (spec.table !== 'audit_streams')
        assert.match(first.output, new RegExp(`^${spec.table}: 0 re-sealed under v2, 0 failed$`, 'm'));
    assert.match(first.output, /^retired: v1 /m);

    const again = await runCli(['secrets', 'reseal'], withKey(`${v2},${v1}`));
    assert.equal(again.code, 0, again.output);
    assert.match(again.output, /^audit_streams: 0 re-sealed under v2, 0 failed$/m);
    assert.doesNotMatch(again.output, /retired|kept/);

    await withDatabase(async (db) => {
      assert.deepEqual(await recordedVersions(db), ['v2']);
      // The secrets open with v2 alone, and are the ones the API showed.
      const box = createSecretBox(v2);
      const { rows } = await sealedStreams(db);
      assert.equal(rows.length, 2);
      for (const row of rows) assert.equal(box.open(row.signing_secret_sealed), secrets.get(row.organization_id));
    });
  });

  test('after the reseal the instance starts with v2 alone, and a ring still carrying v1 does not record it again', async () => {
    const server = await startServerProcess(withKey(v2));
    assert.equal((await api(server.url).get('/ready')).status, 200);
    await server.stop();
    await (await startServerProcess(withKey(`${v2},${v1}`))).stop();
    await withDatabase(async (db) => assert.deepEqual(await recordedVersions(db), ['v2']));
    const again = await startServerProcess(withKey(v2));
    await again.stop();
  });

  test('a secret that cannot be opened is counted as failed and its version kept; the rest is re-sealed, each row by a statement naming it', async () => {
    const v3 = `v3:${key()}`;
    await withDatabase(async (db) => {
      const [damaged, healthy] = (await sealedStreams(db)).rows;
      await db.query('UPDATE audit_streams SET signing_secret_sealed = $2 WHERE organization_id = $1', [
        damaged!.organization_id,
        `v2:${damaged!.signing_secret_sealed.split(':').slice(1, 3).join(':')}:AAAAAAAAAAAAAAAAAAAAAA`,
      ]);
      await migrate(db);
      // The same run the command makes, in this process: v3 in front.
      const result = await resealSecrets(db, `${v3},${v2}`, sealedColumns);
      assert.deepEqual(
        result.tables.find((count) => count.table === 'audit_streams'),
        { table: 'audit_streams', resealed: 1, failed: 1 },
      );
      assert.deepEqual([result.retired, result.kept], [[], ['v2']]);
      const rows = (await sealedStreams(db)).rows;
      const reopened = rows.find((row) => row.organization_id === healthy!.organization_id)!;
      assert.equal(createSecretBox(v3).open(reopened.signing_secret_sealed), secrets.get(healthy!.organization_id));
      // The pages are read across organizations on purpose; each row is locked and written by its key.
      await tenantRouting.assertStatementsStayOnOneTenant(db, 3);
    });
  });

  test('usage: anything but `secrets reseal` is refused with exit 2', async () => {
    for (const args of [['secrets'], ['secrets', 'rotate'], ['secrets', 'reseal', 'extra']]) {
      const refused = await runCli(args, env);
      assert.equal(refused.code, 2, args.join(' '));
      assert.match(refused.output, /usage: orgplane secrets reseal/);
    }
  });
});

test('every `_sealed` column of the schema is declared by its module (a new one must be, or reseal would miss it)', async () => {
  const db = await openDatabase({ pgliteDataDir: 'memory://' });
  try {
    await migrate(db);
    const { rows } = await db.query<{ table_name: string; column_name: string }>(
      `SELECT table_name, column_name FROM information_schema.columns
        WHERE table_schema = 'public' AND column_name LIKE '%\\_sealed' ORDER BY 1, 2`,
    );
    const declared = sealedColumns.flatMap((spec) => spec.columns.map((column) => `${spec.table}.${column}`)).sort();
    assert.deepEqual(declared, rows.map((row) => `${row.table_name}.${row.column_name}`).sort());
  } finally {
    await db.close();
  }
});

test('orgplane --version and -v print the version of package.json', async () => {
  const { version } = (await import('../../package.json', { with: { type: 'json' } })).default as { version: string };
  for (const flag of ['--version', '-v']) {
    const printed = await runCli([flag], {});
    assert.deepEqual([printed.code, printed.output.trim()], [0, version]);
  }
  const help = await runCli(['--help'], {});
  assert.match(help.output, /orgplane secrets reseal/);
  assert.match(help.output, /orgplane --version/);
});
