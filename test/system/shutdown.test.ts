import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { createPostgresDatabase, testBackend } from '../support/app.ts';
import { uniqueEmail } from '../support/fixtures.ts';
import { startServerProcess, type ServerProcess } from '../support/process.ts';

describe('graceful shutdown on SIGTERM', () => {
  let server: ServerProcess;
  let dropDatabase: (() => Promise<void>) | undefined;
  before(async () => {
    const env: Record<string, string> = {};
    if (testBackend === 'postgres') {
      const database = await createPostgresDatabase();
      env.DATABASE_URL = database.url;
      dropDatabase = database.drop;
    }
    server = await startServerProcess(env);
  });
  after(async () => {
    await server.stop('SIGKILL');
    await dropDatabase?.();
  });

  it('finishes a request that is in flight when SIGTERM arrives, then exits 0', async () => {
    const email = uniqueEmail('inflight');
    const body = JSON.stringify({ email, password: 'a long enough password', name: 'In Flight' });
    const half = Math.floor(body.length / 2);
    const response = new Promise<{ status: number; text: string }>((resolve, reject) => {
      const outgoing = request(
        `${server.url}/v1/auth/sign-up`,
        {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        },
        (incoming) => {
          let text = '';
          incoming.on('data', (chunk) => (text += chunk));
          incoming.on('end', () => resolve({ status: incoming.statusCode ?? 0, text }));
        },
      );
      outgoing.on('error', reject);
      outgoing.write(body.slice(0, half));
      // The rest of the body arrives only after the server was told to stop.
      setTimeout(() => {
        server.child.kill('SIGTERM');
        setTimeout(() => outgoing.end(body.slice(half)), 300);
      }, 300);
    });
    const finished = await response;
    assert.equal(finished.status, 201, finished.text);
    assert.equal(JSON.parse(finished.text).user.email, email);
    assert.equal(await server.exited, 0, server.output());
    assert.match(server.output(), /shutting down/);
  });
});
