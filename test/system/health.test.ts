import { packageVersion } from '../../src/version.ts';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { testBackend } from '../support/app.ts';
import { api } from '../support/http.ts';
import { useAppWithCuttableDatabase } from '../support/cuttable-database.ts';

const onlyPostgres = testBackend !== 'postgres' && 'the embedded database cannot become unreachable';

describe('GET /health while the database goes away and comes back', { skip: onlyPostgres }, () => {
  const cuttable = useAppWithCuttableDatabase({});

  it('answers 200, then 503 while unreachable (other routes 503 too, no crash), then 200 again without a restart', async () => {
    assert.deepEqual((await api(cuttable.app.url).get('/health')).body, { status: 'ok', version: packageVersion });
    await cuttable.proxy.cut();
    const down = await api(cuttable.app.url).get('/health');
    assert.deepEqual([down.status, down.body], [503, { status: 'unavailable', version: packageVersion }]);
    const signIn = await api(cuttable.app.url).post('/v1/auth/sign-in', {
      email: 'a@example.test',
      password: 'whatever',
    });
    assert.equal(signIn.status, 503, signIn.text);
    assert.equal(signIn.body.error, 'service_unavailable');
    await cuttable.proxy.restore();
    let recovered = await api(cuttable.app.url).get('/health');
    for (let attempt = 0; attempt < 20 && recovered.status !== 200; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      recovered = await api(cuttable.app.url).get('/health');
    }
    assert.deepEqual([recovered.status, recovered.body], [200, { status: 'ok', version: packageVersion }]);
  });
});
