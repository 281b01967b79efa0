// The background credential health job on API-key connections, against real SDK MCP servers (one
// behind a TCP proxy the test cuts): a server unreachable for fewer runs than the threshold leaves the
// credential ready and a passed probe starts the count again; a key the server refuses is
// reconnect_required at once.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { checkTenantRouting } from '../db/tenant-routing.ts';
import { startStreamableServer, type McpServerOptions } from '../support/mcp-servers.ts';
import { startTcpProxy } from '../support/tcp-proxy.ts';
import { createConnection } from './helpers.ts';
import { HOUR, removeAfter, useHealthWorld, viewOf } from './health-helpers.ts';

const world = useHealthWorld({ failureThreshold: 3 });
const tenantRouting = checkTenantRouting();
const closers: Array<() => Promise<void>> = [];
after(async () => {
  await Promise.allSettled(closers.map((close) => close()));
});

async function apiKeyServer(options: McpServerOptions) {
  const server = await startStreamableServer(options);
  closers.push(() => server.close());
  return server;
}

async function apiKeyConnection(url: string, apiKey: string) {
  return createConnection(world.app.url, world.tenant.admin.token, {
    name: 'Keyed',
    url,
    authType: 'apikey',
    credentialMode: 'shared',
    apiKey,
    access: { orgWide: true },
  });
}

test('unreachable for fewer runs than the threshold: still ready, and a passed probe starts the count again; three in a row: reconnect_required', async (t) => {
  const server = await apiKeyServer({ apiKey: 'key-one' });
  const proxy = await startTcpProxy('127.0.0.1', server.port);
  closers.push(() => proxy.close());
  const connection = await apiKeyConnection(`http://127.0.0.1:${proxy.port}/mcp`, 'key-one');
  removeAfter(t, world, connection.id);
  const clock = world.clock();
  const view = () => viewOf(world.app, world.tenant.admin.token, connection.id);

  assert.equal((await clock.at(0)).ready, 1);
  await proxy.cut();
  for (const run of [1, 2]) {
    assert.equal((await clock.at(run * HOUR + 1)).inconclusive, 1);
    assert.equal((await view()).credentialHealth, 'ready', `after ${run} unreachable run(s)`);
  }
  await proxy.restore();
  assert.equal((await clock.at(3 * HOUR + 1)).ready, 1);
  await proxy.cut();
  // Two more failures after the passed probe are two, not four.
  for (const run of [4, 5]) {
    assert.equal((await clock.at(run * HOUR + 1)).inconclusive, 1);
    assert.equal((await view()).credentialHealth, 'ready', `run ${run}`);
  }
  const third = await clock.at(6 * HOUR + 1);
  assert.deepEqual(
    { inconclusive: third.inconclusive, reconnectRequired: third.reconnectRequired },
    { inconclusive: 1, reconnectRequired: 1 },
  );
  const seen = await view();
  assert.equal(seen.credentialHealth, 'reconnect_required');
  assert.equal(seen.credentialHealthReason, 'post_authorization_validation_failed');
  assert.equal(seen.needsReconnect, true);
  // Waiting for a person: the job does not probe it again, even with the server back.
  await proxy.restore();
  const requests = server.requests.length;
  assert.equal((await clock.at(7 * HOUR + 1)).credentials, 0);
  assert.equal(server.requests.length, requests);
});

test('a key the server no longer accepts: authorization_rejected at once; a new key is checked at the next run', async (t) => {
  const options: McpServerOptions = { apiKey: 'key-one' };
  const server = await apiKeyServer(options);
  const connection = await apiKeyConnection(server.url, 'key-one');
  removeAfter(t, world, connection.id);
  const clock = world.clock();
  assert.equal((await clock.at(0)).ready, 1);
  const requests = server.requests.length;
  assert.equal((await clock.at(60)).credentials, 0, 'not due before the interval');
  assert.equal(server.requests.length, requests);

  options.apiKey = 'key-two';
  const run = await clock.at(HOUR + 1);
  assert.equal(run.reconnectRequired, 1);
  const seen = await viewOf(world.app, world.tenant.admin.token, connection.id);
  assert.equal(seen.credentialHealth, 'reconnect_required');
  assert.equal(seen.credentialHealthReason, 'authorization_rejected');

  const stored = await world.harness
    .as(world.tenant.admin.token)
    .put(`/v1/mcp-connections/${connection.id}/credentials`, { apiKey: 'key-two' });
  assert.equal(stored.status, 200, stored.text);
  assert.equal((await clock.at(HOUR + 2)).ready, 1);
  assert.equal((await viewOf(world.app, world.tenant.admin.token, connection.id)).credentialHealth, 'ready');
});

// The job's statements stay on one tenant, but for its read of which organizations have a
// due connection (test/db/tenant-routing.ts).
test('their statements stay on one tenant', async () => {
  await tenantRouting.assertStatementsStayOnOneTenant(world.app.db, 40);
});
