import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { signUp } from '../support/fixtures.ts';
import { useTenantApp } from '../support/harness.ts';

describe('request ids', () => {
  const t = useTenantApp({ tenant: false });

  it('every answer carries x-request-id (success, 400, 401, 404), and the log lines of that request carry the same id', async () => {
    const user = await signUp(t.app.url, 'request-id');
    const answers = [
      await t.as(user.token).get('/v1/me'),
      await t.as(user.token).post('/v1/orgs', { name: '' }),
      await t.as().get('/v1/me'),
      await t.as().get('/v1/no-such-route'),
    ];
    assert.deepEqual(
      answers.map((answer) => answer.status),
      [200, 400, 401, 404],
    );
    const ids = answers.map((answer) => answer.headers.get('x-request-id'));
    for (const id of ids) assert.match(id ?? '', /^[0-9a-f-]{36}$/);
    assert.equal(new Set(ids).size, ids.length, 'each request has its own id');
    for (const id of ids) {
      const lines = t.app.logLines.filter((line) => line.reqId === id);
      assert.ok(
        lines.some((line) => line.msg === 'request completed'),
        `a completion line for ${id}`,
      );
    }
  });

  it('a harmless id sent by the caller is kept; anything else is replaced', async () => {
    const kept = await t.as().get('/health', { headers: { 'x-request-id': 'trace-42.a:b' } });
    assert.equal(kept.headers.get('x-request-id'), 'trace-42.a:b');
    const replaced = await t.as().get('/health', { headers: { 'x-request-id': 'bad id with spaces' } });
    assert.match(replaced.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
  });
});
