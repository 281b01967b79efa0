// The backup and restore steps of docs/operations.md, run as written: a PostgreSQL instance through
// pg_dump and pg_restore, an embedded one by copying its stopped data directory. What the restored
// instance must give back: the accounts (a password still signs in), the organizations and their members,
// an audit log whose hash chain still verifies, and the secret key's match with the sealed secrets.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import pg from 'pg';
import { createPostgresDatabase, postgresAdminUrl, testBackend } from '../support/app.ts';
import { createOrganization, signUp, type TestUser } from '../support/fixtures.ts';
import { api } from '../support/http.ts';
import { runCli, startServerProcess } from '../support/process.ts';

interface Filled {
  owner: TestUser;
  orgId: string;
}

async function fill(url: string): Promise<Filled> {
  const owner = await signUp(url, 'backup');
  const orgId = await createOrganization(url, owner, 'Backed Up Inc');
  const team = await api(url, owner.token).post(`/v1/orgs/${orgId}/teams`, { name: 'Platform' });
  assert.equal(team.status, 201, team.text);
  return { owner, orgId };
}

/** What a restored instance must answer: the password signs in, the organization and its team are there. */
async function assertRestored(url: string, { owner, orgId }: Filled): Promise<void> {
  const signIn = await api(url).post('/v1/auth/sign-in', { email: owner.email, password: owner.password });
  assert.equal(signIn.status, 200, signIn.text);
  const session = api(url, signIn.body.sessionToken);
  const active = await session.put('/v1/session/active-organization', { organizationId: orgId });
  assert.equal(active.status, 200, active.text);
  const org = await session.get('/v1/org');
  assert.equal(org.status, 200, org.text);
  assert.equal(org.body.organization.name, 'Backed Up Inc');
  const teams = await session.get(`/v1/orgs/${orgId}/teams`);
  assert.deepEqual(
    teams.body.teams.map((team: { name: string }) => team.name),
    ['Platform'],
  );
}

function run(command: string, args: string[]): void {
  const result = spawnSync(command, args, { encoding: 'utf8' });
  assert.equal(result.status, 0, `${command} ${args.join(' ')}:\n${result.stderr}`);
}

test('PostgreSQL: pg_dump -Fc, then pg_restore into an empty database, gives back everything, with the same secret key', {
  skip: testBackend !== 'postgres' && 'the PostgreSQL steps run on the postgres backend',
}, async () => {
  const source = await createPostgresDatabase();
  const targetName = `orgplane_restore_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: postgresAdminUrl });
  await admin.connect();
  const dumpDir = await mkdtemp(path.join(tmpdir(), 'orgplane-backup-'));
  const secretKey = randomBytes(32).toString('base64');
  try {
    const server = await startServerProcess({ DATABASE_URL: source.url, ORGPLANE_SECRET_KEY: secretKey });
    const filled = await fill(server.url);
    await server.stop();

    const dump = path.join(dumpDir, 'orgplane.dump');
    run('pg_dump', ['--format=custom', `--file=${dump}`, source.url]);
    await admin.query(`CREATE DATABASE ${targetName}`);
    const targetUrl = new URL(postgresAdminUrl);
    targetUrl.pathname = `/${targetName}`;
    run('pg_restore', ['--no-owner', `--dbname=${targetUrl}`, dump]);

    const verify = await runCli(['audit', 'verify'], {
      DATABASE_URL: targetUrl.toString(),
      ORGPLANE_SECRET_KEY: secretKey,
    });
    assert.equal(verify.code, 0, verify.output);
    const restored = await startServerProcess({ DATABASE_URL: targetUrl.toString(), ORGPLANE_SECRET_KEY: secretKey });
    try {
      await assertRestored(restored.url, filled);
    } finally {
      await restored.stop();
    }
    // The sealed secrets need the key they were sealed with: another key is refused at start.
    const wrongKey = await runCli(['start'], {
      DATABASE_URL: targetUrl.toString(),
      ORGPLANE_SECRET_KEY: randomBytes(32).toString('base64'),
    });
    assert.equal(wrongKey.code, 1, wrongKey.output);
    assert.match(wrongKey.output, /secret key/i);
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${targetName} WITH (FORCE)`);
    await admin.end();
    await source.drop();
    await rm(dumpDir, { recursive: true, force: true });
  }
});

test('embedded database: a copy of the stopped DATA_DIR (the database and secret.key) gives back everything; without secret.key it refuses to start', {
  skip: testBackend !== 'pglite' && 'the embedded steps run on the pglite backend',
}, async () => {
  const original = await mkdtemp(path.join(tmpdir(), 'orgplane-backup-data-'));
  const restoredDir = await mkdtemp(path.join(tmpdir(), 'orgplane-restore-data-'));
  const keyless = await mkdtemp(path.join(tmpdir(), 'orgplane-restore-keyless-'));
  try {
    const server = await startServerProcess({ DATA_DIR: original });
    const filled = await fill(server.url);
    await server.stop();

    await cp(original, restoredDir, { recursive: true });
    const verify = await runCli(['audit', 'verify'], { DATA_DIR: restoredDir });
    assert.equal(verify.code, 0, verify.output);
    const restored = await startServerProcess({ DATA_DIR: restoredDir });
    try {
      await assertRestored(restored.url, filled);
    } finally {
      await restored.stop();
    }

    await cp(path.join(original, 'pglite'), path.join(keyless, 'pglite'), { recursive: true });
    const withoutKey = await runCli(['start'], { DATA_DIR: keyless });
    assert.equal(withoutKey.code, 1, withoutKey.output);
    assert.match(withoutKey.output, /secret key/i);
  } finally {
    for (const dir of [original, restoredDir, keyless]) await rm(dir, { recursive: true, force: true });
  }
});
