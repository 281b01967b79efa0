// Memory search: candidates, ranking, filters, and exact statistics, over real HTTP.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../support/app.ts';
import { createOrganization, signUp } from '../support/fixtures.ts';
import { ranking } from '../../src/modules/memory/service.ts';
import { memoryClient, referenceRanking, type StoredMemory } from './helpers.ts';

let app: TestApp;
before(async () => {
  app = await startTestApp();
});
after(async () => {
  await app.close();
});

async function freshUser(label: string) {
  const user = await signUp(app.url, label);
  await createOrganization(app.url, user, `${label} org`);
  return memoryClient(app.url, user.token);
}

const garden = [
  'Tomatoes need six hours of sun and deep watering twice a week',
  'Basil grows well next to tomatoes in the garden',
  'The garden hose leaks at the tap; replace the washer',
  'Compost the coffee grounds for the roses',
  'Roses: prune in late winter, before the buds swell',
  'Book club meets on Thursdays at the library',
  'Car insurance renews in March; compare quotes first',
  'Weekly planning\nWater the tomatoes on Monday and Thursday, mow the lawn on Saturday',
];

test('a memory matching any word of the query is a candidate, not only those matching all', async () => {
  const memory = await freshUser('oror');
  const created = await memory.batch(garden.map((content) => ({ content })));
  const results = await memory.search('tomatoes library', '&limit=100');
  const ids = new Set(results.map((r) => r.id));
  for (const i of [0, 1, 5, 7]) assert.ok(ids.has(created[i]!.id), `memory ${i} is a candidate`);
  // Memories without a query word come only as neighbours of a one-line match (0, 1 and 5; 7 has a
  // headline), below the matches they are next to; 3 is next to none.
  assert.ok(!ids.has(created[3]!.id), 'memory 3 has no query word and no matching neighbour');
  const score = (i: number) => results.find((r) => r.id === created[i]!.id)?.score ?? 0;
  for (const [i, lender] of [
    [2, 1],
    [4, 5],
    [6, 5],
  ] as const) {
    assert.ok(score(i) > 0 && score(i) < score(lender), `memory ${i} is ranked through memory ${lender}`);
  }
  for (let i = 1; i < results.length; i++) assert.ok(results[i - 1]!.score >= results[i]!.score, 'best first');
  assert.ok(results.every((r) => r.score > 0));
});

test('words are stemmed and stop words ignored: "pruning the rose bushes" finds the roses', async () => {
  const memory = await freshUser('stems');
  const created = await memory.batch(garden.map((content) => ({ content })));
  const results = await memory.search('pruning the rose bushes');
  assert.equal(results[0]!.id, created[4]!.id);
  assert.ok(
    results.some((r) => r.id === created[3]!.id),
    'roses (plural) matches rose',
  );
  // "the" alone does not make a candidate: the library memory comes only as the one written after the
  // roses one (memory 4), with a share of its score (4's own, without what 3 lends it).
  const library = results.find((r) => r.content.includes('library'));
  assert.ok(library && library.score > 0 && library.score <= ranking.neighbourShare * results[0]!.score + 1e-6);
});

test('no searchable word, or no match, is 200 with empty results', async () => {
  const memory = await freshUser('empty');
  await memory.batch(garden.map((content) => ({ content })));
  assert.deepEqual(await memory.search('the and of it is'), []);
  assert.deepEqual(await memory.search('!!! ??? ...'), []);
  assert.deepEqual(await memory.search('submarine'), []);
  const fresh = await freshUser('nothing');
  assert.deepEqual(await fresh.search('tomatoes'), []);
});

test('equal scores go to the most recently updated first', async () => {
  const memory = await freshUser('ties');
  const filler = await memory.create({ content: 'unrelated filler about bicycles' });
  const older = await memory.create({ content: 'parking spot is number 42' });
  const newer = await memory.create({ content: 'parking spot is number 42', allowDuplicate: true });
  const results = await memory.search('parking spot');
  // Each lends the other the same share; the filler, written just before, is there as a neighbour.
  assert.deepEqual(
    results.map((r) => r.id),
    [newer.id, older.id, filler.id],
  );
  assert.equal(results[0]!.score, results[1]!.score);
  assert.ok(results[0]!.updatedAt >= results[1]!.updatedAt);
});

test('limit: default 10, at most the number asked', async () => {
  const memory = await freshUser('limits');
  await memory.batch(Array.from({ length: 30 }, (_, i) => ({ content: `meeting notes ${i}: discussed the roadmap` })));
  assert.equal((await memory.search('roadmap')).length, 10);
  assert.equal((await memory.search('roadmap', '&limit=3')).length, 3);
  assert.equal((await memory.search('roadmap', '&limit=100')).length, 30);
});

test('filters: every tag given must be carried; source and scope match exactly', async () => {
  const memory = await freshUser('filters');
  const [a, b, c, d] = await memory.batch([
    { content: 'flight to Lisbon on May 3', tags: ['travel', 'work'], source: 'chat', scope: 'user' },
    { content: 'flight to Oslo on June 9', tags: ['travel'], source: 'email', scope: 'user' },
    { content: 'flight simulator settings', tags: ['games', 'work'], source: 'chat', scope: 'project:sim' },
    { content: 'hotel in Lisbon booked', tags: ['travel', 'work'], source: 'chat', scope: 'user' },
  ]);
  const ids = async (extra: string) =>
    new Set((await memory.search('flight Lisbon', `&limit=100${extra}`)).map((r) => r.id));
  assert.deepEqual(await ids(''), new Set([a!.id, b!.id, c!.id, d!.id]));
  assert.deepEqual(await ids('&tags=travel'), new Set([a!.id, b!.id, d!.id]));
  assert.deepEqual(await ids('&tags=travel&tags=work'), new Set([a!.id, d!.id]));
  assert.deepEqual(await ids('&tags=travel,work'), new Set([a!.id, d!.id]));
  assert.deepEqual(await ids('&tags=nope'), new Set());
  assert.deepEqual(await ids('&source=chat'), new Set([a!.id, c!.id, d!.id]));
  assert.deepEqual(await ids('&scope=project:sim'), new Set([c!.id]));
  assert.deepEqual(await ids('&source=chat&scope=user&tags=work'), new Set([a!.id, d!.id]));
  // Filters narrow the results; they do not change the scores (statistics are the whole bank's).
  const all = await memory.search('flight Lisbon', '&limit=100');
  const filtered = await memory.search('flight Lisbon', '&limit=100&tags=travel');
  for (const result of filtered) assert.equal(result.score, all.find((r) => r.id === result.id)!.score);
});

test('search results carry exactly the spec fields', async () => {
  const memory = await freshUser('fields');
  const created = await memory.create({
    content: 'The wifi password is on the fridge',
    tags: ['home'],
    source: 'chat',
    scope: 'household',
  });
  const [result] = await memory.search('wifi password');
  assert.deepEqual(Object.keys(result!).sort(), [
    'content',
    'createdAt',
    'expiresAt',
    'id',
    'occurredAt',
    'scope',
    'score',
    'source',
    'speaker',
    'supersededBy',
    'tags',
    'updatedAt',
    'version',
  ]);
  assert.deepEqual(
    { ...result, score: undefined },
    {
      id: created.id,
      content: created.content,
      tags: ['home'],
      source: 'chat',
      scope: 'household',
      version: 1,
      expiresAt: null,
      occurredAt: null,
      speaker: null,
      supersededBy: null,
      createdAt: created.createdAt,
      updatedAt: created.updatedAt,
      score: undefined,
    },
  );
  assert.equal(typeof result!.score, 'number');
});

test('scores are the BM25F + feedback ranking computed independently in the test (same on both backends)', async () => {
  const memory = await freshUser('reference');
  const docs = await memory.batch([
    ...garden.map((content) => ({ content })),
    { content: 'Tomato blight\nYellow leaves with brown spots on the tomatoes mean blight; remove them' },
    { content: 'Watering schedule: roses every other day, tomatoes daily in July' },
  ]);
  for (const q of [
    'tomatoes watering',
    'roses compost coffee',
    'library book thursday',
    'brown spots on leaves',
    'lawn',
  ]) {
    const expected = referenceRanking(docs, q, 100);
    const actual = await memory.search(q, '&limit=100');
    assert.equal(actual.length, expected.length, q);
    const norm = (list: { id: string; score: number }[]) =>
      list
        .map((r) => ({ id: r.id, score: Math.round(r.score * 1e6) / 1e6 }))
        .sort((x, y) => y.score - x.score || (x.id < y.id ? -1 : 1));
    assert.deepEqual(norm(actual), norm(expected), q);
  }
});

test('statistics stay exact under concurrent creates and deletes: scores equal a bank built in one go', async () => {
  const busy = await freshUser('busy');
  const calm = await freshUser('calm');
  const texts = Array.from(
    { length: 60 },
    (_, i) =>
      // A headline: memories with one stand alone (no context from neighbours), so that the order in
      // which the racing writes land does not change the scores.
      `note ${i}\n${['apples', 'pears', 'plums', 'cherries'][i % 4]} ${i % 3 ? 'harvest' : 'blossom'} in ${['spring', 'summer', 'autumn'][i % 3]} ${'orchard '.repeat(i % 5)}`,
  );
  // Writes race: single creates, batches and deletes of the busy user's memories all at once.
  const doomed = await busy.batch(texts.slice(0, 10).map((content) => ({ content: `${content} (temporary)` })));
  await Promise.all([
    ...texts.slice(0, 20).map((content) => busy.create({ content })),
    busy.batch(texts.slice(20, 40).map((content) => ({ content }))),
    busy.batch(texts.slice(40, 60).map((content) => ({ content }))),
    ...doomed.map((item) => busy.remove(item.id)),
  ]);
  await calm.batch(texts.map((content) => ({ content })));
  for (const q of ['apples harvest', 'orchard blossom spring', 'plums autumn', 'temporary']) {
    const scores = async (client: typeof busy) =>
      (await client.search(q, '&limit=100')).map((r) => `${r.content}=${r.score}`).sort();
    assert.deepEqual(await scores(busy), await scores(calm), q);
  }
});

test('on a bank where common words have thousands of postings, the pruned ranking equals the full one', async () => {
  const memory = await freshUser('pruning');
  const colours = ['red', 'green', 'blue', 'amber', 'violet', 'teal', 'ochre'];
  const things = [
    'lamp',
    'chair',
    'kettle',
    'bicycle',
    'window',
    'garden',
    'notebook',
    'piano',
    'scarf',
    'harbour',
    'lantern',
  ];
  const contents = Array.from({ length: 2600 }, (_, i) => {
    // Every memory has the common words; rarer words thin out with i, a few are unique.
    const words = ['daily', 'note', colours[i % 7]!, things[(i * 7) % 11]!];
    if (i % 13 === 0) words.push('lighthouse');
    if (i % 97 === 0) words.push('zeppelin', 'zeppelin');
    if (i === 1234) words.push('quasar');
    return `${words.join(' ')} number ${i % 50}${i % 3 === 0 ? `\nmore about the ${things[i % 11]} and the ${colours[(i * 3) % 7]} note` : ''}`;
  });
  const docs: { id: string; content: string; updatedAt: string }[] = [];
  for (let i = 0; i < contents.length; i += 1000)
    docs.push(...(await memory.batch(contents.slice(i, i + 1000).map((content) => ({ content })))));
  for (const [q, limit] of [
    ['daily note about the zeppelin', 10],
    ['quasar lamp note', 5],
    ['lighthouse red kettle daily', 10],
    ['blue note', 20],
    ['zeppelin lighthouse', 100],
    // Only 52 memories have "7": the other 48 of the 100 come from the common words alone.
    ['number 7 daily note', 100],
  ] as const) {
    const expected = referenceRanking(docs, q, limit);
    const actual = await memory.search(q, `&limit=${limit}`);
    assert.equal(actual.length, expected.length, q);
    // Exact order where scores differ; within equal scores the newer first (all of a batch share a time, then id).
    assert.deepEqual(
      actual.map((r) => Math.round(r.score * 1e6) / 1e6),
      expected.map((r) => Math.round(r.score * 1e6) / 1e6),
      q,
    );
    const boundary = expected[expected.length - 1]!.score;
    const clear = (list: { id: string; score: number }[]) =>
      new Set(list.filter((r) => r.score > boundary + 1e-6).map((r) => r.id));
    assert.deepEqual(clear(actual), clear(expected), q);
  }
});

test('when the rarer words give fewer memories than the limit, memories with only common words fill the rest', async () => {
  const memory = await freshUser('fill');
  const contents = [
    ...Array.from({ length: 2100 }, (_, i) => `alpha beta item ${i}`),
    ...Array.from({ length: 3 }, (_, i) => `gamma delta alpha special ${i}`),
    ...Array.from({ length: 100 }, (_, i) => `epsilon filler ${i}`),
  ];
  const docs: { id: string; content: string; updatedAt: string }[] = [];
  for (let i = 0; i < contents.length; i += 1000)
    docs.push(...(await memory.batch(contents.slice(i, i + 1000).map((content) => ({ content })))));
  const results = await memory.search('gamma alpha', '&limit=10');
  assert.equal(results.length, 10);
  assert.deepEqual(new Set(results.slice(0, 3).map((r) => r.content)), new Set(contents.slice(2100, 2103)));
  // Besides them, the memory written right after the three matches, as their neighbour.
  assert.ok(results.slice(3).every((r) => r.content.startsWith('alpha beta item') || r.content === 'epsilon filler 0'));
  const expected = referenceRanking(docs, 'gamma alpha', 10);
  assert.deepEqual(
    results.map((r) => Math.round(r.score * 1e6)),
    expected.map((r) => Math.round(r.score * 1e6)),
  );
});

test('a word whose postings span many blocks: mixed batch sizes, single creates and scattered deletes keep the ranking exact', async () => {
  const busy = await freshUser('blocks');
  const calm = await freshUser('blocks-calm');
  const contents = Array.from(
    { length: 420 },
    (_, i) =>
      // A headline (see the concurrent test above): deletes do not change which memories are neighbours.
      `harbour log ${i}\n${i % 3 === 0 ? 'crane ' : ''}${i % 10 === 0 ? 'gull gull ' : ''}${i % 41 === 0 ? 'lighthouse ' : ''}tide ${'swell '.repeat(i % 4)}`,
  );
  const docs: StoredMemory[] = [];
  let next = 0;
  const take = (count: number) =>
    Array.from({ length: count }, () => ({ content: contents[next]!, tags: next++ % 11 === 0 ? ['elevens'] : [] }));
  // Batches larger and smaller than a block, and single memories appended to a block one at a time.
  for (const size of [1, 1, 1, 37, 150, 1, 1, 1, 1, 1, 221, 1, 1, 1, 1]) {
    if (size === 1) docs.push(await busy.create(take(1)[0]!));
    else docs.push(...(await busy.batch(take(size))));
  }
  assert.equal(docs.length, contents.length);
  // Deletes scattered over the blocks: their first, last and middle postings.
  const doomed = new Set(docs.filter((_, i) => i % 7 === 0 || i % 100 === 99).map((d) => d.id));
  for (const id of doomed) await busy.remove(id);
  const kept = docs.filter((d) => !doomed.has(d.id));
  await calm.batch(kept.map((d) => ({ content: d.content })));
  const elevens = new Set(kept.filter((d) => d.tags.includes('elevens')).map((d) => d.id));

  for (const [q, limit, tagged] of [
    ['harbour', 100, false],
    ['harbour crane gull', 100, false],
    ['lighthouse tide', 10, false],
    // Filtered: the tagged memories are spread over the ranking, so several windows are checked.
    ['harbour crane gull', 100, true],
    ['harbour crane gull', 5, true],
  ] as const) {
    const all = referenceRanking(kept, q, kept.length);
    const expected = (tagged ? all.filter((r) => elevens.has(r.id)) : all).slice(0, limit);
    const actual = await busy.search(q, `&limit=${limit}${tagged ? '&tags=elevens' : ''}`);
    assert.ok(!actual.some((r) => doomed.has(r.id)), q);
    assert.deepEqual(
      actual.map((r) => Math.round(r.score * 1e6)),
      expected.map((r) => Math.round(r.score * 1e6)),
      q,
    );
    const boundary = expected[expected.length - 1]!.score;
    const clear = (list: { id: string; score: number }[]) =>
      new Set(list.filter((r) => r.score > boundary + 1e-6).map((r) => r.id));
    assert.deepEqual(clear(actual), clear(expected), q);
    if (!tagged) {
      // Exactly the scores of a bank that never saw the deleted memories.
      const strip = (list: { content: string; score: number }[]) => list.map((r) => `${r.content}=${r.score}`).sort();
      assert.deepEqual(strip(actual), strip(await calm.search(q, `&limit=${limit}`)), q);
    }
  }
});

test('question words (would, likely, kind...) do not match when the question has other words; stemmed forms match', async () => {
  const memory = await freshUser('questions');
  const [wouldOnly, , answer] = await memory.batch([
    { content: 'I would rather stay home, it would likely rain' },
    { content: 'the weather in the mountains was cold' },
    { content: 'Caroline is pursuing a counseling certificate' },
  ]);
  const results = await memory.search('What would Caroline likely pursue?');
  assert.equal(results[0]!.id, answer!.id, '"pursue" finds "pursuing"');
  assert.ok(!results.some((r) => r.id === wouldOnly!.id), '"would" and "likely" do not make a candidate');
  // Alone, a question word is still a search word.
  assert.equal((await memory.search('would'))[0]!.id, wouldOnly!.id);
});

test('a one-line memory lends a share of its score to the memories written just before and after it', async () => {
  const memory = await freshUser('turns');
  const turns = await memory.batch([
    { content: '[8 May 2023] Ann: Good morning!' },
    { content: '[8 May 2023] Ann: What did you research last week?' },
    { content: '[8 May 2023] Bob: Adoption agencies, mostly in Oregon.' },
    { content: '[8 May 2023] Ann: Lovely weather today.' },
  ]);
  // Not "research last week": a time phrase in the query is a window on when memories happened.
  const results = await memory.search('research');
  const score = (i: number) => results.find((r) => r.id === turns[i]!.id)?.score;
  assert.equal(results[0]!.id, turns[1]!.id);
  // The answer has no query word: it is found through the question before it, as is the greeting.
  for (const i of [0, 2]) assert.ok(Math.abs(score(i)! - ranking.neighbourShare * score(1)!) < 1e-6, `turn ${i}`);
  assert.equal(score(3), undefined, 'two memories away: no context');

  // A memory with a headline stands alone.
  const notes = await freshUser('notes');
  const [doc] = await notes.batch([
    { content: 'Research plan\nresearch the adoption agencies' },
    { content: 'unrelated second note' },
  ]);
  assert.deepEqual(
    (await notes.search('research')).map((r) => r.id),
    [doc!.id],
  );

  // A deleted neighbour lends and receives nothing; the search still fills its results from the rest.
  const pruned = await freshUser('pruned');
  const [kept, gone] = await pruned.batch([{ content: 'research last week' }, { content: 'adoption agencies' }]);
  await pruned.remove(gone!.id);
  assert.deepEqual(
    (await pruned.search('research')).map((r) => r.id),
    [kept!.id],
  );

  // A deleted memory between two strong matches would rank among the first: the search looks further.
  const gaps = await freshUser('gaps');
  const [a, hole, b, long, next] = await gaps.batch([
    { content: 'zebra zebra zebra' },
    { content: 'filler one' },
    { content: 'zebra zebra zebra' },
    { content: `a long note about the savannah ${'grass and sky and heat '.repeat(20)} and one zebra` },
    { content: 'filler two' },
    { content: 'filler three' },
  ]);
  await gaps.remove(hole!.id);
  for (const limit of [4, 10]) {
    const found = await gaps.search('zebra', `&limit=${limit}`);
    assert.deepEqual(new Set(found.map((r) => r.id)), new Set([a!.id, b!.id, long!.id, next!.id]), `limit ${limit}`);
  }
});
