// The background credential health job's cost per 1,000 connections: 1,000 shared API-key
// connections spread over 10 SDK MCP servers on loopback (in their own process), one run that probes
// them all, the same run an interval later, and a run with nothing due (what every poll costs).
//   node_modules/.bin/node bench/mcp-health/run.ts            (PostgreSQL, then PGlite)
//   BENCH_BACKENDS=postgres node_modules/.bin/node bench/mcp-health/run.ts
// Per backend it spawns itself with `--backend <name>`, so each backend has a fresh process.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { postgresCpuMicros, processCpuMicros } from '../support/cpu.ts';

const root = new URL('../../', import.meta.url).pathname;
const SERVERS = 10;
const CONNECTIONS = 1000;
const HOUR = 3600;

const backendFlag = process.argv.indexOf('--backend');
if (backendFlag < 0) {
  for (const backend of (process.env.BENCH_BACKENDS ?? 'postgres,pglite').split(',')) {
    const child = spawn(process.execPath, [new URL(import.meta.url).pathname, '--backend', backend], {
      cwd: root,
      stdio: 'inherit',
    });
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    if (code !== 0) process.exit(code ?? 1);
  }
  process.exit(0);
}

const backend = process.argv[backendFlag + 1]!;
// The test helpers pick their backend from this variable as they load.
process.env.ORGPLANE_TEST_BACKEND = backend;
const { startTestApp } = await import('../../test/support/app.ts');
const { createTenant } = await import('../../test/support/fixtures.ts');
const { api } = await import('../../test/support/http.ts');
const { loadConfig } = await import('../../src/config.ts');

// The MCP servers, in a process of their own.
const serverProcess = spawn(process.execPath, [new URL('./servers.ts', import.meta.url).pathname, String(SERVERS)], {
  cwd: root,
  stdio: ['pipe', 'pipe', 'inherit'],
});
const announced = await new Promise<{ urls: string[]; pid: number }>((resolve) => {
  createInterface({ input: serverProcess.stdout! }).once('line', (line) => resolve(JSON.parse(line)));
});

const app = await startTestApp({
  allowedPrivateNetworks: ['127.0.0.0/8'],
  logLevel: 'warn',
  // Built but never ticking by itself: the bench runs it.
  mcpHealth: { ...loadConfig({}).mcpHealth, intervalSeconds: HOUR, pollSeconds: HOUR },
  // The other workers of the process poll rarely, so the queries counted are the job's.
  auditStream: { ...loadConfig({}).auditStream, pollingIntervalSeconds: 60 },
  messengerDelivery: { ...loadConfig({}).messengerDelivery, pollingIntervalSeconds: 60 },
});
const job = app.app.mcpHealth!;
const tenant = await createTenant(app.url);
const admin = api(app.url, tenant.admin.token);
for (const [index, url] of announced.urls.entries()) {
  const created = await admin.post('/v1/mcp-connections', {
    name: `Server ${index}`,
    url,
    authType: 'apikey',
    credentialMode: 'shared',
    apiKey: 'bench-key',
    access: { orgWide: true },
  });
  if (created.status !== 201) throw new Error(`create: ${created.status} ${created.text}`);
}
// The other 990 are copies of those ten (the same server, identity and sealed key), made in SQL: the
// API would spend a probe and a rate-limit slot on each.
const copies = CONNECTIONS / SERVERS - 1;
await app.db.query(
  `INSERT INTO mcp_connections (id, organization_id, name, url, normalized_url, auth_type, credential_mode, identity_fingerprint, org_wide, requested_scopes, health, created_by, updated_at)
   SELECT 'emc_bench_' || g || '_' || c.id, c.organization_id, c.name || ' copy ' || g, c.url, c.normalized_url, c.auth_type, c.credential_mode,
          c.identity_fingerprint, c.org_wide, c.requested_scopes, c.health, c.created_by, c.updated_at
     FROM mcp_connections c, generate_series(1, $2::int) g WHERE c.organization_id = $1`,
  [tenant.orgId, copies],
);
await app.db.query(
  `INSERT INTO mcp_connection_credentials (id, organization_id, connection_id, member_id, kind, identity_fingerprint, secret_sealed, health, health_checked_at, validated_at)
   SELECT 'cred_bench_' || g || '_' || k.id, k.organization_id, 'emc_bench_' || g || '_' || k.connection_id, k.member_id, k.kind, k.identity_fingerprint,
          k.secret_sealed, k.health, k.health_checked_at, k.validated_at
     FROM mcp_connection_credentials k, generate_series(1, $2::int) g WHERE k.organization_id = $1`,
  [tenant.orgId, copies],
);
const { rows } = await app.db.query<{ count: number }>(
  'SELECT count(*)::int AS count FROM mcp_connection_credentials WHERE organization_id = $1',
  [tenant.orgId],
);
if (rows[0]!.count !== CONNECTIONS) throw new Error(`expected ${CONNECTIONS} credentials, found ${rows[0]!.count}`);

// Every statement the job sends goes through app.db.query: counted, and its time summed.
let queries = 0;
let queryMs = 0;
const query = app.db.query.bind(app.db);
app.db.query = (async (...args: Parameters<typeof query>) => {
  queries += 1;
  const started = performance.now();
  try {
    return await query(...args);
  } finally {
    queryMs += performance.now() - started;
  }
}) as typeof app.db.query;

async function measure(label: string, now: Date) {
  const [q0, qms0, cpu0, servers0, pg0] = [
    queries,
    queryMs,
    process.cpuUsage(),
    processCpuMicros(announced.pid) ?? 0,
    backend === 'postgres' ? postgresCpuMicros() : 0,
  ];
  const started = performance.now();
  const summary = await job.runOnce(now);
  const wallMs = performance.now() - started;
  const cpu = process.cpuUsage(cpu0);
  const line = {
    backend,
    run: label,
    credentials: summary.credentials,
    probes: summary.probes,
    ready: summary.ready,
    wallMs: Math.round(wallMs),
    jobProcessCpuMs: Math.round((cpu.user + cpu.system) / 1000),
    mcpServersCpuMs: Math.round(((processCpuMicros(announced.pid) ?? 0) - servers0) / 1000),
    postgresCpuMs: backend === 'postgres' ? Math.round((postgresCpuMicros() - pg0) / 1000) : null,
    queries: queries - q0,
    querySumMs: Math.round(queryMs - qms0),
  };
  console.log(JSON.stringify(line));
  if (label !== 'nothing due' && summary.ready !== CONNECTIONS)
    throw new Error(`${label}: ${summary.ready} of ${CONNECTIONS} ready`);
}

console.log(
  `# ${backend}: ${CONNECTIONS} API-key connections on ${SERVERS} SDK servers; node ${process.version}; ${new Date().toISOString()}; settings ${JSON.stringify(app.config.mcpHealth)}`,
);
const start = Date.now();
await measure('first run, all due', new Date(start));
await measure('nothing due', new Date(start + 60_000));
await measure('an interval later, all due', new Date(start + (HOUR + 1) * 1000));
await measure('nothing due', new Date(start + (HOUR + 61) * 1000));

await app.close();
serverProcess.stdin!.end();
await new Promise((resolve) => serverProcess.once('exit', resolve));
