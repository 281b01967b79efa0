// The search's first statement (search-store.ts, openSearch: the bank and its posting blocks of the
// query's terms) in its two forms, alternated on one bank of 5,000 memories: the blocks' scan pinned to
// the bank's column (`k.user_id = b.user_id`, before test/citus) and to the parameter (`k.user_id = $1`,
// which Citus sends to one node). Prints each form's plan, then p50/p95 of 2,000 runs of each.
//
//   node_modules/.bin/node bench/memory-latency/statement-forms.ts postgres|pglite
import { readFileSync } from 'node:fs';
import path from 'node:path';
const backend = process.argv[2] === 'pglite' ? 'pglite' : 'postgres';
process.env.ORGPLANE_TEST_BACKEND = backend;
const { startTestApp } = await import('../../test/support/app.ts');
const { signUp, createOrganization } = await import('../../test/support/fixtures.ts');
const { queryTerms } = await import('../../src/modules/memory/analyzer.ts');
const dir = process.env.SCIFACT_DIR ?? path.resolve(import.meta.dirname, '../../../shared/datasets/scifact');
const read = (f: string) =>
  readFileSync(path.join(dir, f), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
const sentences = read('corpus.jsonl')
  .flatMap((d: any) => d.text.split(/(?<=\.)\s+(?=[A-Z])/))
  .filter((s: string) => s.length > 40 && s.length < 400);
const queries = read('queries-train.jsonl').map((q: any) => q.text as string);
// The same seeded generator as run.ts, so every run builds the same bank.
let state = 1;
const random = () => {
  state = (state + 0x6d2b79f5) >>> 0;
  let t = state;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
const app = await startTestApp({ logLevel: 'warn' });
const user = await signUp(app.url, 'ab');
const orgId = await createOrganization(app.url, user, 'AB');
for (let b = 0; b < 5; b++) {
  const memories = Array.from({ length: 1000 }, () => ({
    content: sentences[Math.floor(random() * sentences.length)],
  }));
  const r = await fetch(`${app.url}/v1/memory/batch`, {
    method: 'POST',
    headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ memories }),
  });
  if (r.status !== 201) throw new Error(await r.text());
}
const stmt = (
  pin: string,
) => `SELECT b.id, b.doc_count, b.head_length_sum, b.body_length_sum, k.term, k.postings, k.data
       FROM memory_banks b
       LEFT JOIN LATERAL (
         SELECT k.term, k.postings, k.data FROM unnest($3::text[]) AS w(term)
          CROSS JOIN LATERAL (SELECT * FROM memory_blocks k WHERE k.user_id = ${pin} AND k.bank_id = b.id AND k.term = w.term OFFSET 0) k
       ) k ON true
      WHERE b.user_id = $1 AND b.org_key = $2`;
const variants = { before: stmt('b.user_id'), after: stmt('$1') };
const params = (q: string) => [user.userId, orgId, queryTerms(q)];
for (const [name, text] of Object.entries(variants)) {
  const { rows } = await app.db.query(`EXPLAIN ${text}`, params(queries[0]!));
  console.log(`${backend} ${name} plan:\n${rows.map((r: any) => `  ${r['QUERY PLAN']}`).join('\n')}`);
}
// Alternated, and in both orders, so the machine's other work weighs on both forms alike.
const times: Record<string, number[]> = { before: [], after: [] };
for (let i = 0; i < 2000; i++) {
  const q = queries[i % queries.length]!;
  const order = i % 2 === 0 ? ['before', 'after'] : ['after', 'before'];
  for (const name of order) {
    const started = performance.now();
    await app.db.query(variants[name as 'before'], params(q));
    times[name]!.push(performance.now() - started);
  }
}
for (const [name, list] of Object.entries(times)) {
  list.sort((a, b) => a - b);
  const p = (x: number) => list[Math.ceil((x / 100) * list.length) - 1]!.toFixed(3);
  console.log(`${backend} ${name}: 2000 statements, p50 ${p(50)} ms, p95 ${p(95)} ms`);
}
await app.close();
