// Server memory while exporting many audit events: the server runs as its own process on PostgreSQL;
// N events are inserted into one organization's log with SQL (a realistic row each), then
// GET .../audit-events/export is read to the end while the server's RSS is sampled from /proc.
// Usage: node_modules/.bin/node bench/audit-export/run.ts [events=1000000] [format=ndjson]
import { readFile } from 'node:fs/promises';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { createDatabase, spawnServer } from '../support/servers.ts';

const total = Number(process.argv[2] ?? 1_000_000);
const format = process.argv[3] ?? 'ndjson';

async function rssOf(pid: number): Promise<{ rss: number; peak: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0);
  return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
}

const database = await createDatabase();
const server = await spawnServer(['src/main.ts', 'start'], { DATABASE_URL: database.url, DATA_DIR: await mkdtemp(path.join(tmpdir(), 'orgplane-audit-bench-')) });
try {
  const boot = await fetch(`${server.url}/v1/bootstrap`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'bench@example.test', password: 'a-long-password-1', name: 'Bench', organizationName: 'Bench' }),
  });
  const { organization, sessionToken } = (await boot.json()) as { organization: { id: string }; sessionToken: string };
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  const insertStarted = performance.now();
  for (let from = 1; from <= total; from += 100_000) {
    const to = Math.min(total, from + 99_999);
    await client.query(
      `INSERT INTO audit_events (id, chain_id, seq, organization_id, occurred_at, action, outcome, actor_type, actor_id, actor_name, actor_email,
         target_type, target_id, target_name, ip, user_agent, request_id, changes, prev_hash, hash)
       SELECT 'aud_bench' || n, $1, 1000 + n, $1, now() - interval '1 day' + n * interval '1 millisecond', 'mcp_connection.updated', 'success', 'user',
         'usr_01jqz3v6b8e9f0g1h2j3k4m5n6', 'Bench Person', 'bench@example.test', 'mcp_connection', 'emc_01jqz3v6b8e9f0g1h2j3k4m5n6', 'Docs',
         '127.0.0.1', 'bench/1.0', 'req-' || n, '{"name": "Docs", "url": "https://mcp.example.test/mcp", "apiKey": "redacted"}', repeat('0', 64), repeat('1', 64)
       FROM generate_series($2::int, $3::int) AS n`,
      [organization.id, from, to],
    );
  }
  await client.end();
  console.log(`inserted ${total} events in ${((performance.now() - insertStarted) / 1000).toFixed(1)} s`);

  const before = await rssOf(server.child.pid!);
  let maxRss = before.rss;
  const sampler = setInterval(() => void rssOf(server.child.pid!).then((m) => (maxRss = Math.max(maxRss, m.rss))).catch(() => {}), 50);
  const started = performance.now();
  const response = await fetch(`${server.url}/v1/orgs/${organization.id}/audit-events/export?format=${format}`, { headers: { authorization: `Bearer ${sessionToken}` } });
  let bytes = 0;
  let lines = 0;
  for await (const chunk of response.body!) {
    bytes += chunk.length;
    for (const byte of chunk) if (byte === 10) lines++;
  }
  const seconds = (performance.now() - started) / 1000;
  clearInterval(sampler);
  const after = await rssOf(server.child.pid!);
  console.log(`| events | format | status | lines | MB sent | seconds | server RSS before (MB) | max RSS during (MB) | RSS after (MB) | VmHWM (MB) |`);
  console.log(`|---|---|---|---|---|---|---|---|---|---|`);
  console.log(`| ${total} | ${format} | ${response.status} | ${lines} | ${(bytes / 1048576).toFixed(0)} | ${seconds.toFixed(1)} | ${before.rss.toFixed(0)} | ${maxRss.toFixed(0)} | ${after.rss.toFixed(0)} | ${after.peak.toFixed(0)} |`);
} finally {
  await server.stop();
  await database.drop();
}
