// The background credential health job on OAuth connections, against the SDK-built OAuth MCP server:
// tokens refreshed before they expire (shared and every member's), what a refused refresh and a
// refused token make of the credential, and the failure threshold for a server that is down.
// The job is driven by runOnce with an injected clock (health-helpers.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connectThroughOAuth, createOAuthConnection } from '../mcp-oauth/helpers.ts';
import { HOUR, refreshesIssued, refreshesRefused, removeAfter, useHealthWorld, viewOf } from './health-helpers.ts';

const world = useHealthWorld({ failureThreshold: 3, refreshMarginSeconds: 300 });

test("tokens about to expire are refreshed by the job, the shared one and every member's, before they expire", async (t) => {
  const s = await world.server({ accessTokenTtlSeconds: 600 });
  const perMember = await createOAuthConnection(world, s.url, { credentialMode: 'per_member' });
  removeAfter(t, world, perMember.id);
  const shared = await createOAuthConnection(world, s.url, { credentialMode: 'shared', name: 'Shared files' });
  removeAfter(t, world, shared.id);
  await connectThroughOAuth(world, world.tenant.admin, perMember.id);
  await connectThroughOAuth(world, world.tenant.member, perMember.id);
  await connectThroughOAuth(world, world.tenant.admin, shared.id);
  const clock = world.clock();

  // Just authorized: each credential is probed once (its check after authorization), nothing refreshed yet.
  const first = await clock.at(0);
  assert.equal(first.probes, 3);
  assert.equal(first.refreshes, 0);
  assert.equal(refreshesIssued(s), 0);

  // 400 s later the tokens (600 s) are within the 300 s margin: three refreshes, and no probe (not due for an hour).
  const before = await viewOf(world.app, world.tenant.member.token, perMember.id);
  const second = await clock.at(400);
  assert.deepEqual(
    { refreshes: second.refreshes, probes: second.probes, credentials: second.credentials },
    { refreshes: 3, probes: 0, credentials: 3 },
  );
  assert.equal(refreshesIssued(s), 3);
  const after = await viewOf(world.app, world.tenant.member.token, perMember.id);
  assert.equal(after.credentialHealth, 'ready');
  assert.ok(Date.parse(after.credentialHealthCheckedAt) >= Date.parse(before.credentialHealthCheckedAt));

  // The refreshed tokens are the ones the server accepts: the hourly probe passes with them.
  const requestsBefore = s.stats.mcpRequests;
  const hourly = await clock.at(HOUR + 1);
  assert.equal(hourly.probes, 3);
  assert.equal(hourly.ready, 3);
  assert.ok(s.stats.mcpRequests > requestsBefore);
  for (const [token, id] of [
    [world.tenant.admin.token, perMember.id],
    [world.tenant.member.token, perMember.id],
    [world.tenant.admin.token, shared.id],
  ] as const) {
    const view = await viewOf(world.app, token, id);
    assert.equal(view.credentialHealth, 'ready', `${id}`);
    assert.equal(view.credentialHealthReason, null);
  }
});

test('a refresh token revoked at the server: credential_expired at once, and the job leaves it alone after', async (t) => {
  const s = await world.server({ accessTokenTtlSeconds: 600 });
  const connection = await createOAuthConnection(world, s.url, { credentialMode: 'shared' });
  removeAfter(t, world, connection.id);
  await connectThroughOAuth(world, world.tenant.admin, connection.id);
  const clock = world.clock();
  assert.equal((await clock.at(0)).ready, 1);

  s.revokeAll();
  const run = await clock.at(400);
  assert.equal(run.reconnectRequired, 1);
  assert.equal(refreshesRefused(s), 1);
  const view = await viewOf(world.app, world.tenant.admin.token, connection.id);
  assert.equal(view.credentialHealth, 'reconnect_required');
  assert.equal(view.credentialHealthReason, 'credential_expired');
  assert.equal(view.needsReconnect, true);
  assert.equal(view.reconnectActionOwner, 'organization_admin');

  // Waiting for a person: not refreshed or probed again.
  const requests = s.stats.tokenRequests.length + s.stats.mcpRequests;
  assert.equal((await clock.at(2 * HOUR)).credentials, 0);
  assert.equal(s.stats.tokenRequests.length + s.stats.mcpRequests, requests);

  // Connecting again starts over: the new credential is checked at the next run.
  await connectThroughOAuth(world, world.tenant.admin, connection.id);
  assert.equal((await clock.at(2 * HOUR + 1)).ready, 1);
  assert.equal((await viewOf(world.app, world.tenant.admin.token, connection.id)).credentialHealth, 'ready');
});

test('the server answers 401 to a token and again after a refresh: authorization_rejected', async (t) => {
  const s = await world.server({ accessTokenTtlSeconds: 24 * HOUR });
  const connection = await createOAuthConnection(world, s.url, { credentialMode: 'per_member' });
  removeAfter(t, world, connection.id);
  await connectThroughOAuth(world, world.tenant.member, connection.id);
  const clock = world.clock();
  assert.equal((await clock.at(0)).ready, 1, 'validated once');

  s.options.rejectAccessTokens = true;
  const run = await clock.at(HOUR + 1);
  assert.equal(run.reconnectRequired, 1);
  assert.equal(refreshesIssued(s), 1, 'one refresh before the verdict');
  const view = await viewOf(world.app, world.tenant.member.token, connection.id);
  assert.equal(view.credentialHealth, 'reconnect_required');
  assert.equal(view.credentialHealthReason, 'authorization_rejected');
  assert.equal(view.reconnectActionOwner, 'member');
  // The admin's view of the same connection is about their own (absent) credential.
  assert.equal((await viewOf(world.app, world.tenant.admin.token, connection.id)).credentialHealth, 'unknown');
});

test('a 401 that a refreshed token cures: still ready, after one refresh', async (t) => {
  const s = await world.server({ accessTokenTtlSeconds: 24 * HOUR });
  const connection = await createOAuthConnection(world, s.url, { credentialMode: 'shared' });
  removeAfter(t, world, connection.id);
  await connectThroughOAuth(world, world.tenant.admin, connection.id);
  const clock = world.clock();
  assert.equal((await clock.at(0)).ready, 1);

  // The server drops its access tokens (not the grant): the stored token is refused, a new one is not.
  s.expireAccessTokens();
  const run = await clock.at(HOUR + 1);
  assert.deepEqual(
    { ready: run.ready, refreshes: run.refreshes, reconnectRequired: run.reconnectRequired },
    { ready: 1, refreshes: 1, reconnectRequired: 0 },
  );
  assert.equal((await viewOf(world.app, world.tenant.admin.token, connection.id)).credentialHealth, 'ready');
});

test('the first probe after an authorization is refused: post_authorization_validation_failed', async (t) => {
  const s = await world.server({ accessTokenTtlSeconds: 24 * HOUR });
  const connection = await createOAuthConnection(world, s.url, { credentialMode: 'shared' });
  removeAfter(t, world, connection.id);
  await connectThroughOAuth(world, world.tenant.admin, connection.id);
  s.options.rejectAccessTokens = true;
  const run = await world.clock().at(0);
  assert.equal(run.reconnectRequired, 1);
  const view = await viewOf(world.app, world.tenant.admin.token, connection.id);
  assert.equal(view.credentialHealth, 'reconnect_required');
  assert.equal(view.credentialHealthReason, 'post_authorization_validation_failed');
});

test('the server down for fewer runs than the threshold stays ready; from the threshold on, reconnect_required', async (t) => {
  const s = await world.server({ accessTokenTtlSeconds: 24 * HOUR });
  const connection = await createOAuthConnection(world, s.url, { credentialMode: 'shared' });
  removeAfter(t, world, connection.id);
  await connectThroughOAuth(world, world.tenant.admin, connection.id);
  const clock = world.clock();
  assert.equal((await clock.at(0)).ready, 1);
  const checkedAt = (await viewOf(world.app, world.tenant.admin.token, connection.id)).credentialHealthCheckedAt;

  await s.close();
  for (const run of [1, 2]) {
    const summary = await clock.at(run * HOUR + 1);
    assert.equal(summary.inconclusive, 1, `run ${run}`);
    const view = await viewOf(world.app, world.tenant.admin.token, connection.id);
    assert.equal(view.credentialHealth, 'ready', `still ready after ${run} failed run(s)`);
    // Nothing was learned about the credential: its last check stays the one that passed.
    assert.equal(view.credentialHealthCheckedAt, checkedAt);
  }
  const third = await clock.at(3 * HOUR + 1);
  assert.equal(third.reconnectRequired, 1);
  const view = await viewOf(world.app, world.tenant.admin.token, connection.id);
  assert.equal(view.credentialHealth, 'reconnect_required');
  assert.equal(view.credentialHealthReason, 'post_authorization_validation_failed');
  assert.notEqual(view.credentialHealthCheckedAt, checkedAt);
});
