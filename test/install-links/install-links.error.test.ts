// Install links: invalid input, unknown and rotated tokens, and the database-backed rate limits
// (which must hold across processes sharing one database).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp } from '../support/app.ts';
import { useTenantApp } from '../support/harness.ts';
import { api } from '../support/http.ts';
import { inOneWindow } from '../support/rate-windows.ts';
import { lookupLimit } from '../../src/modules/install-links/service.ts';

const t = useTenantApp();

const path = (orgId: string) => `/v1/orgs/${orgId}/install-links`;
const countLinks = async (orgId: string) =>
  Number(
    (await t.app.db.query('SELECT count(*)::int AS n FROM install_links WHERE organization_id = $1', [orgId])).rows[0]
      .n,
  );

test('invalid bodies and ids are 400 invalid_request with details', async () => {
  const client = api(t.app.url, t.tenant.admin.token);
  for (const body of [{ rotate: 'yes' }, { rotate: 1 }, { rotation: true }, [true]]) {
    const response = await client.post(path(t.tenant.orgId), body);
    assert.equal(response.status, 400, JSON.stringify(body));
    assert.equal(response.body.error, 'invalid_request');
    assert.ok(Array.isArray(response.body.details) && response.body.details.length > 0);
  }
  const badJson = await client.post(path(t.tenant.orgId), undefined, {
    raw: '{"rotate":',
    headers: { 'content-type': 'application/json' },
  });
  assert.equal(badJson.status, 400);
  assert.equal(badJson.body.error, 'invalid_request');
  const badId = await client.post('/v1/orgs/not-an-org/install-links', {});
  assert.equal(badId.status, 400);
  assert.equal(badId.body.error, 'invalid_request');
});

test('unknown, malformed and tampered tokens are 404 install_link_not_found', async () => {
  const { body } = await api(t.app.url, t.tenant.member.token).post(path(t.tenant.orgId), {});
  const flipped = body.token.slice(0, -1) + (body.token.endsWith('A') ? 'B' : 'A');
  for (const token of [`opl_${'A'.repeat(43)}`, 'nope', flipped, `${body.token}x`, encodeURIComponent("' OR 1=1 --")]) {
    const response = await api(t.app.url).get(`/v1/install-links/${token}`);
    assert.equal(response.status, 404, token);
    assert.deepEqual(response.body, {
      error: 'install_link_not_found',
      message: 'This install link is no longer valid',
    });
  }
  const tooLong = await api(t.app.url).get(`/v1/install-links/${'a'.repeat(600)}`);
  assert.equal(tooLong.status, 414);
  assert.equal(typeof tooLong.body.error, 'string');
});

test('minting is limited per member: 429 rate_limited with message and headers, and no link is made', async () => {
  // The member already minted in the previous test; exhaust the rest of their window.
  const client = api(t.app.url, t.tenant.member.token);
  let last;
  for (let i = 0; i < 25; i++) {
    last = await client.post(path(t.tenant.orgId), {});
    if (last.status === 429) break;
    assert.equal(last.status, 201, last.text);
  }
  assert.equal(last!.status, 429);
  assert.equal(last!.body.error, 'rate_limited');
  assert.match(last!.body.message, /try again in \d+ seconds/);
  const retryAfter = Number(last!.headers.get('retry-after'));
  assert.ok(retryAfter > 0 && retryAfter <= 3600);
  assert.equal(last!.headers.get('ratelimit-limit'), '20');
  assert.equal(last!.headers.get('ratelimit-remaining'), '0');
  assert.equal(last!.headers.get('ratelimit-reset'), String(retryAfter));
  const before = await countLinks(t.tenant.orgId);
  assert.equal((await client.post(path(t.tenant.orgId), {})).status, 429);
  assert.equal(await countLinks(t.tenant.orgId), before);
  // The limit is per member: the admin of the same organization still mints.
  assert.equal((await api(t.app.url, t.tenant.admin.token).post(path(t.tenant.orgId), {})).status, 201);
});

test('desktop configuration lookups are limited per client address', async () => {
  const { body } = await api(t.app.url, t.tenant.owner.token).post(path(t.tenant.orgId), {});
  // The limit counts in fixed 60-second windows: a run that a window's end cuts in two runs again, whole.
  await inOneWindow(lookupLimit.windowSeconds, async () => {
    let last;
    for (let i = 0; i < 70; i++) {
      last = await api(t.app.url).get(`/v1/install-links/${body.token}`);
      if (last.status === 429) break;
      assert.equal(last.status, 200, last.text);
    }
    assert.equal(last!.status, 429);
    assert.equal(last!.body.error, 'rate_limited');
    assert.ok(last!.body.message);
    assert.ok(Number(last!.headers.get('retry-after')) > 0);
    assert.equal(last!.headers.get('ratelimit-limit'), '60');
  });
});

// Two app instances with their own limiter objects over one database (on PGlite the same in-process database).
test('the mint limit holds across two app instances sharing one database', async () => {
  const second = await startTestApp({}, { shareDatabaseWith: t.app });
  try {
    const client1 = api(t.app.url, t.tenant.otherAdmin.token);
    const client2 = api(second.url, t.tenant.otherAdmin.token);
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) {
      statuses.push((await client1.post(path(t.tenant.otherOrgId), {})).status);
      statuses.push((await client2.post(path(t.tenant.otherOrgId), {})).status);
    }
    assert.equal(statuses.filter((s) => s === 201).length, 20);
    assert.equal(statuses.filter((s) => s === 429).length, 2);
  } finally {
    await second.close();
  }
});
