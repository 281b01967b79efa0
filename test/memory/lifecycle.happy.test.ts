// The memory lifecycle: changes with history, supersession, expiry and its pruning, same-content
// deduplication, when it happened and who said it, and time phrases in a search.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createOrganization, signUp } from '../support/fixtures.ts';
import { useTenantApp } from '../support/harness.ts';
import { checkTenantRouting } from '../db/tenant-routing.ts';
import { pruneExpiredMemories } from '../../src/modules/memory/expiry-worker.ts';
import { readTimePhrase } from '../../src/modules/memory/time-phrases.ts';
import { memoryClient } from './helpers.ts';

const tenantRouting = checkTenantRouting();
const t = useTenantApp();

async function freshUser(label: string) {
  const user = await signUp(t.app.url, label);
  await createOrganization(t.app.url, user, `${label} org`);
  return { ...memoryClient(t.app.url, user.token), userId: user.userId };
}

const ids = (results: { id: string }[]) => results.map((r) => r.id);

test('PATCH changes content, tags, expiry, occurredAt and speaker; each change keeps the version before it', async () => {
  const memory = await freshUser('changer');
  const created = await memory.create({ content: 'The boat is moored at pier seven', tags: ['boat'] });
  assert.equal(created.version, 1);

  const changed = await memory.client.patch(`/v1/memory/${created.id}`, {
    content: 'The boat is moored at the marina, berth twelve',
  });
  assert.equal(changed.status, 200, changed.text);
  assert.equal(changed.body.memory.id, created.id);
  assert.equal(changed.body.memory.version, 2);
  assert.equal(changed.body.memory.createdAt, created.createdAt);
  assert.deepEqual(changed.body.memory.tags, ['boat']);
  // The index follows the change at once: the new words find it, the old ones no longer do.
  assert.deepEqual(ids(await memory.search('marina berth')), [created.id]);
  assert.deepEqual(await memory.search('pier seven'), []);

  const occurredAt = '2026-05-04T10:00:00.000Z';
  const second = await memory.client.patch(`/v1/memory/${created.id}`, {
    tags: ['boat', 'harbour', 'boat'],
    occurredAt,
    speaker: 'Ana',
  });
  assert.equal(second.status, 200, second.text);
  assert.deepEqual(second.body.memory.tags, ['boat', 'harbour']);
  assert.equal(second.body.memory.occurredAt, occurredAt);
  assert.equal(second.body.memory.speaker, 'Ana');
  assert.equal(second.body.memory.version, 3);
  assert.deepEqual(ids(await memory.search('marina', '&tags=harbour')), [created.id]);

  const cleared = await memory.client.patch(`/v1/memory/${created.id}`, { speaker: null, occurredAt: null });
  assert.equal(cleared.status, 200, cleared.text);
  assert.equal(cleared.body.memory.speaker, null);
  assert.equal(cleared.body.memory.occurredAt, null);

  const history = await memory.client.get(`/v1/memory/${created.id}/history`);
  assert.equal(history.status, 200, history.text);
  const versions = history.body.versions as {
    version: number;
    content: string;
    tags: string[];
    changedAt: string;
    changedBy: string;
  }[];
  assert.deepEqual(
    versions.map((v) => [v.version, v.content, v.tags]),
    [
      [1, 'The boat is moored at pier seven', ['boat']],
      [2, 'The boat is moored at the marina, berth twelve', ['boat']],
      [3, 'The boat is moored at the marina, berth twelve', ['boat', 'harbour']],
      [4, 'The boat is moored at the marina, berth twelve', ['boat', 'harbour']],
    ],
  );
  assert.ok(versions.every((v) => v.changedBy === memory.userId));
  assert.equal(versions[0]!.changedAt, created.createdAt);
  const times = versions.map((v) => v.changedAt);
  assert.deepEqual([...times].sort(), times);
  // A memory never changed has one version: itself.
  const plain = await memory.create({ content: 'untouched note about kites' });
  const single = await memory.client.get(`/v1/memory/${plain.id}/history`);
  assert.deepEqual(
    single.body.versions.map((v: { version: number; content: string }) => [v.version, v.content]),
    [[1, 'untouched note about kites']],
  );
});

test('deleting a memory deletes its history: a 404, and no stored version keeps an earlier text', async () => {
  const memory = await freshUser('forgetter');
  const kept = await memory.create({ content: 'Locker combination is 4417' });
  const doomed = await memory.create({ content: 'Safe combination is 8203 since spring' });
  for (const content of ['Safe combination is 9310 since summer', 'Safe combination is 5126 since autumn'])
    assert.equal((await memory.client.patch(`/v1/memory/${doomed.id}`, { content })).status, 200);
  assert.equal((await memory.client.patch(`/v1/memory/${kept.id}`, { tags: ['locker'] })).status, 200);
  const versionsHolding = async (text: string) =>
    (
      await t.app.db.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM memory_versions WHERE user_id = $1 AND strpos(content, $2) > 0',
        [memory.userId, text],
      )
    ).rows[0]!.n;
  assert.equal(await versionsHolding('8203'), 1);
  assert.equal(await versionsHolding('9310'), 1);

  await memory.remove(doomed.id);
  const history = await memory.client.get(`/v1/memory/${doomed.id}/history`);
  assert.equal(history.status, 404, history.text);
  assert.equal(history.body.error, 'memory_not_found');
  assert.equal(await versionsHolding('8203'), 0);
  assert.equal(await versionsHolding('9310'), 0);
  // The other memory of the bank keeps its own history.
  const other = await memory.client.get(`/v1/memory/${kept.id}/history`);
  assert.deepEqual(
    other.body.versions.map((v: { version: number; tags: string[] }) => [v.version, v.tags]),
    [
      [1, []],
      [2, ['locker']],
    ],
  );
});

test('a memory that supersedes another: the old one leaves search but stays readable, with its history', async () => {
  const memory = await freshUser('superseder');
  const old = await memory.create({ content: 'Sam prefers tea in the morning' });
  const created = await memory.client.post('/v1/memory', {
    content: 'Sam switched to coffee in the morning',
    supersedes: old.id,
  });
  assert.equal(created.status, 201, created.text);
  assert.deepEqual(ids(await memory.search('Sam morning')), [created.body.memory.id]);
  const read = await memory.client.get(`/v1/memory/${old.id}`);
  assert.equal(read.status, 200, read.text);
  assert.equal(read.body.memory.supersededBy, created.body.memory.id);
  const history = await memory.client.get(`/v1/memory/${old.id}/history`);
  assert.deepEqual(
    history.body.versions.map((v: { content: string }) => v.content),
    ['Sam prefers tea in the morning'],
  );
  // Deleting the new one does not bring the old one back into search: it stays superseded.
  await memory.remove(created.body.memory.id);
  assert.deepEqual(await memory.search('Sam morning'), []);
});

test('the same content as a live memory returns that one (200, deduplicated) unless allowDuplicate', async () => {
  const memory = await freshUser('dedup');
  const first = await memory.client.post('/v1/memory', { content: 'Gate code is 1234.' });
  assert.equal(first.status, 201, first.text);
  assert.equal(first.body.deduplicated, false);
  // Case, spacing and punctuation do not make a new memory.
  const again = await memory.client.post('/v1/memory', { content: '  gate CODE is: 1234 ', tags: ['ignored'] });
  assert.equal(again.status, 200, again.text);
  assert.equal(again.body.deduplicated, true);
  assert.equal(again.body.memory.id, first.body.memory.id);
  assert.deepEqual(again.body.memory.tags, []);
  // A word more is another memory.
  const other = await memory.client.post('/v1/memory', { content: 'Gate code is 1234 now' });
  assert.equal(other.status, 201, other.text);
  const forced = await memory.client.post('/v1/memory', { content: 'Gate code is 1234.', allowDuplicate: true });
  assert.equal(forced.status, 201, forced.text);
  assert.notEqual(forced.body.memory.id, first.body.memory.id);

  // Within and across a batch.
  const batch = await memory.client.post('/v1/memory/batch', {
    memories: [
      { content: 'gate code is 1234' },
      { content: 'Bins go out on Tuesday' },
      { content: 'bins go out on tuesday!' },
      { content: 'Bins go out on Tuesday', allowDuplicate: true },
    ],
  });
  assert.equal(batch.status, 201, batch.text);
  assert.deepEqual(batch.body.deduplicated, [true, false, true, false]);
  const [a, b, c, d] = batch.body.memories as { id: string }[];
  assert.equal(a!.id, first.body.memory.id);
  assert.equal(c!.id, b!.id);
  assert.notEqual(d!.id, b!.id);
  assert.equal((await memory.listAll()).length, 5);

  // An expired or superseded memory is not live: once none with the content is, it is created anew.
  await memory.client.patch(`/v1/memory/${b!.id}`, { expiresAt: '2020-01-01T00:00:00Z' });
  const toLive = await memory.client.post('/v1/memory', { content: 'Bins go out on Tuesday' });
  assert.equal(toLive.status, 200, toLive.text);
  assert.equal(toLive.body.memory.id, d!.id);
  const replacement = await memory.client.post('/v1/memory', {
    content: 'Bins go out on Wednesday',
    supersedes: d!.id,
  });
  assert.equal(replacement.status, 201, replacement.text);
  const renewed = await memory.client.post('/v1/memory', { content: 'Bins go out on Tuesday' });
  assert.equal(renewed.status, 201, renewed.text);
  assert.ok(![b!.id, d!.id].includes(renewed.body.memory.id));
  // Another user's identical content is theirs, never a match.
  const someone = await freshUser('dedup-other');
  const theirs = await someone.client.post('/v1/memory', { content: 'Gate code is 1234.' });
  assert.equal(theirs.status, 201, theirs.text);
});

test('expiry: an expired memory leaves search, lists and reads at once, and the worker deletes it later', async () => {
  const memory = await freshUser('expiry');
  const future = new Date(Date.now() + 3_600_000).toISOString();
  const lasting = await memory.create({ content: 'Parcel locker pin 9921', expiresAt: future });
  assert.equal(lasting.expiresAt, future);
  const doomed = await memory.create({ content: 'Parcel locker pin 5550' });
  const changed = await memory.client.patch(`/v1/memory/${doomed.id}`, { content: 'Parcel locker pin 5551' });
  assert.equal(changed.status, 200, changed.text);
  assert.deepEqual(new Set(ids(await memory.search('parcel locker pin'))), new Set([lasting.id, doomed.id]));

  const expired = await memory.client.patch(`/v1/memory/${doomed.id}`, { expiresAt: new Date().toISOString() });
  assert.equal(expired.status, 200, expired.text);
  assert.deepEqual(ids(await memory.search('parcel locker pin')), [lasting.id]);
  assert.deepEqual(ids(await memory.listAll()), [lasting.id]);
  assert.equal((await memory.client.get(`/v1/memory/${doomed.id}`)).status, 404);

  const count = async (sql: string) =>
    (await t.app.db.query<{ n: number }>(sql, [memory.userId, doomed.id])).rows[0]!.n;
  const rows = 'SELECT count(*)::int AS n FROM memories WHERE user_id = $1 AND id = $2';
  const versions = 'SELECT count(*)::int AS n FROM memory_versions WHERE user_id = $1 AND memory_id = $2';
  assert.equal(await count(rows), 1);
  assert.equal(await count(versions), 2);
  const pruned = await pruneExpiredMemories(t.app.db);
  assert.ok(pruned.pruned >= 1, JSON.stringify(pruned));
  assert.equal(await count(rows), 0);
  assert.equal(await count(versions), 0);
  // The ranking statistics no longer count it: scores equal a bank that never had it.
  const twin = await freshUser('expiry-twin');
  await twin.create({ content: 'Parcel locker pin 9921' });
  assert.deepEqual(
    (await memory.search('parcel locker pin')).map((r) => r.score),
    (await twin.search('parcel locker pin')).map((r) => r.score),
  );
  assert.equal((await memory.client.get(`/v1/memory/${lasting.id}`)).status, 200);
});

test('occurredAt and speaker: search filters after, before and speaker', async () => {
  const memory = await freshUser('when-who');
  const [may1, may20, june] = await memory.batch([
    { content: 'We agreed to ship the beta', occurredAt: '2026-05-01T09:00:00Z', speaker: 'Lena' },
    { content: 'We agreed to delay the beta', occurredAt: '2026-05-20T09:00:00Z', speaker: 'Omar' },
    { content: 'We agreed the beta is done', occurredAt: '2026-06-02T09:00:00Z', speaker: 'Lena' },
  ]);
  const found = async (extra: string) => new Set(ids(await memory.search('agreed beta', `&limit=100${extra}`)));
  assert.deepEqual(await found(''), new Set([may1!.id, may20!.id, june!.id]));
  assert.deepEqual(await found('&after=2026-05-10T00:00:00Z'), new Set([may20!.id, june!.id]));
  assert.deepEqual(await found('&before=2026-05-20T09:00:00Z'), new Set([may1!.id]));
  assert.deepEqual(
    await found('&after=2026-05-01T09:00:00Z&before=2026-06-01T00:00:00Z'),
    new Set([may1!.id, may20!.id]),
  );
  assert.deepEqual(await found('&speaker=lena'), new Set([may1!.id, june!.id]));
  assert.deepEqual(await found('&speaker=Lena&after=2026-05-10T00:00:00Z'), new Set([june!.id]));
  assert.deepEqual(await found('&speaker=Nobody'), new Set());
});

test('a time phrase in q becomes a window on when memories happened, relative to now', async () => {
  const memory = await freshUser('phrases');
  const [yesterday, lastWeek, inMay] = await memory.batch([
    { content: 'Dinner with Priya at the noodle place', occurredAt: '2026-07-14T19:00:00Z' },
    { content: 'Dinner with Priya at the taco stand', occurredAt: '2026-07-09T19:00:00Z' },
    { content: 'Dinner with Priya at the pizza bar', occurredAt: '2026-05-12T19:00:00Z' },
  ]);
  const now = '&now=2026-07-15T08:00:00Z';
  const search = async (q: string) => {
    const response = await memory.client.get(`/v1/memory/search?q=${encodeURIComponent(q)}${now}&limit=100`);
    assert.equal(response.status, 200, response.text);
    return response.body;
  };
  const y = await search('where did I have dinner with Priya yesterday');
  assert.deepEqual(ids(y.results), [yesterday!.id]);
  assert.deepEqual(y.time, {
    phrase: 'yesterday',
    after: '2026-07-14T00:00:00.000Z',
    before: '2026-07-15T00:00:00.000Z',
  });
  assert.deepEqual(
    new Set(ids((await search('dinner with Priya last week')).results)),
    new Set([yesterday!.id, lastWeek!.id]),
  );
  assert.deepEqual(ids((await search('dinner with Priya in May')).results), [inMay!.id]);
  assert.deepEqual(ids((await search('dinner 6 days ago')).results), [lastWeek!.id]);
  const plain = await search('dinner with Priya');
  assert.equal(plain.time, null);
  assert.equal(plain.results.length, 3);
  // Without now, the server's clock: none of these happened yesterday.
  const today = await memory.client.get(`/v1/memory/search?q=${encodeURIComponent('dinner yesterday')}`);
  assert.deepEqual(today.body.results, []);
});

test('time phrases: months, weeks and counts are read relative to the reference time', () => {
  const now = new Date('2026-03-10T12:00:00Z');
  const read = (q: string) => {
    const found = readTimePhrase(q, now);
    return found && [found.after.toISOString().slice(0, 10), found.before.toISOString().slice(0, 10), found.rest];
  };
  assert.deepEqual(read('what happened in May'), ['2025-05-01', '2025-06-01', 'what happened']);
  assert.deepEqual(read('in March we moved'), ['2026-03-01', '2026-04-01', 'we moved']);
  assert.deepEqual(read('trip in may 2024'), null);
  assert.deepEqual(read('trip in June 2024'), ['2024-06-01', '2024-07-01', 'trip']);
  assert.deepEqual(read('last month invoices'), ['2026-02-01', '2026-03-01', 'invoices']);
  assert.deepEqual(read('three days ago'), ['2026-03-07', '2026-03-08', '']);
  assert.deepEqual(read('2 weeks ago standup'), ['2026-02-24', '2026-03-03', 'standup']);
  assert.deepEqual(read('last year taxes'), ['2025-01-01', '2026-01-01', 'taxes']);
  assert.equal(read('nothing about time'), null);
});

test('their statements stay on one tenant', async () => {
  await tenantRouting.assertStatementsStayOnOneTenant(t.app.db, 20);
});

test("a matching turn's neighbour comes as context only when it is live and passes the filters", async () => {
  // Two one-line turns written one after the other: the answer has no query word and is found only as
  // the question's neighbour (search.happy.test.ts). Each case first sees it found, then not.
  const conversation = async (label: string) => {
    const memory = await freshUser(label);
    const [question, answer] = await memory.batch([
      { content: 'Ann: What did you research?', speaker: 'Ann', occurredAt: '2026-05-04T10:00:00Z' },
      { content: 'Bob: Adoption agencies, mostly in Oregon.', speaker: 'Bob', occurredAt: '2026-04-20T10:00:00Z' },
    ]);
    const found = async (extra = '') => ids(await memory.search('research', `&limit=10${extra}`));
    assert.deepEqual(await found(), [question!.id, answer!.id]);
    return { memory, question: question!, answer: answer!, found };
  };

  const expiring = await conversation('neighbour-expired');
  const expired = await expiring.memory.client.patch(`/v1/memory/${expiring.answer.id}`, {
    expiresAt: new Date().toISOString(),
  });
  assert.equal(expired.status, 200, expired.text);
  assert.deepEqual(await expiring.found(), [expiring.question.id], 'an expired neighbour is not returned');

  const superseding = await conversation('neighbour-superseded');
  const replacement = await superseding.memory.client.post('/v1/memory', {
    content: 'Bob: Adoption agencies in Washington, in the end.',
    supersedes: superseding.answer.id,
  });
  assert.equal(replacement.status, 201, replacement.text);
  assert.deepEqual(await superseding.found(), [superseding.question.id], 'a superseded neighbour is not returned');

  const filtered = await conversation('neighbour-filtered');
  const { question } = filtered;
  assert.deepEqual(await filtered.found('&speaker=Ann'), [question.id]);
  assert.deepEqual(await filtered.found('&after=2026-05-01T00:00:00Z'), [question.id]);
  // Filters narrow the results, not the scores: the question, filtered out, still lends its share.
  assert.deepEqual(await filtered.found('&before=2026-05-01T00:00:00Z'), [filtered.answer.id]);
  // A time phrase is a filter like after and before.
  const inMay = await filtered.memory.search('research in May', '&now=2026-06-10T00:00:00Z');
  assert.deepEqual(ids(inMay), [question.id]);
});
