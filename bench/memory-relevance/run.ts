// Memory search relevance on SciFact (train split), through the HTTP API, on PostgreSQL and PGlite.
// Usage: node_modules/.bin/node bench/memory-relevance/run.ts [postgres] [pglite]   (default: both)
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';

const datasetDir =
  process.env.SCIFACT_DIR ?? path.resolve(new URL('../../', import.meta.url).pathname, '../shared/datasets/scifact');

interface Judged {
  query: string;
  relevant: Map<string, number>;
}

/** nDCG@10 with gain 2^rel - 1 and log2 discount; the ideal ranking is over the judged documents. */
export function ndcgAt10(ranked: string[], relevant: Map<string, number>): number {
  let dcg = 0;
  ranked.slice(0, 10).forEach((doc, i) => {
    dcg += (2 ** (relevant.get(doc) ?? 0) - 1) / Math.log2(i + 2);
  });
  let idcg = 0;
  [...relevant.values()]
    .sort((a, b) => b - a)
    .slice(0, 10)
    .forEach((rel, i) => {
      idcg += (2 ** rel - 1) / Math.log2(i + 2);
    });
  return idcg > 0 ? dcg / idcg : 0;
}

function readJsonl<T>(file: string): T[] {
  return readFileSync(path.join(datasetDir, file), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as T);
}

async function runOne(): Promise<void> {
  const { startTestApp, testBackend } = await import('../../test/support/app.ts');
  const { createOrganization, signUp } = await import('../../test/support/fixtures.ts');
  const { api } = await import('../../test/support/http.ts');

  const corpus = readJsonl<{ _id: string; title: string; text: string }>('corpus.jsonl');
  const queries = readJsonl<{ _id: string; text: string }>('queries-train.jsonl');
  const judged = new Map<string, Judged>();
  for (const line of readFileSync(path.join(datasetDir, 'qrels-train.tsv'), 'utf8').split('\n').slice(1)) {
    if (!line.trim()) continue;
    const [queryId, docId, score] = line.split('\t') as [string, string, string];
    const entry = judged.get(queryId) ?? { query: '', relevant: new Map<string, number>() };
    entry.relevant.set(docId, Number(score));
    judged.set(queryId, entry);
  }

  const app = await startTestApp({ logLevel: 'warn' });
  try {
    const user = await signUp(app.url, 'scifact');
    await createOrganization(app.url, user, 'Relevance');
    const client = api(app.url, user.token);

    // The title is the memory's first line (its headline), the abstract the rest.
    const docIdByMemory = new Map<string, string>();
    const loadStart = performance.now();
    for (let i = 0; i < corpus.length; i += 500) {
      const chunk = corpus.slice(i, i + 500);
      const response = await client.post('/v1/memory/batch', {
        memories: chunk.map((doc) => ({ content: `${doc.title}\n${doc.text}`, source: 'scifact' })),
      });
      if (response.status !== 201) throw new Error(`batch ${i}: ${response.status} ${response.text.slice(0, 300)}`);
      for (const [j, memory] of (response.body.memories as { id: string }[]).entries())
        docIdByMemory.set(memory.id, chunk[j]!._id);
    }
    const loadMs = performance.now() - loadStart;

    const evaluated = queries.filter((query) => judged.has(query._id));
    const digest = createHash('sha256');
    const rankings: { id: string; ranked: string[]; lines: string[] }[] = new Array(evaluated.length);
    const searchStart = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        while (next < evaluated.length) {
          const at = next++;
          const query = evaluated[at]!;
          const response = await client.get(`/v1/memory/search?limit=10&q=${encodeURIComponent(query.text)}`);
          if (response.status !== 200)
            throw new Error(`query ${query._id}: ${response.status} ${response.text.slice(0, 300)}`);
          const results = response.body.results as { id: string; score: number }[];
          const ranked = results.map((result) => docIdByMemory.get(result.id)!);
          rankings[at] = { id: query._id, ranked, lines: results.map((result, k) => `${ranked[k]}:${result.score}`) };
        }
      }),
    );
    const searchMs = performance.now() - searchStart;

    let total = 0;
    for (const ranking of rankings) {
      total += ndcgAt10(ranking.ranked, judged.get(ranking.id)!.relevant);
      digest.update(`${ranking.id}=${ranking.lines.join(',')}\n`);
    }
    console.log(
      `${testBackend}: nDCG@10 = ${(total / rankings.length).toFixed(4)} over ${rankings.length} queries; ` +
        `${corpus.length} memories loaded in ${(loadMs / 1000).toFixed(1)} s; ` +
        `queries ${(searchMs / rankings.length).toFixed(1)} ms each (4 at a time); ` +
        `results+scores digest ${digest.digest('hex').slice(0, 16)}`,
    );
  } finally {
    await app.close();
  }
}

if (process.env.MEMORY_RELEVANCE_CHILD) {
  await runOne();
} else {
  const backends = process.argv.slice(2).length > 0 ? process.argv.slice(2) : ['postgres', 'pglite'];
  for (const backend of backends) {
    const child = spawnSync(process.execPath, [new URL(import.meta.url).pathname], {
      stdio: 'inherit',
      env: { ...process.env, MEMORY_RELEVANCE_CHILD: '1', ORGPLANE_TEST_BACKEND: backend },
    });
    if (child.status !== 0) process.exit(child.status ?? 1);
  }
}
