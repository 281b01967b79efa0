import { packageVersion } from '../../src/version.ts';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createPostgresDatabase, startTestApp, testBackend, type TestApp } from '../support/app.ts';
import { api } from '../support/http.ts';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.ts';

const onlyPostgres = testBackend !== 'postgres' && 'the embedded database cannot become unreachable';

describe('GET /health while the database goes away and comes back', { skip: onlyPostgres }, () => {
  let app: TestApp;
  let proxy: TcpProxy;
  let dropDatabase: () => Promise<void>;
  before(async () => {
    const database = await createPostgresDatabase();
    dropDatabase = database.drop;
    const url = new URL(database.url);
    proxy = await startTcpProxy(url.hostname, Number(url.port || 5432));
    url.host = `127.0.0.1:${proxy.port}`;
    app = await startTestApp({ databaseUrl: url.toString() });
  });
  after(async () => {
    await proxy.restore().catch(() => {});
    await app.close();
    await proxy.close();
    await dropDatabase();
  });

  it('answers 200, then 503 while unreachable (other routes 503 too, no crash), then 200 again without a restart', async () => {
    assert.deepEqual((await api(app.url).get('/health')).body, { status: 'ok', version: packageVersion });
    await proxy.cut();
    const down = await api(app.url).get('/health');
    assert.deepEqual([down.status, down.body], [503, { status: 'unavailable', version: packageVersion }]);
    const signIn = await api(app.url).post('/v1/auth/sign-in', { email: 'a@example.test', password: 'whatever' });
    assert.equal(signIn.status, 503, signIn.text);
    assert.equal(signIn.body.error, 'service_unavailable');
    await proxy.restore();
    let recovered = await api(app.url).get('/health');
    for (let attempt = 0; attempt < 20 && recovered.status !== 200; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      recovered = await api(app.url).get('/health');
    }
    assert.deepEqual([recovered.status, recovered.body], [200, { status: 'ok', version: packageVersion }]);
  });
});
