// Edits that keep the identity (name changes, so credentials stay and no probe runs) through the
// real HTTP route on PostgreSQL, against a bare route (GET /health) measured the same way.
// Each of C workers edits its own connection in a loop, carrying the updatedAt it got back as the
// next expectedUpdatedAt, so every edit is a real 200 (a 409 would be counted and reported).
//   node_modules/.bin/node bench/mcp-edit/run.ts [seconds per run, default 10] [workers, default 1,8]

process.env.ORGPLANE_TEST_BACKEND = 'postgres';
const { startTestApp } = await import('../../test/support/app.ts');
const { createTenant } = await import('../../test/support/fixtures.ts');
const { startStreamableServer } = await import('../../test/support/mcp-servers.ts');

const seconds = Number(process.argv[2] ?? 10);
const workerCounts = (process.argv[3] ?? '1,8').split(',').map(Number);

const mcp = await startStreamableServer({ apiKey: 'bench-key' });
const app = await startTestApp({ allowedPrivateNetworks: ['127.0.0.0/8'], logLevel: 'warn' });
const tenant = await createTenant(app.url);
const headers = { authorization: `Bearer ${tenant.admin.token}`, 'content-type': 'application/json' };

async function createConnection(index: number) {
  const response = await fetch(`${app.url}/v1/mcp-connections`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ name: `bench ${index}`, url: mcp.url, authType: 'apikey', credentialMode: 'shared', apiKey: 'bench-key', access: { orgWide: true } }),
  });
  if (response.status !== 201) throw new Error(`create: ${response.status} ${await response.text()}`);
  return (await response.json()) as { id: string; url: string; updatedAt: string };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

async function run(label: string, workers: number, makeWorker: (index: number) => Promise<() => Promise<number>>) {
  const steps = await Promise.all(Array.from({ length: workers }, (_, i) => makeWorker(i)));
  const warmUntil = performance.now() + 1000;
  await Promise.all(steps.map(async (step) => { while (performance.now() < warmUntil) await step(); }));
  const times: number[] = [];
  const statuses = new Map<number, number>();
  const until = performance.now() + seconds * 1000;
  const began = performance.now();
  await Promise.all(
    steps.map(async (step) => {
      while (performance.now() < until) {
        const t0 = performance.now();
        const status = await step();
        times.push(performance.now() - t0);
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
      }
    }),
  );
  const elapsed = (performance.now() - began) / 1000;
  times.sort((a, b) => a - b);
  const f = (n: number) => n.toFixed(2).padStart(6);
  console.log(
    `${label.padEnd(40)} workers=${String(workers).padStart(2)}  p50 ${f(percentile(times, 50))} ms  p99 ${f(percentile(times, 99))} ms  ` +
      `${(times.length / elapsed).toFixed(0).padStart(5)} req/s  statuses ${JSON.stringify(Object.fromEntries(statuses))}`,
  );
}

console.log(`node ${process.version}, PostgreSQL at 127.0.0.1:5432, ${seconds} s per run, ${new Date().toISOString()}`);
for (const workers of workerCounts) {
  await run('GET /health (bare route)', workers, async () => async () => {
    const response = await fetch(`${app.url}/health`);
    await response.arrayBuffer();
    return response.status;
  });
  await run('PUT /v1/mcp-connections/{id} (name only)', workers, async (index) => {
    let current = await createConnection(index);
    let n = 0;
    return async () => {
      const response = await fetch(`${app.url}/v1/mcp-connections/${current.id}`, {
        method: 'PUT',
        headers,
        body: JSON.stringify({ expectedUpdatedAt: current.updatedAt, name: `bench ${index} edit ${n++}`, url: current.url, authType: 'apikey', credentialMode: 'shared', access: { orgWide: true } }),
      });
      const body = (await response.json()) as { updatedAt: string; identityChanged?: boolean };
      if (response.status === 200) {
        if (body.identityChanged) throw new Error('identity changed');
        current = { ...current, updatedAt: body.updatedAt };
      }
      return response.status;
    };
  });
}
const probeRequests = mcp.requests.length;
await app.close();
await mcp.close();
console.log(`MCP server requests during the whole run: ${probeRequests} (only the creates probe; name edits do not)`);
