// Memory bank: create, batch create, list, get and delete, over real HTTP.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../support/app.ts';
import { createOrganization, signUp, type TestUser } from '../support/fixtures.ts';
import type { ApiResponse } from '../support/http.ts';
import { memoryClient } from './helpers.ts';

let app: TestApp;
let user: TestUser;
let orgId: string;
let memory: ReturnType<typeof memoryClient>;
before(async () => {
  app = await startTestApp();
  user = await signUp(app.url, 'keeper');
  orgId = await createOrganization(app.url, user, 'Keepers');
  memory = memoryClient(app.url, user.token);
});
after(async () => {
  await app.close();
});

test('create: 201 with a mry_ id, the documented defaults, tags as a set, the active organization recorded', async () => {
  const created = await memory.create({ content: 'Prefers tea over coffee', tags: ['drinks', 'prefs', 'drinks'] });
  assert.match(created.id, /^mry_[0-7][0-9a-hjkmnp-tv-z]{25}$/);
  assert.equal(created.content, 'Prefers tea over coffee');
  assert.deepEqual(created.tags, ['drinks', 'prefs']);
  assert.equal(created.source, 'api');
  assert.equal(created.scope, 'user');
  assert.equal(created.organizationId, orgId);
  assert.match(created.createdAt, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  assert.equal(created.updatedAt, created.createdAt);

  const fetched = await memory.client.get(`/v1/memory/${created.id}`);
  assert.equal(fetched.status, 200, fetched.text);
  assert.deepEqual(fetched.body.memory, created);
});

test('create keeps source, scope and content exactly, at the 20,000-character and 50-tag limits', async () => {
  const content = `Headline\n${'é'.repeat(19_991)}`;
  assert.equal(content.length, 20_000);
  const tags = Array.from({ length: 50 }, (_, i) => `t${i}-${'x'.repeat(60)}`);
  const created = await memory.create({ content, tags, source: 'chat', scope: 'project:apollo' });
  assert.equal(created.content, content);
  assert.deepEqual(created.tags, tags);
  assert.equal(created.source, 'chat');
  assert.equal(created.scope, 'project:apollo');
});

test('batch: up to 1,000 at once, returned in the order given, each readable', async () => {
  const inputs = Array.from({ length: 1000 }, (_, i) => ({ content: `batch note number ${i}`, tags: [`n${i % 7}`] }));
  const created = await memory.batch(inputs);
  assert.equal(created.length, 1000);
  created.forEach((item, i) => {
    assert.equal(item.content, `batch note number ${i}`);
    assert.deepEqual(item.tags, [`n${i % 7}`]);
  });
  assert.equal(new Set(created.map((item) => item.id)).size, 1000);
  const last = await memory.client.get(`/v1/memory/${created[999]!.id}`);
  assert.equal(last.status, 200);
  assert.equal(last.body.memory.content, 'batch note number 999');
});

test('list: newest first, pages follow nextCursor, every memory exactly once, null cursor at the end', async () => {
  const other = await signUp(app.url, 'lister');
  await createOrganization(app.url, other, 'Listers');
  const client = memoryClient(app.url, other.token);
  const first = await client.batch([{ content: 'one' }, { content: 'two' }, { content: 'three' }]);
  const later: string[] = [];
  for (const content of ['four', 'five', 'six', 'seven']) later.push((await client.create({ content })).id);

  const seen: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const response: ApiResponse = await client.client.get(`/v1/memory?limit=3${cursor ? `&cursor=${cursor}` : ''}`);
    assert.equal(response.status, 200, response.text);
    assert.ok(response.body.memories.length <= 3);
    seen.push(...response.body.memories.map((m: { id: string }) => m.id));
    cursor = response.body.nextCursor;
    pages++;
  } while (cursor);
  assert.equal(pages, 3);
  assert.equal(seen.length, 7);
  assert.equal(new Set(seen).size, 7);
  // The one-by-one creates are newest, in reverse order; the batch (one instant) comes last.
  assert.deepEqual(seen.slice(0, 4), [...later].reverse());
  assert.deepEqual(new Set(seen.slice(4)), new Set(first.map((m) => m.id)));

  const all = await client.listAll();
  for (let i = 1; i < all.length; i++) assert.ok(all[i - 1]!.createdAt >= all[i]!.createdAt);
});

test('list of a user with no memories is empty with a null cursor', async () => {
  const fresh = await signUp(app.url, 'empty');
  const response = await memoryClient(app.url, fresh.token).client.get('/v1/memory');
  assert.equal(response.status, 200, response.text);
  assert.deepEqual(response.body, { memories: [], nextCursor: null });
});

test('delete: 204, then gone from get, list and search; a second delete is 404', async () => {
  const kept = await memory.create({ content: 'The spare key is under the blue flowerpot' });
  const doomed = await memory.create({ content: 'The spare key is in the mailbox' });
  assert.equal((await memory.search('spare key')).length, 2);

  await memory.remove(doomed.id);
  const again = await memory.client.delete(`/v1/memory/${doomed.id}`);
  assert.equal(again.status, 404);
  assert.equal(again.body.error, 'memory_not_found');
  assert.equal((await memory.client.get(`/v1/memory/${doomed.id}`)).status, 404);
  assert.ok(!(await memory.listAll()).some((item) => item.id === doomed.id));
  assert.deepEqual(
    (await memory.search('spare key mailbox')).map((r) => r.id),
    [kept.id],
  );
});

test('a user without an organization keeps memories too, filed under no organization', async () => {
  const loner = await signUp(app.url, 'loner');
  const client = memoryClient(app.url, loner.token);
  const created = await client.create({ content: 'Allergic to peanuts' });
  assert.equal(created.organizationId, null);
  assert.deepEqual(
    (await client.search('peanut allergy')).map((r) => r.id),
    [created.id],
  );
});
