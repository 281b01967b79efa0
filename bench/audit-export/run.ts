// Server memory while exporting many audit events: the server runs as its own process (`orgplane start`)
// on PostgreSQL or on its embedded PGlite; N events are inserted into one organization's log with SQL (a
// realistic row each), then GET .../audit-events/export is read to the end while the server's RSS is
// sampled from /proc.
// Usage: node_modules/.bin/node bench/audit-export/run.ts [events=1000000] [format=ndjson] [backend=postgres|pglite]
// On PGlite the data directory is one process's: the server is started to bootstrap, stopped while this
// process inserts the events into its data directory, and started again for the export.
import { readFile } from 'node:fs/promises';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { openDatabase, type Queryable } from '../../src/db/database.ts';
import { createDatabase, spawnServer, type BenchProcess } from '../support/servers.ts';

const total = Number(process.argv[2] ?? 1_000_000);
const format = process.argv[3] ?? 'ndjson';
const backend = process.argv[4] ?? 'postgres';
if (backend !== 'postgres' && backend !== 'pglite') throw new Error('backend: postgres or pglite');

async function rssOf(pid: number): Promise<{ rss: number; peak: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0);
  return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
}

async function insertEvents(db: Queryable, organizationId: string) {
  for (let from = 1; from <= total; from += 100_000) {
    const to = Math.min(total, from + 99_999);
    await db.query(
      `INSERT INTO audit_events (id, chain_id, seq, organization_id, occurred_at, action, outcome, actor_type, actor_id, actor_name, actor_email,
         target_type, target_id, target_name, ip, user_agent, request_id, changes, prev_hash, hash)
       SELECT 'aud_bench' || n, $1, 1000 + n, $1, now() - interval '1 day' + n * interval '1 millisecond', 'mcp_connection.updated', 'success', 'user',
         'usr_01jqz3v6b8e9f0g1h2j3k4m5n6', 'Bench Person', 'bench@example.test', 'mcp_connection', 'emc_01jqz3v6b8e9f0g1h2j3k4m5n6', 'Docs',
         '127.0.0.1', 'bench/1.0', 'req-' || n, '{"name": "Docs", "url": "https://mcp.example.test/mcp", "apiKey": "redacted"}', repeat('0', 64), repeat('1', 64)
       FROM generate_series($2::int, $3::int) AS n`,
      [organizationId, from, to],
    );
  }
}

const dataDir = await mkdtemp(path.join(tmpdir(), 'orgplane-audit-bench-'));
const database = backend === 'postgres' ? await createDatabase() : undefined;
const env = { DATA_DIR: dataDir, ...(database ? { DATABASE_URL: database.url } : {}) };
let server: BenchProcess = await spawnServer(['src/main.ts', 'start'], env);
try {
  const boot = await fetch(`${server.url}/v1/bootstrap`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      email: 'bench@example.test',
      password: 'a-long-password-1',
      name: 'Bench',
      organizationName: 'Bench',
    }),
  });
  const { organization, sessionToken } = (await boot.json()) as { organization: { id: string }; sessionToken: string };
  const insertStarted = performance.now();
  // Event n is recorded at (the insert's now() - 1 day + n ms): this bound takes at most the first 20,000.
  const warmUpUntil = new Date(Date.now() - 86_400_000 + 20_000).toISOString();
  if (database) {
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    await insertEvents(client, organization.id);
    await client.end();
  } else {
    await server.stop();
    const db = await openDatabase({ pgliteDataDir: path.join(dataDir, 'pglite') });
    await insertEvents(db, organization.id);
    await db.close();
    server = await spawnServer(['src/main.ts', 'start'], env);
  }
  console.log(`${backend}: inserted ${total} events in ${((performance.now() - insertStarted) / 1000).toFixed(1)} s`);

  // A warmed-up server, as one that has served for a while is: a first, small export (at most 20,000 events)
  // promotes what the start left in the young generation, which the heap would otherwise do during the
  // measured export (and grow its young generation for). Its own RSS growth is printed too.
  const cold = await rssOf(server.child.pid!);
  const warmUp = await fetch(
    `${server.url}/v1/orgs/${organization.id}/audit-events/export?format=${format}&until=${warmUpUntil}`,
    { headers: { authorization: `Bearer ${sessionToken}` } },
  );
  const warmUpLines = (await warmUp.text()).split('\n').length - 1;
  const warm = await rssOf(server.child.pid!);
  console.log(
    `warm-up: ${warmUpLines} events exported; server RSS ${cold.rss.toFixed(0)} MB before, ${warm.rss.toFixed(0)} MB after`,
  );
  const before = await rssOf(server.child.pid!);
  let maxRss = before.rss;
  const sampler = setInterval(
    () =>
      void rssOf(server.child.pid!)
        .then((m) => (maxRss = Math.max(maxRss, m.rss)))
        .catch(() => {}),
    50,
  );
  const started = performance.now();
  const response = await fetch(`${server.url}/v1/orgs/${organization.id}/audit-events/export?format=${format}`, {
    headers: { authorization: `Bearer ${sessionToken}` },
  });
  let bytes = 0;
  let lines = 0;
  for await (const chunk of response.body!) {
    bytes += chunk.length;
    for (const byte of chunk) if (byte === 10) lines++;
  }
  const seconds = (performance.now() - started) / 1000;
  clearInterval(sampler);
  const after = await rssOf(server.child.pid!);
  console.log(
    `| backend | events | format | status | lines | MB sent | seconds | server RSS before (MB) | max RSS during (MB) | growth (MB) | RSS after (MB) | VmHWM (MB) |`,
  );
  console.log(`|---|---|---|---|---|---|---|---|---|---|---|---|`);
  console.log(
    `| ${backend} | ${total} | ${format} | ${response.status} | ${lines} | ${(bytes / 1048576).toFixed(0)} | ${seconds.toFixed(1)} | ${before.rss.toFixed(0)} | ${maxRss.toFixed(0)} | ${(maxRss - before.rss).toFixed(0)} | ${after.rss.toFixed(0)} | ${after.peak.toFixed(0)} |`,
  );
} finally {
  await server.stop();
  await database?.drop();
}
