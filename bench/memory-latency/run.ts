// Memory search latency and batch insert throughput, through the HTTP API.
//
//   node_modules/.bin/node bench/memory-latency/run.ts 5k [postgres|pglite]   fresh database, 5,000 memories loaded
//                                                                            through POST /v1/memory/batch, then searches
//   node_modules/.bin/node bench/memory-latency/run.ts 1m                      PostgreSQL database orgplane_bench_memory_1m:
//                                                                            100,000 memories for the measured user among
//                                                                            1,000,000; loaded through the store (SQL), kept
//                                                                            between runs and resumed if cut short
//
// Searches are sequential (one client), so the figures are per-request latency, not throughput.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';

const root = new URL('../../', import.meta.url).pathname;
const datasetDir = process.env.SCIFACT_DIR ?? path.resolve(root, '../shared/datasets/scifact');
const postgresAdminUrl = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const searchCount = Number(process.env.SEARCHES ?? 300);

/** A small seeded generator, so that every run builds the same memories. */
function prng(seed: number) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function readJsonl<T>(file: string): T[] {
  return readFileSync(path.join(datasetDir, file), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as T);
}

// Memories are one or two sentences of real scientific prose (SciFact abstracts), about 40 words:
// a realistic vocabulary with a realistic long tail, at the size of a typical agent memory.
const sentences = readJsonl<{ text: string }>('corpus.jsonl')
  .flatMap((doc) => doc.text.split(/(?<=\.)\s+(?=[A-Z])/))
  .filter((sentence) => sentence.length > 40 && sentence.length < 400);
const queries = readJsonl<{ text: string }>('queries-train.jsonl').map((query) => query.text);

function memoryContents(seed: number, count: number): string[] {
  const random = prng(seed);
  const pick = () => sentences[Math.floor(random() * sentences.length)]!;
  return Array.from({ length: count }, () => (random() < 0.5 ? pick() : `${pick()} ${pick()}`));
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

async function measureSearches(baseUrl: string, token: string, label: string, extra = ''): Promise<void> {
  const random = prng(7);
  const search = async (q: string) => {
    const started = performance.now();
    const response = await fetch(`${baseUrl}/v1/memory/search?limit=10&q=${encodeURIComponent(q)}${extra}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    const body = (await response.json()) as { results: unknown[] };
    if (response.status !== 200) throw new Error(`search: ${response.status} ${JSON.stringify(body)}`);
    return { ms: performance.now() - started, hits: body.results.length };
  };
  for (let i = 0; i < 20; i++) await search(queries[Math.floor(random() * queries.length)]!); // warm-up
  const times: number[] = [];
  let hits = 0;
  for (let i = 0; i < searchCount; i++) {
    const result = await search(queries[Math.floor(random() * queries.length)]!);
    times.push(result.ms);
    hits += result.hits;
  }
  times.sort((a, b) => a - b);
  console.log(
    `${label}: ${searchCount} searches (SciFact claims, limit=10, ${(hits / searchCount).toFixed(1)} results on average): ` +
      `p50 ${percentile(times, 50).toFixed(1)} ms, p95 ${percentile(times, 95).toFixed(1)} ms, ` +
      `p99 ${percentile(times, 99).toFixed(1)} ms, mean ${(times.reduce((a, b) => a + b, 0) / times.length).toFixed(1)} ms`,
  );
}

/**
 * The lifecycle in place: every memory happened on a day of 2026 (spread by a fixed stride), one in 20
 * has expired (out of search, not yet pruned) and one in 20 has a speaker.
 */
function lifecycle(index: number): Record<string, string> {
  const fields: Record<string, string> = {
    occurredAt: new Date(Date.UTC(2026, 0, 1) + ((index * 7919) % 365) * 86_400_000).toISOString(),
  };
  if (index % 20 === 7) fields.expiresAt = '2026-01-01T00:00:00Z';
  if (index % 20 === 3) fields.speaker = 'Ana';
  return fields;
}

async function batchLoad(baseUrl: string, token: string, contents: string[], batchSize: number): Promise<number> {
  const started = performance.now();
  for (let i = 0; i < contents.length; i += batchSize) {
    const response = await fetch(`${baseUrl}/v1/memory/batch`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        memories: contents
          .slice(i, i + batchSize)
          .map((content, j) => ({ content, source: 'bench', ...lifecycle(i + j) })),
      }),
    });
    if (response.status !== 201) throw new Error(`batch: ${response.status} ${await response.text()}`);
    await response.arrayBuffer();
  }
  return contents.length / ((performance.now() - started) / 1000);
}

async function fiveThousand(backend: string): Promise<void> {
  process.env.ORGPLANE_TEST_BACKEND = backend;
  const { startTestApp } = await import('../../test/support/app.ts');
  const { signUp, createOrganization } = await import('../../test/support/fixtures.ts');
  const app = await startTestApp({ logLevel: 'warn', dbPoolSize: 10 });
  try {
    // Warm-up (JIT, stemmer cache, connections): one batch for a throw-away user.
    const warm = await signUp(app.url, 'warmup');
    await batchLoad(app.url, warm.token, memoryContents(99, 1000), 1000);
    const user = await signUp(app.url, 'latency');
    await createOrganization(app.url, user, 'Latency');
    const rate = await batchLoad(app.url, user.token, memoryContents(1, 5000), 1000);
    console.log(
      `${backend}: batch insert through POST /v1/memory/batch (5 x 1,000 memories of ~40 words, one client, after a warm-up batch): ${Math.round(rate)} memories/s`,
    );
    await measureSearches(app.url, user.token, `${backend}, 5,000 memories`);
    await measureSearches(
      app.url,
      user.token,
      `${backend}, 5,000 memories, occurredAt in the first half of 2026 (after and before)`,
      '&after=2026-01-01T00:00:00Z&before=2026-07-01T00:00:00Z',
    );
  } finally {
    await app.close();
  }
}

async function oneMillion(): Promise<void> {
  const { loadConfig } = await import('../../src/config.ts');
  const { openDatabase } = await import('../../src/db/database.ts');
  const { migrate } = await import('../../src/db/migrate.ts');
  const { startServer } = await import('../../src/server.ts');
  const { analyzeMemory } = await import('../../src/modules/memory/analyzer.ts');
  const { insertMemories, findBank } = await import('../../src/modules/memory/store.ts');
  const { newId } = await import('../../src/platform/ids.ts');

  const name = 'orgplane_bench_memory_1m';
  const admin = new pg.Client({ connectionString: postgresAdminUrl });
  await admin.connect();
  const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
  if (exists.rowCount === 0) await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(postgresAdminUrl);
  url.pathname = `/${name}`;
  const databaseUrl = url.toString();

  const db = await openDatabase({ databaseUrl, poolSize: 4 });
  await migrate(db);
  const dataDir = await mkdtemp(path.join(tmpdir(), 'orgplane-bench-'));
  const server = await startServer({
    ...loadConfig({}),
    port: 0,
    host: '127.0.0.1',
    databaseUrl,
    dataDir,
    secretKey: `v1:${randomBytes(32).toString('base64')}`,
    logLevel: 'warn',
    dbPoolSize: 10,
  });
  try {
    // The measured user signs up once; later runs sign in with the same credentials.
    const credentials = {
      email: 'memory-bench-target@example.test',
      password: 'memory-bench-password-1',
      name: 'Bench Target',
    };
    let auth = await fetch(`${server.url}/v1/auth/sign-up`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(credentials),
    });
    if (auth.status !== 201) {
      auth = await fetch(`${server.url}/v1/auth/sign-in`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(credentials),
      });
    }
    const session = (await auth.json()) as { sessionToken: string; user: { id: string } };
    if (!session.sessionToken) throw new Error(`could not sign in the bench user: ${JSON.stringify(session)}`);

    // 90 other users with 10,000 memories each, inserted as rows (they only need to exist).
    const banks: { userId: string; count: number; seed: number }[] = [
      { userId: session.user.id, count: 100_000, seed: 1000 },
    ];
    for (let i = 0; i < 90; i++) {
      const userId = `usr_bench${String(i).padStart(21, '0')}`;
      await db.query(`INSERT INTO users (id, email, name) VALUES ($1, $2, 'Bench Neighbour') ON CONFLICT DO NOTHING`, [
        userId,
        `neighbour-${i}@example.test`,
      ]);
      banks.push({ userId, count: 10_000, seed: 2000 + i });
    }
    let loaded = 0;
    const loadStarted = performance.now();
    for (const bank of banks) {
      const key = { userId: bank.userId, organizationId: null };
      const have = (await findBank(db, key))?.docCount ?? 0;
      const contents = memoryContents(bank.seed, bank.count).slice(have);
      for (let i = 0; i < contents.length; i += 2000) {
        const memories = contents.slice(i, i + 2000).map((content) => ({
          id: newId('mry'),
          content,
          tags: [],
          source: 'bench',
          scope: 'user',
          analyzed: analyzeMemory(content),
        }));
        await db.transaction((tx) => insertMemories(tx, key, memories));
        loaded += memories.length;
      }
      if (contents.length > 0) {
        const seconds = (performance.now() - loadStarted) / 1000;
        console.log(
          `  loaded ${loaded} memories in ${seconds.toFixed(0)} s (${Math.round(loaded / seconds)}/s); bank ${bank.userId} complete`,
        );
      }
    }
    // Index-only scans need an up-to-date visibility map; statistics for the planner too.
    if (loaded > 0) await db.query('VACUUM ANALYZE memory_blocks, memories, memory_banks, memory_terms');
    else await db.query('ANALYZE memory_terms');
    const totals = await db.query<{ memories: number; postings: number; blocks: number; size: string }>(
      `SELECT (SELECT count(*) FROM memories) AS memories, (SELECT sum(postings) FROM memory_blocks) AS postings,
              (SELECT count(*) FROM memory_blocks) AS blocks,
              pg_size_pretty(pg_total_relation_size('memory_blocks') + pg_total_relation_size('memories')) AS size`,
    );
    console.log(`postgres, 1M database: ${JSON.stringify(totals.rows[0])}`);
    await measureSearches(server.url, session.sessionToken, 'postgres, 100,000 memories for the user among 1,000,000');
  } finally {
    await server.close();
    await db.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

const [mode = '5k', backend] = process.argv.slice(2);
if (mode === '5k' && backend) {
  await fiveThousand(backend);
} else if (mode === '5k') {
  // One process per backend: the test support module picks its backend when it is first imported.
  for (const each of ['postgres', 'pglite']) {
    const child = spawnSync(process.execPath, [new URL(import.meta.url).pathname, '5k', each], { stdio: 'inherit' });
    if (child.status !== 0) process.exit(child.status ?? 1);
  }
} else if (mode === '1m') {
  await oneMillion();
} else {
  console.error('usage: run.ts 5k [postgres|pglite] | run.ts 1m');
  process.exit(2);
}
