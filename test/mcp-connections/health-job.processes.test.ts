// The background credential health job across processes: two app instances on one database share
// the due connections and check each once per run (counted at the servers); a connection another
// process holds (leased) waits for its lease to end; connections of several organizations are each
// checked once, by one process; MCP_HEALTH_INTERVAL_SECONDS=0 runs nothing, while an app with an
// interval checks by itself on its timer; `orgplane worker` runs the job too.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startTestApp, testBackend, type TestApp } from '../support/app.ts';
import { startStreamableServer } from '../support/mcp-servers.ts';
import { spawnCli, stopProcess } from '../support/process.ts';
import { createOrganization, signUp } from '../support/fixtures.ts';
import { checkTenantRouting } from '../db/tenant-routing.ts';
import { connectThroughOAuth, createOAuthConnection } from '../mcp-oauth/helpers.ts';
import { api, createConnection, LOOPBACK } from './helpers.ts';
import { HOUR, healthSettings, refreshesIssued, removeAfter, useHealthWorld, viewOf } from './health-helpers.ts';

// Small batches, so two processes claiming at once take turns rather than one taking everything.
const settings = { batchSize: 2, concurrency: 2 };
const world = useHealthWorld(settings);
const tenantRouting = checkTenantRouting();
let second: TestApp;

before(async () => {
  await world.harness.ready;
  second = await startTestApp(
    { allowedPrivateNetworks: LOOPBACK, mcpHealth: healthSettings(settings) },
    { shareDatabaseWith: world.app },
  );
});
after(async () => {
  await second?.close();
});

test('two app instances on one database: each connection is checked once per run, by one of them', async (t) => {
  // What one check of one connection costs its server, counted on a connection checked by one app alone.
  const control = await world.server({ accessTokenTtlSeconds: 24 * HOUR });
  const controlConnection = await createOAuthConnection(world, control.url, {
    credentialMode: 'shared',
    name: 'Control',
  });
  removeAfter(t, world, controlConnection.id);
  await connectThroughOAuth(world, world.tenant.admin, controlConnection.id);
  const before = control.stats.mcpRequests;
  assert.equal((await world.job().runOnce()).probes, 1);
  const perCheck = control.stats.mcpRequests - before;
  assert.ok(perCheck > 0);

  const servers = await Promise.all(
    Array.from({ length: 8 }, () => world.server({ accessTokenTtlSeconds: 24 * HOUR })),
  );
  for (const [index, s] of servers.entries()) {
    const connection = await createOAuthConnection(world, s.url, { credentialMode: 'shared', name: `Files ${index}` });
    removeAfter(t, world, connection.id);
    await connectThroughOAuth(world, world.tenant.admin, connection.id);
  }
  const baseline = servers.map((s) => s.stats.mcpRequests);
  const now = new Date();
  const [first, other] = await Promise.all([world.job().runOnce(now), world.job(second).runOnce(now)]);
  t.diagnostic(`first instance checked ${first.credentials}, second ${other.credentials}`);

  assert.equal(first.probes + other.probes, servers.length);
  assert.deepEqual(
    servers.map((s, i) => s.stats.mcpRequests - baseline[i]!),
    servers.map(() => perCheck),
    'one check per connection',
  );
  assert.equal(
    servers.reduce((sum, s) => sum + refreshesIssued(s), 0),
    0,
  );
  // And the next run at the same moment finds nothing: both instances saw them done.
  const [again, againOther] = await Promise.all([world.job().runOnce(now), world.job(second).runOnce(now)]);
  assert.equal(again.credentials + againOther.credentials, 0);
});

test('a connection leased by another process is not checked until its lease has ended', async (t) => {
  const s = await world.server({ accessTokenTtlSeconds: 24 * HOUR });
  const connection = await createOAuthConnection(world, s.url, { credentialMode: 'shared' });
  removeAfter(t, world, connection.id);
  await connectThroughOAuth(world, world.tenant.admin, connection.id);
  // As a process that claimed it and died would leave it.
  const leaseUntil = new Date(Date.now() + 600_000);
  await world.app.db.query(
    `UPDATE mcp_connections SET health_lease_until = $3, health_lease_token = 'gone' WHERE organization_id = $1 AND id = $2`,
    [world.tenant.orgId, connection.id, leaseUntil],
  );
  const requests = s.stats.mcpRequests;
  const held = await world.job(second).runOnce(new Date(leaseUntil.getTime() - 1000));
  assert.equal(held.credentials, 0);
  assert.equal(s.stats.mcpRequests, requests);
  const taken = await world.job(second).runOnce(new Date(leaseUntil.getTime() + 1000));
  assert.equal(taken.probes, 1);
  assert.ok(s.stats.mcpRequests > requests);
  const { rows } = await world.app.db.query<{ lease: Date | null }>(
    'SELECT health_lease_until AS lease FROM mcp_connections WHERE organization_id = $1 AND id = $2',
    [world.tenant.orgId, connection.id],
  );
  assert.equal(rows[0]!.lease, null, 'released after the check');
});

test('connections of three organizations, all due: one run checks each once, and two processes share them without checking one twice', async (t) => {
  const third = await signUp(world.app.url, 'third');
  await createOrganization(world.app.url, third, 'Initech');
  // Uneven, so that an organization fills a batch (of 2) and the others take their turns around it.
  const admins = [
    { token: world.tenant.admin.token, connections: 3 },
    { token: world.tenant.otherAdmin.token, connections: 1 },
    { token: third.token, connections: 2 },
  ];
  const servers: Array<{ requests: string[] }> = [];
  for (const admin of admins) {
    for (let i = 0; i < admin.connections; i++) {
      const server = await startStreamableServer({ apiKey: 'org-key' });
      t.after(() => server.close());
      const connection = await createConnection(world.app.url, admin.token, {
        name: `Keyed ${i}`,
        url: server.url,
        authType: 'apikey',
        credentialMode: 'shared',
        apiKey: 'org-key',
        access: { orgWide: true },
      });
      t.after(async () => {
        await api(world.app.url, admin.token).delete(`/v1/mcp-connections/${connection.id}`);
      });
      servers.push(server);
    }
  }
  const requestsSince = (baseline: number[]) => servers.map((server, i) => server.requests.length - baseline[i]!);

  // Never probed: all due. One run checks each connection once, whichever organization it is in.
  let baseline = servers.map((server) => server.requests.length);
  const clock = world.clock();
  const run = await clock.at(0);
  assert.deepEqual(
    { connections: run.connections, probes: run.probes, ready: run.ready },
    { connections: 6, probes: 6, ready: 6 },
  );
  const perCheck = requestsSince(baseline)[0]!;
  assert.ok(perCheck > 0);
  assert.deepEqual(
    requestsSince(baseline),
    servers.map(() => perCheck),
    'one check per connection',
  );

  // An interval later all are due again: two processes at once check each once between them.
  baseline = servers.map((server) => server.requests.length);
  const now = new Date(Date.now() + HOUR * 1000 + 1000);
  const [first, other] = await Promise.all([world.job().runOnce(now), world.job(second).runOnce(now)]);
  t.diagnostic(`first instance checked ${first.credentials}, second ${other.credentials}`);
  assert.equal(first.probes + other.probes, 6);
  assert.deepEqual(
    requestsSince(baseline),
    servers.map(() => perCheck),
    'one check per connection',
  );
  const [again, againOther] = await Promise.all([world.job().runOnce(now), world.job(second).runOnce(now)]);
  assert.equal(again.credentials + againOther.credentials, 0);
});

test('MCP_HEALTH_INTERVAL_SECONDS=0: no job and nothing checked; with an interval, the job checks by itself', async (t) => {
  const s = await world.server({ accessTokenTtlSeconds: 24 * HOUR });
  const connection = await createOAuthConnection(world, s.url, { credentialMode: 'shared' });
  removeAfter(t, world, connection.id);
  await connectThroughOAuth(world, world.tenant.admin, connection.id);

  // The app with the job on, polling every 50 ms: how long until its timer has checked the credential.
  const authorizationRequests = s.stats.mcpRequests;
  const on = await startTestApp(
    { allowedPrivateNetworks: LOOPBACK, mcpHealth: healthSettings({ pollSeconds: 0.05 }) },
    { shareDatabaseWith: world.app },
  );
  const started = Date.now();
  try {
    while (s.stats.mcpRequests === authorizationRequests && Date.now() - started < 20_000) await sleep(20);
  } finally {
    await on.close();
  }
  const took = Date.now() - started;
  assert.ok(s.stats.mcpRequests > authorizationRequests, 'the timer ran a check');
  assert.equal((await viewOf(world.app, world.tenant.admin.token, connection.id)).credentialHealth, 'ready');

  // Make it due again, then give an app with interval 0 (and the same 50 ms poll) several times as long.
  await world.app.db.query(
    'UPDATE mcp_connection_credentials SET health_due_at = NULL WHERE organization_id = $1 AND connection_id = $2',
    [world.tenant.orgId, connection.id],
  );
  const requests = s.stats.mcpRequests;
  const off = await startTestApp(
    { allowedPrivateNetworks: LOOPBACK, mcpHealth: healthSettings({ intervalSeconds: 0, pollSeconds: 0.05 }) },
    { shareDatabaseWith: world.app },
  );
  try {
    assert.equal(off.app.mcpHealth, null);
    await sleep(Math.max(1000, took * 5));
  } finally {
    await off.close();
  }
  assert.equal(s.stats.mcpRequests, requests, 'nothing ran');
  const { rows } = await world.app.db.query<{ due: Date | null }>(
    'SELECT health_due_at AS due FROM mcp_connection_credentials WHERE organization_id = $1 AND connection_id = $2',
    [world.tenant.orgId, connection.id],
  );
  assert.equal(rows[0]!.due, null);
});

test('`orgplane worker` runs the checks too (a deployment whose API processes run with RUN_WORKERS=false)', {
  skip: testBackend !== 'postgres' && 'the worker opens the database itself: PostgreSQL only',
}, async (t) => {
  const server = await startStreamableServer({ apiKey: 'worker-key' });
  t.after(() => server.close());
  const connection = await createConnection(world.app.url, world.tenant.admin.token, {
    name: 'Keyed',
    url: server.url,
    authType: 'apikey',
    credentialMode: 'shared',
    apiKey: 'worker-key',
    access: { orgWide: true },
  });
  removeAfter(t, world, connection.id);
  const requests = server.requests.length;
  const worker = spawnCli(['worker'], {
    DATABASE_URL: world.app.databaseUrl!,
    ORGPLANE_SECRET_KEY: world.app.config.secretKey!,
    DATA_DIR: await mkdtemp(path.join(tmpdir(), 'orgplane-worker-')),
    ALLOWED_PRIVATE_NETWORKS: LOOPBACK.join(','),
    // Polls every second, so its first run comes at once.
    MCP_HEALTH_INTERVAL_SECONDS: '1',
  });
  let due: Date | null = null;
  try {
    const started = Date.now();
    while (due === null && Date.now() - started < 30_000 && worker.child.exitCode === null) {
      await sleep(100);
      const { rows } = await world.app.db.query<{ due: Date | null }>(
        'SELECT health_due_at AS due FROM mcp_connection_credentials WHERE organization_id = $1 AND connection_id = $2',
        [world.tenant.orgId, connection.id],
      );
      due = rows[0]!.due;
    }
  } finally {
    assert.equal(await stopProcess(worker), 0, worker.output());
  }
  assert.notEqual(due, null, `the worker checked the credential:\n${worker.output()}`);
  assert.ok(server.requests.length > requests);
  assert.equal((await viewOf(world.app, world.tenant.admin.token, connection.id)).credentialHealth, 'ready');
});

// The job's statements stay on one tenant, but for its read of which organizations have a
// due connection (test/db/tenant-routing.ts).
test('their statements stay on one tenant', async () => {
  await tenantRouting.assertStatementsStayOnOneTenant(world.app.db, 55);
});
