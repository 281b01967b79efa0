import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { useTenantApp } from '../support/harness.ts';

describe('organizations: documented errors', () => {
  const harness = useTenantApp();

  it('GET /v1/org without an active organization is a generic {error, message}', async () => {
    const response = await harness.as(harness.tenant.outsider.token).get('/v1/org');
    assert.equal(response.status, 404);
    assert.equal(response.body.error, 'organization_not_found');
    assert.equal(typeof response.body.message, 'string');
  });
});
