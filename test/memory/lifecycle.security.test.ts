// The lifecycle routes see only the caller's own live memories in the active organization: another
// person's memory, an expired one and one of another organization are all "no such memory".
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useTenantApp } from '../support/harness.ts';
import { api, type ApiResponse } from '../support/http.ts';
import { memoryClient } from './helpers.ts';

const t = useTenantApp();
const unknownId = 'mry_01h2xcejqtf2nbrexx3vqjhp41';

test('anonymous callers and tampered tokens get 401 on PATCH and history', async () => {
  const owned = await memoryClient(t.app.url, t.tenant.member.token).create({ content: 'anonymous cannot touch' });
  const headerSets: Record<string, string>[] = [
    {},
    { authorization: `Bearer ${t.tenant.member.token.slice(0, -2)}xx` },
  ];
  for (const headers of headerSets) {
    const patch: ApiResponse = await api(t.app.url).send(
      'PATCH',
      `/v1/memory/${owned.id}`,
      { content: 'x' },
      { headers },
    );
    assert.equal(patch.status, 401, patch.text);
    const history: ApiResponse = await api(t.app.url).send('GET', `/v1/memory/${owned.id}/history`, undefined, {
      headers,
    });
    assert.equal(history.status, 401, history.text);
  }
  const read = await memoryClient(t.app.url, t.tenant.member.token).client.get(`/v1/memory/${owned.id}`);
  assert.equal(read.body.memory.version, 1);
});

test("another person's memory, administrators included, is 404 exactly like a missing one, and stays unchanged", async () => {
  const mine = memoryClient(t.app.url, t.tenant.member.token);
  const secret = await mine.create({ content: 'my private fact about orchids', occurredAt: '2026-04-01T00:00:00Z' });
  const missing = await memoryClient(t.app.url, t.tenant.owner.token).client.patch(`/v1/memory/${unknownId}`, {
    content: 'x',
  });
  for (const token of [
    t.tenant.owner.token,
    t.tenant.admin.token,
    t.tenant.outsider.token,
    t.tenant.otherAdmin.token,
  ]) {
    const other = memoryClient(t.app.url, token);
    const patch = await other.client.patch(`/v1/memory/${secret.id}`, { content: 'overwritten' });
    assert.equal(patch.status, 404, patch.text);
    assert.deepEqual(patch.body, missing.body);
    const history = await other.client.get(`/v1/memory/${secret.id}/history`);
    assert.equal(history.status, 404, history.text);
    assert.equal(history.body.error, 'memory_not_found');
    // Naming it in supersedes does not reach it either.
    const supersede = await other.client.post('/v1/memory', { content: 'replacing theirs', supersedes: secret.id });
    assert.equal(supersede.status, 404, supersede.text);
    // Identical content is not deduplicated against another person's memory.
    const same = await other.client.post('/v1/memory', { content: 'my private fact about orchids' });
    assert.equal(same.status, 201, same.text);
    assert.notEqual(same.body.memory.id, secret.id);
    assert.ok(!(await other.search('orchids', '&after=2026-01-01T00:00:00Z')).some((r) => r.id === secret.id));
  }
  const read = await mine.client.get(`/v1/memory/${secret.id}`);
  assert.equal(read.body.memory.content, 'my private fact about orchids');
  assert.equal(read.body.memory.supersededBy, null);
  assert.equal(read.body.memory.version, 1);
});

test('an expired memory by id is 404 on every route, like a missing one', async () => {
  const mine = memoryClient(t.app.url, t.tenant.member.token);
  const doomed = await mine.create({ content: 'a memory that expires now' });
  const expire = await mine.client.patch(`/v1/memory/${doomed.id}`, { expiresAt: '2001-01-01T00:00:00Z' });
  assert.equal(expire.status, 200, expire.text);
  for (const response of [
    await mine.client.get(`/v1/memory/${doomed.id}`),
    await mine.client.get(`/v1/memory/${doomed.id}/history`),
    await mine.client.patch(`/v1/memory/${doomed.id}`, { expiresAt: null }),
    await mine.client.post('/v1/memory', { content: 'a successor', supersedes: doomed.id }),
    await mine.client.delete(`/v1/memory/${doomed.id}`),
  ]) {
    assert.equal(response.status, 404, response.text);
    assert.equal(response.body.error, 'memory_not_found');
  }
  assert.ok(!(await mine.search('memory expires')).some((r) => r.id === doomed.id));
});

test("a memory of another organization's member is 404 on PATCH and history", async () => {
  const theirs = memoryClient(t.app.url, t.tenant.otherAdmin.token);
  const elsewhere = await theirs.create({ content: 'written in the other organization' });
  const here = memoryClient(t.app.url, t.tenant.member.token);
  assert.equal((await here.client.patch(`/v1/memory/${elsewhere.id}`, { tags: ['x'] })).status, 404);
  assert.equal((await here.client.get(`/v1/memory/${elsewhere.id}/history`)).status, 404);
});

test('query text and time phrases cannot reach into SQL or other banks', async () => {
  const mine = memoryClient(t.app.url, t.tenant.member.token);
  await mine.create({ content: "robert'); DROP TABLE memories;-- yesterday", occurredAt: new Date().toISOString() });
  for (const q of ["'); DROP TABLE memories;-- yesterday", 'in May %', '999 days ago', 'last week OR 1=1']) {
    const response = await mine.client.get(
      `/v1/memory/search?q=${encodeURIComponent(q)}&speaker=${encodeURIComponent("' OR '1'='1")}`,
    );
    assert.equal(response.status, 200, response.text);
    assert.deepEqual(response.body.results, []);
  }
  assert.ok((await mine.listAll()).length > 0);
});
