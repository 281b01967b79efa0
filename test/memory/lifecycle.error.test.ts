// The lifecycle's invalid requests: 400 invalid_request at the faulty field, 404 for an unknown memory,
// 409 for a memory superseded already.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useTenantApp } from '../support/harness.ts';
import type { ApiResponse } from '../support/http.ts';
import { memoryClient } from './helpers.ts';

const t = useTenantApp();
const unknownId = 'mry_01h2xcejqtf2nbrexx3vqjhp41';

function assertInvalid(response: ApiResponse, path: (string | number)[]) {
  assert.equal(response.status, 400, response.text);
  assert.equal(response.body.error, 'invalid_request');
  assert.ok(
    response.body.details.some((detail: { path: unknown[] }) => JSON.stringify(detail.path) === JSON.stringify(path)),
    `a detail at ${JSON.stringify(path)} in ${response.text}`,
  );
}

test('create: bad supersedes, expiresAt, occurredAt, speaker and allowDuplicate are 400 at their field', async () => {
  const memory = memoryClient(t.app.url, t.tenant.member.token);
  const post = (extra: Record<string, unknown>) => memory.client.post('/v1/memory', { content: 'x', ...extra });
  assertInvalid(await post({ supersedes: 'not-an-id' }), ['supersedes']);
  assertInvalid(await post({ supersedes: 'key_01h2xcejqtf2nbrexx3vqjhp41' }), ['supersedes']);
  assertInvalid(await post({ expiresAt: 'tomorrow' }), ['expiresAt']);
  assertInvalid(await post({ expiresAt: '2026-02-30T10:00:00Z' }), ['expiresAt']);
  assertInvalid(await post({ occurredAt: '2026-05-01T10:00:00+02:00' }), ['occurredAt']);
  assertInvalid(await post({ occurredAt: null }), ['occurredAt']);
  assertInvalid(await post({ speaker: '' }), ['speaker']);
  assertInvalid(await post({ speaker: 'x'.repeat(201) }), ['speaker']);
  assertInvalid(await post({ speaker: 'a\u0000b' }), ['speaker']);
  assertInvalid(await post({ allowDuplicate: 'yes' }), ['allowDuplicate']);
  const batch = await memory.client.post('/v1/memory/batch', {
    memories: [{ content: 'fine' }, { content: 'y', expiresAt: 'soon' }],
  });
  assertInvalid(batch, ['memories', 1, 'expiresAt']);
});

test('create: supersedes an unknown memory is 404, one superseded already is 409, and nothing is written', async () => {
  const memory = memoryClient(t.app.url, t.tenant.member.token);
  const before = (await memory.listAll()).length;
  const unknown = await memory.client.post('/v1/memory', { content: 'replacement one', supersedes: unknownId });
  assert.equal(unknown.status, 404, unknown.text);
  assert.equal(unknown.body.error, 'memory_not_found');
  const old = await memory.create({ content: 'the old fact about gliders' });
  const first = await memory.client.post('/v1/memory', { content: 'the new fact about gliders', supersedes: old.id });
  assert.equal(first.status, 201, first.text);
  const again = await memory.client.post('/v1/memory', { content: 'a newer fact about gliders', supersedes: old.id });
  assert.equal(again.status, 409, again.text);
  assert.equal(again.body.error, 'memory_superseded');
  // Two items of one batch superseding the same memory: the batch is refused whole.
  const target = await memory.create({ content: 'a fact about kayaks' });
  const twice = await memory.client.post('/v1/memory/batch', {
    memories: [
      { content: 'kayak fact one', supersedes: target.id },
      { content: 'kayak fact two', supersedes: target.id },
    ],
  });
  assert.equal(twice.status, 409, twice.text);
  assert.equal(twice.body.error, 'memory_superseded');
  assert.equal((await memory.listAll()).length, before + 3);
  assert.deepEqual(
    (await memory.search('kayak')).map((r) => r.id),
    [target.id],
  );
});

test('PATCH: an empty change, unknown fields and bad values are 400; an unknown memory is 404', async () => {
  const memory = memoryClient(t.app.url, t.tenant.member.token);
  const target = await memory.create({ content: 'a memory to change badly' });
  const patch = (body: unknown) => memory.client.patch(`/v1/memory/${target.id}`, body);
  const empty = await patch({});
  assert.equal(empty.status, 400, empty.text);
  assert.equal(empty.body.error, 'invalid_request');
  assertInvalid(await patch({ content: '' }), ['content']);
  assertInvalid(await patch({ content: 'x'.repeat(20_001) }), ['content']);
  assertInvalid(await patch({ content: null }), ['content']);
  assertInvalid(await patch({ tags: 'one' }), ['tags']);
  assertInvalid(await patch({ tags: ['a,b'] }), ['tags', 0]);
  assertInvalid(await patch({ expiresAt: 'never' }), ['expiresAt']);
  assertInvalid(await patch({ occurredAt: 12 }), ['occurredAt']);
  assertInvalid(await patch({ speaker: '' }), ['speaker']);
  const extra = await patch({ source: 'chat' });
  assert.equal(extra.status, 400, extra.text);
  const badId = await memory.client.patch('/v1/memory/nope', { content: 'x' });
  assertInvalid(badId, ['id']);
  const unknown = await memory.client.patch(`/v1/memory/${unknownId}`, { content: 'x' });
  assert.equal(unknown.status, 404, unknown.text);
  assert.equal(unknown.body.error, 'memory_not_found');
  const history = await memory.client.get(`/v1/memory/${unknownId}/history`);
  assert.equal(history.status, 404, history.text);
  assert.equal(history.body.error, 'memory_not_found');
  // Nothing was changed by the refused requests.
  const read = await memory.client.get(`/v1/memory/${target.id}`);
  assert.equal(read.body.memory.version, 1);
});

test('search: bad after, before, now and speaker are 400 at their parameter', async () => {
  const memory = memoryClient(t.app.url, t.tenant.member.token);
  const search = (extra: string) => memory.client.get(`/v1/memory/search?q=x${extra}`);
  assertInvalid(await search('&after=yesterday'), ['after']);
  assertInvalid(await search('&before=2026-13-01T00:00:00Z'), ['before']);
  assertInvalid(await search('&now=2026-05-01'), ['now']);
  assertInvalid(await search(`&speaker=${'x'.repeat(201)}`), ['speaker']);
  assertInvalid(await search('&speaker='), ['speaker']);
});
