import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp } from '../support/app.ts';

describe('GET /metrics', () => {
  let app: TestApp;
  before(async () => {
    app = await startTestApp();
  });
  after(() => app.close());

  const countOf = async (series: string) => {
    const text = await (await fetch(new URL('/metrics', app.url))).text();
    const line = text.split('\n').find((candidate) => candidate.startsWith(`orgplane_http_request_duration_seconds_count{${series}}`));
    return line ? Number(line.split(' ').at(-1)) : 0;
  };

  it('counts each request once under its method, route pattern and status', async () => {
    const health = 'method="GET",route="/health",status="200"';
    const missing = 'method="GET",route="unmatched",status="404"';
    const before = { health: await countOf(health), missing: await countOf(missing) };
    for (let i = 0; i < 3; i += 1) await fetch(new URL('/health', app.url));
    await fetch(new URL('/no/such/route', app.url));
    assert.equal(await countOf(health), before.health + 3);
    assert.equal(await countOf(missing), before.missing + 1);
  });
});
