import { packageVersion } from '../../src/version.ts';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { describe, it } from 'node:test';
import { useTenantApp } from '../support/harness.ts';

describe('health, OpenAPI and metrics', () => {
  const harness = useTenantApp();

  it('health, OpenAPI and metrics answer', async () => {
    const health = await harness.as().get('/health');
    assert.deepEqual([health.status, health.body], [200, { status: 'ok', version: packageVersion }]);
    const openapi = await harness.as().get('/openapi.json');
    assert.equal(openapi.body.openapi, '3.1.0');
    // The version package.json names (the one place it is written), not a placeholder.
    const { version } = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8'));
    assert.match(version, /^\d+\.\d+\.\d+/);
    assert.equal(openapi.body.info.version, version);
    for (const tag of [
      'System',
      'Organizations',
      'Invitations',
      'API Keys',
      'SCIM',
      'SSO',
      'Members',
      'Teams',
      'Admin',
      'Users',
      'Bootstrap',
    ]) {
      assert.ok(
        openapi.body.tags.some((t: { name: string }) => t.name === tag),
        `tag ${tag}`,
      );
    }
    assert.ok(openapi.body.paths['/v1/org'].get);
    const docs = await fetch(new URL('/docs', harness.app.url));
    assert.equal(docs.status, 200);
    assert.match(await docs.text(), /swagger/i);
    const metrics = await fetch(new URL('/metrics', harness.app.url));
    assert.match(await metrics.text(), /orgplane_http_request_duration_seconds_bucket/);
  });
});
