// The upgrade to tenant-first keys (migration 0800) keeps every row and relationship: a
// database filled through the API by the release before it (its source taken from git: the parent of
// the commit that added 0800) is upgraded by the current code, which then reads the same data back.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { createPostgresDatabase, testBackend } from '../support/app.ts';
import { createTenant } from '../support/fixtures.ts';
import { api } from '../support/http.ts';
import { spawnServer, stopProcess } from '../support/process.ts';

const root = new URL('../../', import.meta.url).pathname;
const git = (...args: string[]) => execFileSync('git', args, { cwd: root, encoding: 'utf8' }).trim();

const cleanups: (() => Promise<void>)[] = [];
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
});

// The previous release comes from this checkout's history: a clone without it (shallow) cannot run this.
const commitAdding0800 = (() => {
  try {
    return git('log', '--diff-filter=A', '--format=%H', '-1', '--', 'src/db/migrations/0800_tenant_keys.sql') || null;
  } catch {
    return null;
  }
})();
const withoutHistory = commitAdding0800
  ? false
  : 'this checkout has no git history of migration 0800 (a shallow clone?): the release before it cannot be rebuilt';

/** The source tree of the release before 0800, beside this checkout's node_modules. */
async function previousRelease(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'orgplane-previous-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const archive = execFileSync('git', ['archive', '--format=tar', `${commitAdding0800}^`, 'src', 'package.json'], {
    cwd: root,
    maxBuffer: 256 * 1024 * 1024,
  });
  execFileSync('tar', ['-x', '-C', dir], { input: archive });
  // Its dependencies are this checkout's: pg-boss, which that release ran, stays a devDependency for it.
  await symlink(path.join(root, 'node_modules'), path.join(dir, 'node_modules'));
  return dir;
}

async function startServer(env: Record<string, string>, main?: string) {
  const server = await spawnServer(env, main);
  if (!(await server.healthy)) {
    server.child.kill('SIGKILL');
    throw new Error(`the server did not start:\n${server.output()}`);
  }
  return server;
}

test('a database filled by the release before 0800 keeps every row, and the current code reads it back', {
  timeout: 240_000,
  skip: withoutHistory,
}, async () => {
  const previous = await previousRelease();
  const env: Record<string, string> = {
    ORGPLANE_SECRET_KEY: `v1:${randomBytes(32).toString('base64')}`,
    MCP_HEALTH_INTERVAL_SECONDS: '0',
  };
  let count: () => Promise<Record<string, number>>;
  if (testBackend === 'postgres') {
    const database = await createPostgresDatabase();
    cleanups.push(() => database.drop());
    env.DATABASE_URL = database.url;
    count = async () => {
      const client = new pg.Client({ connectionString: database.url });
      await client.connect();
      try {
        return await rowCounts(client);
      } finally {
        await client.end();
      }
    };
  } else {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'orgplane-upgrade-'));
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    await mkdir(dataDir, { recursive: true });
    env.DATA_DIR = dataDir;
    count = async () => {
      // Opened as the server opens it, once the server has let it go.
      const { openDatabase } = await import('../../src/db/database.ts');
      const db = await openDatabase({ pgliteDataDir: path.join(dataDir, 'pglite') });
      try {
        return await rowCounts(db);
      } finally {
        await db.close();
      }
    };
  }

  // Filled by the previous release, through its API.
  const old = await startServer(env, path.join(previous, 'src/main.ts'));
  let tenant, teamId: string, memoryId: string, apiKey: string, installToken: string;
  try {
    tenant = await createTenant(old.url);
    const owner = api(old.url, tenant.owner.token);
    const team = await owner.post(`/v1/orgs/${tenant.orgId}/teams`, { name: 'Platform' });
    assert.equal(team.status, 201, team.text);
    teamId = team.body.team.id;
    assert.equal(
      (await owner.post(`/v1/orgs/${tenant.orgId}/teams/${teamId}/members`, { memberId: tenant.member.memberId }))
        .status,
      204,
    );
    const key = await owner.post(`/v1/orgs/${tenant.orgId}/api-keys`, { name: 'ci', role: 'member' });
    assert.equal(key.status, 201, key.text);
    apiKey = key.body.key;
    const link = await owner.post(`/v1/orgs/${tenant.orgId}/install-links`, {});
    assert.equal(link.status, 201, link.text);
    installToken = link.body.token;
    assert.equal(
      (await owner.post(`/v1/orgs/${tenant.orgId}/invitations`, { email: 'pending@example.test', role: 'member' }))
        .status,
      201,
    );
    const memory = await owner.post('/v1/memory', {
      content: 'The deploy key rotates every Monday\nAsk the platform team.',
      tags: ['ops'],
    });
    assert.equal(memory.status, 201, memory.text);
    memoryId = memory.body.memory.id;
    for (let i = 0; i < 5; i++)
      assert.equal((await owner.post('/v1/memory', { content: `note ${i} about the deploy` })).status, 201);
  } finally {
    await stopProcess(old);
  }
  const before = await count();
  for (const table of [
    'members',
    'teams',
    'team_members',
    'invitations',
    'api_keys',
    'install_links',
    'memories',
    'memory_blocks',
    'memory_terms',
    'audit_events',
    'sessions',
  ]) {
    assert.ok((before[table] ?? 0) > 0, `the previous release wrote ${table}`);
  }

  // Upgraded by the current code when it starts.
  const current = await startServer(env);
  try {
    const owner = api(current.url, tenant.owner.token);
    const org = await owner.get('/v1/org');
    assert.equal(org.status, 200, org.text);
    assert.equal(org.body.organization.id, tenant.orgId);
    const teams = await owner.get(`/v1/orgs/${tenant.orgId}/teams`);
    assert.equal(teams.status, 200, teams.text);
    assert.deepEqual(
      teams.body.teams.map((team: { id: string }) => team.id),
      [teamId],
    );
    const fetched = await owner.get(`/v1/memory/${memoryId}`);
    assert.equal(fetched.status, 200, fetched.text);
    assert.equal(fetched.body.memory.content, 'The deploy key rotates every Monday\nAsk the platform team.');
    const search = await owner.get('/v1/memory/search?q=deploy');
    assert.equal(search.status, 200, search.text);
    assert.equal(search.body.results.length, 6, search.text);
    // A write after the upgrade: the sequences go on from the previous release's values.
    assert.equal((await owner.post('/v1/memory', { content: 'written after the upgrade' })).status, 201);
    // GET /v1/org reads the copies migration 1000 made: the member's teams and the owner.
    const memberView = await api(current.url, tenant.member.token).get('/v1/org');
    assert.equal(memberView.status, 200, memberView.text);
    assert.deepEqual(
      memberView.body.currentMemberTeams.map((team: { id: string }) => team.id),
      [teamId],
    );
    assert.equal(memberView.body.organization.owner.memberId, tenant.owner.memberId);
    // Secrets issued before tokens named their tenant are still found by their hash alone.
    assert.doesNotMatch(apiKey, /\./);
    assert.equal(
      (await api(current.url).get(`/v1/orgs/${tenant.orgId}/members`, { headers: { 'x-api-key': apiKey } })).status,
      200,
    );
    assert.equal((await api(current.url).get(`/v1/install-links/${installToken}`)).status, 200);
  } catch (error) {
    throw new Error(`${(error as Error).message}\nthe upgraded server's log:\n${current.output()}`, { cause: error });
  } finally {
    await stopProcess(current);
  }
  const afterUpgrade = await count();
  // Every migration the previous release lacked (0800, and those added beside it since) was applied, and
  // the tables they created hold nothing yet, but for copies made from what was there: each person's
  // copy of their memberships (1000) holds one row per member, each organization has its owner, and each
  // bot connection its webhook's route (1002).
  const copiedFrom: Record<string, string> = {
    user_memberships: 'members',
    organization_owners: 'organizations',
    messenger_webhook_routes: 'messenger_connections',
  };
  const migrationsOf = async (tree: string) =>
    new Set((await readdir(path.join(tree, 'src/db/migrations'))).filter((name) => name.endsWith('.sql')));
  const previousMigrations = await migrationsOf(previous);
  const added = [...(await migrationsOf(root))].filter((name) => !previousMigrations.has(name));
  assert.ok(added.includes('0800_tenant_keys.sql'));
  for (const table of Object.keys(afterUpgrade).filter((name) => !(name in before))) {
    const source = copiedFrom[table];
    if (source)
      assert.equal(
        afterUpgrade[table],
        before[source],
        `${table}, created by the upgrade, has a row per row of ${source}`,
      );
    else assert.equal(afterUpgrade[table], 0, `${table}, created by the upgrade, is empty`);
    delete afterUpgrade[table];
  }
  const expected = { ...before, schema_migrations: before.schema_migrations! + added.length };
  // Only the write made after the upgrade, and what requests always write, differ.
  for (const table of [
    'memories',
    'memory_blocks',
    'memory_terms',
    'audit_events',
    'rate_limit_counters',
    'sessions',
  ]) {
    assert.ok(
      afterUpgrade[table]! >= before[table]!,
      `${table}: ${before[table]} before, ${afterUpgrade[table]} after`,
    );
    delete (expected as Record<string, number>)[table];
    delete afterUpgrade[table];
  }
  assert.deepEqual(afterUpgrade, expected);
});

async function rowCounts(db: { query: (text: string) => Promise<{ rows: any[] }> }): Promise<Record<string, number>> {
  const { rows } = await db.query(
    `SELECT relname AS name FROM pg_class WHERE relnamespace = 'public'::regnamespace AND relkind = 'r' ORDER BY 1`,
  );
  const counts: Record<string, number> = {};
  for (const { name } of rows) counts[name] = Number((await db.query(`SELECT count(*) AS n FROM "${name}"`)).rows[0].n);
  return counts;
}
