import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isValidTimestamp } from '../../src/http/schemas.ts';
import { useTenantApp } from '../support/harness.ts';

describe('requests to the identity routes: validation and body errors', () => {
  const harness = useTenantApp();

  it('validation failures are 400 invalid_request with a detail path per problem', async () => {
    const response = await harness
      .as()
      .post('/v1/auth/sign-up', { email: 'not-an-email', password: 'short', name: '' });
    assert.equal(response.status, 400);
    assert.equal(response.body.error, 'invalid_request');
    const paths = response.body.details.map((d: { path: unknown[] }) => d.path.join('.')).sort();
    assert.deepEqual(paths, ['email', 'name', 'password']);
    for (const detail of response.body.details) assert.equal(typeof detail.message, 'string');
  });

  it('path and query validation point at the parameter', async () => {
    const badId = await harness.as(harness.tenant.owner.token).get('/v1/orgs/not-an-org/members');
    assert.equal(badId.status, 400);
    assert.deepEqual(badId.body.details[0].path, ['organizationId']);
    const badLimit = await harness
      .as(harness.tenant.owner.token)
      .get(`/v1/orgs/${harness.tenant.orgId}/members?limit=1000`);
    assert.equal(badLimit.status, 400);
    assert.deepEqual(badLimit.body.details[0].path, ['limit']);
    // Digits only: coercion would have read each of these as a number.
    for (const limit of ['0x10', '1e1', '%2B5', '%205', '5.0', '']) {
      const notDigits = await harness
        .as(harness.tenant.owner.token)
        .get(`/v1/orgs/${harness.tenant.orgId}/members?limit=${limit}`);
      assert.equal(notDigits.status, 400, limit);
      assert.deepEqual(
        notDigits.body.details,
        [{ message: 'Must be a whole number written in digits', path: ['limit'], in: 'querystring' }],
        limit,
      );
    }
    assert.equal(
      (await harness.as(harness.tenant.owner.token).get(`/v1/orgs/${harness.tenant.orgId}/members?limit=07`)).status,
      200,
    );
    const badCursor = await harness
      .as(harness.tenant.owner.token)
      .get(`/v1/orgs/${harness.tenant.orgId}/members?cursor=garbage`);
    assert.equal(badCursor.status, 400);
    assert.deepEqual(badCursor.body.details[0].path, ['cursor']);
  });

  it('malformed JSON is 400, an unsupported content type 415, an oversized body 413, an unknown route a JSON 404', async () => {
    const client = harness.as(harness.tenant.owner.token);
    const malformed = await client.post('/v1/orgs', undefined, {
      raw: '{"name": ',
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(malformed.status, 400);
    assert.equal(malformed.body.error, 'invalid_request');
    const wrongType = await client.post('/v1/orgs', undefined, {
      raw: 'name=x',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    assert.equal(wrongType.status, 415);
    assert.equal(typeof wrongType.body.error, 'string');
    const plain = await client.post('/v1/orgs', undefined, { raw: 'x', headers: { 'content-type': 'text/plain' } });
    assert.equal(plain.status, 415);
    const huge = await client.post('/v1/orgs', undefined, {
      raw: JSON.stringify({ name: 'x'.repeat(2 * 1024 * 1024) }),
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(huge.status, 413);
    assert.equal(huge.body.error, 'payload_too_large');
    const unknown = await client.get('/v1/nothing-here');
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.error, 'not_found');
  });

  it('a body holding an unpaired surrogate escape is 400 and stores nothing; a paired one is kept as sent', async () => {
    const teams = async () =>
      (await harness.as(harness.tenant.owner.token).get(`/v1/orgs/${harness.tenant.orgId}/teams`)).body.teams.map(
        (team: { name: string }) => team.name,
      );
    const before = await teams();
    const lone: [string, (string | number)[]][] = [
      ['{"name":"Lone \\ud800 high"}', ['name']],
      ['{"name":"Lone \\uDC00 low"}', ['name']],
      ['{"name":"ok","\\ud83d":1}', ['\ud83d']],
    ];
    for (const [raw, path] of lone) {
      const refused = await harness
        .as(harness.tenant.owner.token)
        .post(`/v1/orgs/${harness.tenant.orgId}/teams`, undefined, {
          raw,
          headers: { 'content-type': 'application/json' },
        });
      assert.equal(refused.status, 400, raw);
      assert.equal(refused.body.error, 'invalid_request');
      assert.match(refused.body.message, /unpaired surrogates/);
      assert.deepEqual(refused.body.details[0].path, path, raw);
    }
    assert.deepEqual(await teams(), before, 'nothing was stored, not even with U+FFFD in place of the escape');
    const paired = await harness
      .as(harness.tenant.owner.token)
      .post(`/v1/orgs/${harness.tenant.orgId}/teams`, undefined, {
        raw: '{"name":"Paired \\ud83d\\ude00"}',
        headers: { 'content-type': 'application/json' },
      });
    assert.equal(paired.status, 201, paired.text);
    assert.ok((await teams()).includes('Paired \u{1F600}'));
  });

  it("the shared timestamp format accepts the spec's forms and only real calendar dates", () => {
    // Years below 100 too (year 0 is a leap year, 100 and 1900 are not).
    for (const ok of [
      '0000-02-29T00:00Z',
      '0004-02-29T00:00Z',
      '2024-02-29T10:00Z',
      '2026-01-31T09:30:00Z',
      '2026-01-31T09:30:00.123Z',
      '2026-01-31T09:30:00.123456Z',
      '2026-01-31T09:30:00.1234567890Z',
    ]) {
      assert.ok(isValidTimestamp(ok), ok);
    }
    for (const bad of [
      '0100-02-29T00:00Z',
      '1900-02-29T00:00Z',
      '0001-02-29T00:00Z',
      '2023-02-29T10:00:00Z',
      '2026-04-31T00:00:00Z',
      '2026-01-31T09:30:00+01:00',
      '2026-01-31 09:30Z',
      '2026-13-01T00:00Z',
      '2026-01-01T24:00Z',
      '2026-01-01',
    ]) {
      assert.ok(!isValidTimestamp(bad), bad);
    }
  });
});
