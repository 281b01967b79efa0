// GET /health (liveness, with the version) and GET /ready (readiness: database, migrations, workers).
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, test } from 'node:test';
import { packageVersion } from '../../src/version.ts';
import { startTestApp, testBackend, type TestApp } from '../support/app.ts';
import { api } from '../support/http.ts';
import { useAppWithCuttableDatabase } from '../support/cuttable-database.ts';

const { version } = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8'));

describe('a process that runs the workers', () => {
  let app: TestApp;
  before(async () => {
    app = await startTestApp({ runWorkers: true });
  });
  after(async () => {
    await app.close();
  });

  test('/health is 200 with the version of package.json, anonymously', async () => {
    assert.equal(packageVersion, version);
    const health = await api(app.url).get('/health');
    assert.deepEqual([health.status, health.body], [200, { status: 'ok', version }]);
  });

  test('/ready is 200 with every check ok, anonymously; a credential changes nothing', async () => {
    const ready = await api(app.url).get('/ready');
    assert.deepEqual(
      [ready.status, ready.body],
      [200, { status: 'ok', checks: { database: 'ok', migrations: 'ok', workers: 'ok' } }],
    );
    const withBadToken = await api(app.url, 'ops_not_a_token').get('/ready');
    assert.equal(withBadToken.status, 200);
  });

  test('/ready is 503 naming the migrations while one of the build is not applied, and 200 again after', async () => {
    const { rows } = await app.db.query<{ name: string }>(
      'SELECT name FROM schema_migrations ORDER BY name DESC LIMIT 1',
    );
    const latest = rows[0]!.name;
    await app.db.query('DELETE FROM schema_migrations WHERE name = $1', [latest]);
    try {
      const ready = await api(app.url).get('/ready');
      assert.deepEqual(
        [ready.status, ready.body],
        [503, { status: 'unavailable', checks: { database: 'ok', migrations: 'pending', workers: 'ok' } }],
      );
      // Liveness is not readiness: the process is alive.
      assert.equal((await api(app.url).get('/health')).status, 200);
    } finally {
      await app.db.query('INSERT INTO schema_migrations (name) VALUES ($1)', [latest]);
    }
    assert.equal((await api(app.url).get('/ready')).status, 200);
  });

  test('/ready says nothing about tenants: its body is the three checks, and the OpenAPI documents both routes', async () => {
    const ready = await api(app.url).get('/ready');
    assert.deepEqual(Object.keys(ready.body.checks).sort(), ['database', 'migrations', 'workers']);
    const document = (await api(app.url).get('/openapi.json')).body;
    for (const [path, operationId] of [
      ['/health', 'health'],
      ['/ready', 'ready'],
    ] as const) {
      const operation = document.paths[path].get;
      assert.equal(operation.operationId, operationId);
      assert.deepEqual(operation.tags, ['System']);
      assert.deepEqual(Object.keys(operation.responses).sort(), ['200', '503']);
    }
  });
});

test('a process that runs no workers is ready: the workers check is not_configured', async () => {
  const app = await startTestApp({ runWorkers: false });
  try {
    const ready = await api(app.url).get('/ready');
    assert.deepEqual(
      [ready.status, ready.body],
      [200, { status: 'ok', checks: { database: 'ok', migrations: 'ok', workers: 'not_configured' } }],
    );
  } finally {
    await app.close();
  }
});

describe('/ready while the database goes away', {
  skip: testBackend !== 'postgres' && 'the embedded database cannot become unreachable',
}, () => {
  const cuttable = useAppWithCuttableDatabase({ runWorkers: false });

  test('503 naming the database (migrations unknown), /health 503 with the version; 200 once it is back', async () => {
    await cuttable.proxy.cut();
    const ready = await api(cuttable.app.url).get('/ready');
    assert.deepEqual(
      [ready.status, ready.body],
      [
        503,
        {
          status: 'unavailable',
          checks: { database: 'unreachable', migrations: 'unknown', workers: 'not_configured' },
        },
      ],
    );
    const health = await api(cuttable.app.url).get('/health');
    assert.deepEqual([health.status, health.body], [503, { status: 'unavailable', version }]);
    await cuttable.proxy.restore();
    let recovered = await api(cuttable.app.url).get('/ready');
    for (let attempt = 0; attempt < 20 && recovered.status !== 200; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      recovered = await api(cuttable.app.url).get('/ready');
    }
    assert.equal(recovered.status, 200, recovered.text);
  });
});
