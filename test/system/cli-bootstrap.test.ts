// `orgplane bootstrap` applies the rules of POST /v1/bootstrap: input the API would refuse is refused
// here too, with every problem named by its flag, a non-zero exit and nothing created. It once created
// an instance administrator from `--email 'Not An Email'`, who could never sign in.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createPostgresDatabase, testBackend } from '../support/app.ts';
import { api } from '../support/http.ts';
import { runCli, spawnServer, stopProcess } from '../support/process.ts';

describe('orgplane bootstrap', () => {
  const env: Record<string, string> = {};
  let dataDir: string;
  let dropDatabase: (() => Promise<void>) | undefined;
  before(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'orgplane-cli-'));
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

  const valid = {
    '--email': 'ada@example.test',
    '--password': 'a long enough password',
    '--name': 'Ada Admin',
    '--org': 'Analytical Engines',
  };
  const bootstrap = (flags: Record<string, string>) => runCli(['bootstrap', ...Object.entries(flags).flat()], env);

  it('refuses what the API refuses, naming each flag at fault, exits 2 and creates nothing', async () => {
    const all = await bootstrap({ '--email': 'Not An Email', '--password': 'abc', '--name': ' ', '--org': ' ' });
    assert.equal(all.code, 2, all.output);
    assert.match(all.output, /nothing was created/);
    for (const flag of ['--email', '--password', '--name', '--org'])
      assert.match(all.output, new RegExp(`^\\s+${flag}: `, 'm'), flag);
    assert.doesNotMatch(all.output, /sessionToken/);

    const oneWrong: Array<[flag: keyof typeof valid, value: string]> = [
      ['--email', 'Not An Email'],
      ['--email', `${'a'.repeat(310)}@example.test`],
      ['--password', 'seven77'],
      ['--name', '   '],
      ['--name', 'n'.repeat(201)],
      ['--org', '\t'],
      ['--org', 'o'.repeat(201)],
    ];
    await Promise.all(
      oneWrong.map(async ([flag, value]) => {
        const run = await bootstrap({ ...valid, [flag]: value });
        assert.equal(run.code, 2, `${flag}=${value}: ${run.output}`);
        const named = run.output
          .split('\n')
          .filter((line) => /^\s+--\w+: /.test(line))
          .map((line) => line.trim().split(':')[0]);
        assert.deepEqual(named, [flag], run.output);
      }),
    );
  });

  it('then creates the administrator from valid flags (names trimmed as the API does), who can sign in', async () => {
    const created = await bootstrap({ ...valid, '--name': '  Ada Admin  ', '--org': ' Analytical Engines ' });
    // Exit 0 also shows that none of the refused runs above created an organization (bootstrap runs once).
    assert.equal(created.code, 0, created.output);
    const ids = JSON.parse(created.output.slice(created.output.indexOf('{')));
    assert.match(ids.userId, /^usr_/);

    const again = await bootstrap(valid);
    assert.equal(again.code, 1, again.output);
    assert.match(again.output, /already_bootstrapped/);

    const server = await spawnServer(env);
    try {
      assert.ok(await server.healthy, server.output());
      const signIn = await api(server.url).post('/v1/auth/sign-in', {
        email: valid['--email'],
        password: valid['--password'],
      });
      assert.equal(signIn.status, 200, signIn.text);
      assert.equal(signIn.body.user.id, ids.userId);
      assert.equal(signIn.body.user.name, 'Ada Admin');
      assert.equal(signIn.body.user.isInstanceAdmin, true);
      const org = await api(server.url, signIn.body.sessionToken).get('/v1/org');
      assert.equal(org.status, 200, org.text);
      assert.equal(org.body.organization.name, 'Analytical Engines');
    } finally {
      await stopProcess(server);
    }
  });
});
