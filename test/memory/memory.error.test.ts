// Memory routes: every invalid request is a 400 invalid_request with paths; unknown ids are 404.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../support/app.ts';
import { createOrganization, signUp } from '../support/fixtures.ts';
import type { ApiResponse } from '../support/http.ts';
import { memoryClient } from './helpers.ts';

let app: TestApp;
let memory: ReturnType<typeof memoryClient>;
before(async () => {
  app = await startTestApp();
  const user = await signUp(app.url, 'errors');
  await createOrganization(app.url, user, 'Errors');
  memory = memoryClient(app.url, user.token);
});
after(async () => {
  await app.close();
});

function assertInvalid(response: ApiResponse, path: (string | number)[]) {
  assert.equal(response.status, 400, response.text);
  assert.equal(response.body.error, 'invalid_request');
  assert.ok(Array.isArray(response.body.details), response.text);
  assert.ok(
    response.body.details.some((detail: { path: unknown[] }) => JSON.stringify(detail.path) === JSON.stringify(path)),
    `a detail at ${JSON.stringify(path)} in ${response.text}`,
  );
}

test('create: content missing, empty, not a string, or over 20,000 characters', async () => {
  assertInvalid(await memory.client.post('/v1/memory', {}), ['content']);
  assertInvalid(await memory.client.post('/v1/memory', { content: '' }), ['content']);
  assertInvalid(await memory.client.post('/v1/memory', { content: 42 }), ['content']);
  assertInvalid(await memory.client.post('/v1/memory', { content: 'x'.repeat(20_001) }), ['content']);
  assertInvalid(await memory.client.post('/v1/memory', { content: 'nul \u0000 inside' }), ['content']);
  assertInvalid(await memory.client.post('/v1/memory', { content: 'ok', tags: ['a\u0000'] }), ['tags', 0]);
  // A lone surrogate, sent as the JSON escape (JSON.stringify would send it the same way).
  const lone = await memory.client.post('/v1/memory', undefined, {
    raw: '{"content":"half \\ud800 a pair"}',
    headers: { 'content-type': 'application/json' },
  });
  assertInvalid(lone, ['content']);
});

test('create: tags over 50, empty, over 64 characters, with a comma, or not strings', async () => {
  const base = { content: 'a note' };
  assertInvalid(
    await memory.client.post('/v1/memory', { ...base, tags: Array.from({ length: 51 }, (_, i) => `t${i}`) }),
    ['tags'],
  );
  assertInvalid(await memory.client.post('/v1/memory', { ...base, tags: ['ok', ''] }), ['tags', 1]);
  assertInvalid(await memory.client.post('/v1/memory', { ...base, tags: ['x'.repeat(65)] }), ['tags', 0]);
  assertInvalid(await memory.client.post('/v1/memory', { ...base, tags: ['a,b'] }), ['tags', 0]);
  assertInvalid(await memory.client.post('/v1/memory', { ...base, tags: [7] }), ['tags', 0]);
  assertInvalid(await memory.client.post('/v1/memory', { ...base, tags: 'solo' }), ['tags']);
});

test('create: source and scope must be short labels; unknown fields are refused', async () => {
  const base = { content: 'a note' };
  assertInvalid(await memory.client.post('/v1/memory', { ...base, source: '' }), ['source']);
  assertInvalid(await memory.client.post('/v1/memory', { ...base, source: 'x'.repeat(65) }), ['source']);
  assertInvalid(await memory.client.post('/v1/memory', { ...base, source: 'has space' }), ['source']);
  assertInvalid(await memory.client.post('/v1/memory', { ...base, scope: '-leading' }), ['scope']);
  assertInvalid(await memory.client.post('/v1/memory', { ...base, scope: 'new\nline' }), ['scope']);
  const unknown = await memory.client.post('/v1/memory', { ...base, title: 'nope' });
  assert.equal(unknown.status, 400, unknown.text);
  assert.equal(unknown.body.error, 'invalid_request');
});

test('create: malformed JSON and a non-object body are 400', async () => {
  const bad = await memory.client.post('/v1/memory', undefined, {
    raw: '{"content":',
    headers: { 'content-type': 'application/json' },
  });
  assert.equal(bad.status, 400, bad.text);
  assert.equal(bad.body.error, 'invalid_request');
  const array = await memory.client.post('/v1/memory', [{ content: 'x' }]);
  assert.equal(array.status, 400, array.text);
  assert.equal(array.body.error, 'invalid_request');
});

test('batch: empty, over 1,000, or one bad item rejects the whole batch with the item path', async () => {
  assertInvalid(await memory.client.post('/v1/memory/batch', {}), ['memories']);
  assertInvalid(await memory.client.post('/v1/memory/batch', { memories: [] }), ['memories']);
  assertInvalid(
    await memory.client.post('/v1/memory/batch', { memories: Array.from({ length: 1001 }, () => ({ content: 'x' })) }),
    ['memories'],
  );
  const before = (await memory.listAll()).length;
  assertInvalid(
    await memory.client.post('/v1/memory/batch', {
      memories: [{ content: 'fine' }, { content: 'fine too' }, { content: 'also fine' }, { content: '' }],
    }),
    ['memories', 3, 'content'],
  );
  assert.equal((await memory.listAll()).length, before, 'nothing of a rejected batch is stored');
});

/** Rows of every memory table: a refused create must leave all of them as they were. */
async function storedRows() {
  const { rows } = await app.db.query<{ memories: number; blocks: number; terms: number; docs: number }>(
    `SELECT (SELECT count(*)::int FROM memories) AS memories, (SELECT count(*)::int FROM memory_blocks) AS blocks,
            (SELECT count(*)::int FROM memory_terms) AS terms, (SELECT coalesce(sum(doc_count), 0)::int FROM memory_banks) AS docs`,
  );
  return rows[0];
}

// U+FDFA is one character that Unicode NFKC normalization (part of the analysis) turns into a
// four-word phrase: 20,000 characters of it pass the length limit but are ~60,000 words, more than
// a posting can count.
const expanding = ['\uFDFA'.repeat(20_000), '\uFDFA '.repeat(10_000)];

test('create: content within 20,000 characters that analyzes to more than 32,767 words is 400 on content, nothing stored', async () => {
  await memory.create({ content: 'a note so that the bank exists' });
  const before = await storedRows();
  for (const content of expanding) {
    const response = await memory.client.post('/v1/memory', { content });
    assertInvalid(response, ['content']);
    assert.match(response.body.details[0].message, /32,767/);
  }
  assert.deepEqual(await storedRows(), before, 'nothing of a refused memory is stored');
});

test('batch: one item that analyzes to too many words rejects the batch with the item path, nothing stored', async () => {
  const before = await storedRows();
  for (const content of expanding) {
    assertInvalid(
      await memory.client.post('/v1/memory/batch', {
        memories: [{ content: 'fine' }, { content }, { content: 'also fine' }],
      }),
      ['memories', 1, 'content'],
    );
  }
  assert.deepEqual(await storedRows(), before, 'nothing of a rejected batch is stored');
});

test('search: a query of 1,000 expanding characters answers normally', async () => {
  const stored = await memory.create({ content: 'A blessing: \uFDFA' });
  for (const q of ['\uFDFA'.repeat(1000), '\uFDFA '.repeat(500)]) {
    const results = await memory.search(q);
    assert.ok(
      results.some((result) => result.id === stored.id),
      JSON.stringify(results),
    );
  }
});

test('search: q missing, empty or over 1,000 characters; limit outside 1..100 or not a number', async () => {
  assertInvalid(await memory.client.get('/v1/memory/search'), ['q']);
  assertInvalid(await memory.client.get('/v1/memory/search?q='), ['q']);
  assertInvalid(await memory.client.get(`/v1/memory/search?q=${'a'.repeat(1001)}`), ['q']);
  for (const limit of ['0', '101', 'ten', '2.5', '-1']) {
    assertInvalid(await memory.client.get(`/v1/memory/search?q=tea&limit=${limit}`), ['limit']);
  }
  const atLimits = await memory.client.get(`/v1/memory/search?q=${'a'.repeat(1000)}&limit=100`);
  assert.equal(atLimits.status, 200, atLimits.text);
});

test('search: bad filters (too many tags, a tag over 64 characters, a bad source or scope)', async () => {
  const many = Array.from({ length: 51 }, (_, i) => `tags=t${i}`).join('&');
  assertInvalid(await memory.client.get(`/v1/memory/search?q=tea&${many}`), ['tags']);
  assertInvalid(await memory.client.get(`/v1/memory/search?q=tea&tags=${'x'.repeat(65)}`), ['tags', 0]);
  assertInvalid(await memory.client.get('/v1/memory/search?q=tea&source=a%20b'), ['source']);
  assertInvalid(await memory.client.get(`/v1/memory/search?q=tea&scope=${'s'.repeat(65)}`), ['scope']);
});

test('list: limit outside 1..100 and cursors this API did not issue', async () => {
  assertInvalid(await memory.client.get('/v1/memory?limit=0'), ['limit']);
  assertInvalid(await memory.client.get('/v1/memory?limit=101'), ['limit']);
  for (const cursor of [
    'garbage',
    Buffer.from('{"after":"x"}').toString('base64url'),
    Buffer.from('{"createdAt":"2026-13-45 99:99:99+00","id":"mry_x"}').toString('base64url'),
    Buffer.from('{"createdAt":"yesterday","id":"mry_x"}').toString('base64url'),
  ]) {
    assertInvalid(await memory.client.get(`/v1/memory?cursor=${cursor}`), ['cursor']);
  }
});

test('get and delete: a malformed id is 400, an unknown one 404 memory_not_found', async () => {
  for (const id of [
    'nope',
    'mem_01m7z3km64f6dr81ecv14djt6g',
    'mry_01m7z3km64f6dr81ecv14djt6',
    'mry_81m7z3km64f6dr81ecv14djt6g',
  ]) {
    assertInvalid(await memory.client.get(`/v1/memory/${id}`), ['id']);
    assertInvalid(await memory.client.delete(`/v1/memory/${id}`), ['id']);
  }
  const unknown = 'mry_01m7z3km64f6dr81ecv14djt6g';
  for (const response of [
    await memory.client.get(`/v1/memory/${unknown}`),
    await memory.client.delete(`/v1/memory/${unknown}`),
  ]) {
    assert.equal(response.status, 404, response.text);
    assert.equal(response.body.error, 'memory_not_found');
    assert.equal(typeof response.body.message, 'string');
  }
});

test('a batch body over 32 MiB is 413 payload_too_large', async () => {
  const content = 'y'.repeat(20_000);
  const raw =
    JSON.stringify({ memories: Array.from({ length: 1000 }, () => ({ content, tags: ['z'.repeat(64)] })) }) +
    ' '.repeat(14 * 1024 * 1024);
  const response = await memory.client.post('/v1/memory/batch', undefined, {
    raw,
    headers: { 'content-type': 'application/json' },
  });
  assert.equal(response.status, 413, response.text.slice(0, 200));
  assert.equal(response.body.error, 'payload_too_large');
});
