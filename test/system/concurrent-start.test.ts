// Stateless processes start together: several `orgplane start` at the same moment on a new PostgreSQL
// database all come up (migrations, the secret key check and the queue's own schema each let one
// process at a time do the first-time work).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { createPostgresDatabase, startTestApp, testBackend } from '../support/app.ts';
import { signUp } from '../support/fixtures.ts';
import { api } from '../support/http.ts';
import { spawnServer, stopProcess } from '../support/process.ts';

test('three servers started at once on a new database all become healthy', {
  skip: testBackend !== 'postgres' && 'several processes share only a PostgreSQL database',
}, async () => {
  const database = await createPostgresDatabase();
  const env = { DATABASE_URL: database.url, ORGPLANE_SECRET_KEY: `v1:${randomBytes(32).toString('base64')}` };
  const servers = await Promise.all([1, 2, 3].map(() => spawnServer(env)));
  try {
    const healthy = await Promise.all(servers.map((server) => server.healthy));
    assert.deepEqual(healthy, [true, true, true], servers.map((server) => server.output()).join('\n----\n'));
  } finally {
    await Promise.all(servers.map((server) => stopProcess(server)));
    await database.drop();
  }
});

// The queue's first start is serialized on a session of its own: with a pool of one connection, the
// work it guards still has that connection.
test('a server with a pool of a single connection starts and serves', {
  skip: testBackend !== 'postgres' && 'the pool size applies to PostgreSQL',
}, async () => {
  const app = await startTestApp({ dbPoolSize: 1 });
  try {
    assert.equal((await api(app.url).get('/health')).status, 200);
    const user = await signUp(app.url, 'single');
    assert.equal((await api(app.url, user.token).get('/v1/me')).status, 200);
  } finally {
    await app.close();
  }
});
