import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { useTenantApp } from '../support/harness.ts';

describe('GET /metrics', () => {
  const t = useTenantApp({ tenant: false });

  const countOf = async (series: string) => {
    const text = await (await fetch(new URL('/metrics', t.app.url))).text();
    const line = text
      .split('\n')
      .find((candidate) => candidate.startsWith(`orgplane_http_request_duration_seconds_count{${series}}`));
    return line ? Number(line.split(' ').at(-1)) : 0;
  };

  it('counts each request once under its method, route pattern and status', async () => {
    const health = 'method="GET",route="/health",status="200"';
    const missing = 'method="GET",route="unmatched",status="404"';
    const before = { health: await countOf(health), missing: await countOf(missing) };
    for (let i = 0; i < 3; i += 1) await fetch(new URL('/health', t.app.url));
    // Under /v1: other unclaimed GET paths are the console's (its pages are routed in the browser).
    await fetch(new URL('/v1/no/such/route', t.app.url));
    assert.equal(await countOf(health), before.health + 3);
    assert.equal(await countOf(missing), before.missing + 1);
  });
});
