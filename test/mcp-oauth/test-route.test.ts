// POST /v1/mcp-connections/{id}/test on OAuth connections: the stored token is refreshed first
// when it is about to expire; a 403 insufficient_scope tries one step-up (a refresh asking for
// the scopes the server names); when that is refused, the next authorization asks for them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { api } from '../support/http.ts';
import {
  connectThroughOAuth,
  createOAuthConnection,
  getConnection,
  startAuthorization,
  useOAuthWorld,
} from './helpers.ts';

const world = useOAuthWorld();

const testRoute = (connectionId: string) =>
  api(world.app.url, world.tenant.admin.token).post(`/v1/mcp-connections/${connectionId}/test`);

test('a token about to expire is refreshed before the probe, which then reaches catalog_ready', async () => {
  const s = await world.server({ accessTokenTtlSeconds: 30 });
  const connection = await createOAuthConnection(world, s.url, { credentialMode: 'shared' });
  await connectThroughOAuth(world, world.tenant.admin, connection.id);
  const tested = await testRoute(connection.id);
  assert.equal(tested.status, 200, tested.text);
  assert.equal(tested.body.ok, true, tested.text);
  assert.equal(tested.body.highestPassed, 'catalog_ready');
  assert.equal(
    s.stats.tokenRequests.filter((r) => r.grantType === 'refresh_token' && r.outcome === 'issued').length,
    1,
  );
});

test('without a credential, the test checks what an authorization needs: not connected yet, registers nothing', async () => {
  const s = await world.server();
  const connection = await createOAuthConnection(world, s.url);
  const tested = await testRoute(connection.id);
  assert.equal(tested.body.ok, false);
  assert.equal(tested.body.highestPassed, 'reachable');
  assert.equal(tested.body.diagnostic.phase, 'AUTH_USER_OR_WORKLOAD');
  assert.equal(tested.body.diagnostic.code, 'not_connected');
  assert.equal(tested.body.diagnostic.actionOwner, 'member');
  assert.equal(s.stats.registrations.length, 0);
  const shared = await createOAuthConnection(world, s.url, { credentialMode: 'shared' });
  const sharedTest = await testRoute(shared.id);
  assert.equal(sharedTest.body.diagnostic.code, 'shared_not_connected');
  assert.equal(sharedTest.body.diagnostic.actionOwner, 'organization_admin');
});

test('setupRequired shows after a test, before anyone starts an authorization; a pinned issuer mismatch is flagged the same way', async () => {
  const noRegistration = await world.server({ dynamicRegistration: false });
  const connection = await createOAuthConnection(world, noRegistration.url);
  assert.equal(
    (await getConnection(world, world.tenant.admin, connection.id)).setupRequired,
    false,
    'unknown until checked',
  );
  const tested = await testRoute(connection.id);
  assert.equal(tested.body.ok, false);
  assert.equal(tested.body.diagnostic.code, 'setup_required');
  assert.equal(tested.body.diagnostic.phase, 'AUTH_CLIENT_REGISTRATION');
  assert.equal(tested.body.diagnostic.actionOwner, 'organization_admin');
  const seen = await getConnection(world, world.tenant.admin, connection.id);
  assert.equal(seen.setupRequired, true);
  assert.equal(seen.oauthClientRequired, true);

  const s = await world.server();
  const pinned = await createOAuthConnection(world, s.url, {
    authorizationServerIssuer: 'https://auth.elsewhere.example',
  });
  const pinnedTest = await testRoute(pinned.id);
  assert.equal(pinnedTest.body.diagnostic.code, 'issuer_mismatch');
  assert.equal((await getConnection(world, world.tenant.admin, pinned.id)).issuerReviewRequired, true);
});

test('403 insufficient_scope: one step-up by refresh, then the probe passes', async () => {
  const s = await world.server({
    scopesSupported: ['files:read', 'files:write'],
    requiredScopes: ['files:write'],
    allowScopeUpgradeOnRefresh: true,
  });
  const connection = await createOAuthConnection(world, s.url, {
    credentialMode: 'shared',
    requestedScopes: ['files:read'],
  });
  await connectThroughOAuth(world, world.tenant.admin, connection.id);
  const tested = await testRoute(connection.id);
  assert.equal(tested.body.ok, true, tested.text);
  const refreshes = s.stats.tokenRequests.filter((r) => r.grantType === 'refresh_token');
  assert.equal(refreshes.length, 1, 'exactly one step-up');
  const seen = await getConnection(world, world.tenant.admin, connection.id);
  assert.deepEqual([...seen.grantedScopes].sort(), ['files:read', 'files:write']);
  assert.equal(seen.credentialHealth, 'ready');
});

test('403 insufficient_scope and a server that will not widen by refresh: reconnect, and the next authorization asks for the scope', async () => {
  const s = await world.server({ scopesSupported: ['files:read', 'files:write'], requiredScopes: ['files:write'] });
  const connection = await createOAuthConnection(world, s.url, {
    credentialMode: 'shared',
    requestedScopes: ['files:read'],
  });
  await connectThroughOAuth(world, world.tenant.admin, connection.id);
  const tested = await testRoute(connection.id);
  assert.equal(tested.body.ok, false);
  assert.equal(tested.body.diagnostic.phase, 'AUTH_RESOURCE_VALIDATION');
  assert.equal(
    s.stats.tokenRequests.filter((r) => r.grantType === 'refresh_token').length,
    1,
    'one step-up attempt, no loop',
  );
  const seen = await getConnection(world, world.tenant.admin, connection.id);
  assert.equal(seen.credentialHealth, 'reconnect_required');
  assert.equal(seen.credentialHealthReason, 'authorization_rejected');
  const again = await startAuthorization(world, world.tenant.admin, connection.id);
  assert.equal(new URL(again.body.authorizationUrl).searchParams.get('scope'), 'files:read files:write');
  // Connecting with the wider grant fixes it.
  await connectThroughOAuth(world, world.tenant.admin, connection.id);
  const retested = await testRoute(connection.id);
  assert.equal(retested.body.ok, true, retested.text);
});

test('a connection deleted while its test steps up scopes: 404, not a key violation', async () => {
  const scopes = { scopesSupported: ['files:read', 'files:write'], requiredScopes: ['files:write'] };
  // A control run counts the MCP requests of a test ending in the step-up: the last is the challenge read.
  const control = await world.server(scopes);
  const first = await createOAuthConnection(world, control.url, {
    credentialMode: 'shared',
    requestedScopes: ['files:read'],
  });
  await connectThroughOAuth(world, world.tenant.admin, first.id);
  const before = control.stats.mcpRequests;
  assert.equal((await testRoute(first.id)).body.ok, false);
  const challengeAt = control.stats.mcpRequests - before;

  let connectionId = '';
  let base = Number.POSITIVE_INFINITY;
  const s = await world.server({
    ...scopes,
    onMcpRequest: async (n) => {
      if (n - base !== challengeAt) return;
      // A delete committed at this moment, straight in the database: DELETE /v1/mcp-connections/{id}
      // also revokes the token at this server, and a revoked token would make this very request a
      // 401 before it got to the 403 the step-up is about.
      const deleted = await world.app.db.query('DELETE FROM mcp_connections WHERE id = $1', [connectionId]);
      assert.equal(deleted.rowCount, 1);
    },
  });
  const connection = await createOAuthConnection(world, s.url, {
    credentialMode: 'shared',
    requestedScopes: ['files:read'],
  });
  connectionId = connection.id;
  await connectThroughOAuth(world, world.tenant.admin, connection.id);
  base = s.stats.mcpRequests;
  const tested = await testRoute(connection.id);
  assert.equal(tested.status, 404, tested.text);
  assert.equal(tested.body.error, 'connection_not_found');
});

test('the MCP server answers 401 to a token just refreshed: reconnect_required, authorization_rejected', async () => {
  // Tokens of 30 s are within the refresh margin: the test refreshes first, successfully.
  const s = await world.server({ accessTokenTtlSeconds: 30 });
  const connection = await createOAuthConnection(world, s.url, { credentialMode: 'shared' });
  await connectThroughOAuth(world, world.tenant.admin, connection.id);
  s.rejectAtResource(true);
  const tested = await testRoute(connection.id);
  assert.equal(tested.status, 200, tested.text);
  assert.equal(tested.body.ok, false);
  assert.equal(tested.body.diagnostic.phase, 'AUTH_RESOURCE_VALIDATION');
  assert.equal(
    s.stats.tokenRequests.filter((r) => r.grantType === 'refresh_token' && r.outcome === 'issued').length,
    1,
    'the refresh succeeded',
  );
  const seen = await getConnection(world, world.tenant.admin, connection.id);
  assert.equal(seen.credentialHealth, 'reconnect_required');
  assert.equal(seen.credentialHealthReason, 'authorization_rejected');
  assert.equal(seen.needsReconnect, true);
  assert.equal(seen.reconnectActionOwner, 'organization_admin');
  // The same refusal of a token that was not just refreshed stays post_authorization_validation_failed.
  const long = await world.server();
  const other = await createOAuthConnection(world, long.url, { credentialMode: 'shared', name: 'Long-lived' });
  await connectThroughOAuth(world, world.tenant.admin, other.id);
  long.rejectAtResource(true);
  assert.equal((await testRoute(other.id)).body.ok, false);
  assert.equal(long.stats.tokenRequests.filter((r) => r.grantType === 'refresh_token').length, 0);
  assert.equal(
    (await getConnection(world, world.tenant.admin, other.id)).credentialHealthReason,
    'post_authorization_validation_failed',
  );
});

test('stepUp (for callers of the server other than the test, a tool call refused with 403): a refresh for the named scopes, else the next authorization asks for them', async () => {
  const scopes = { scopesSupported: ['files:read', 'files:write'], requiredScopes: ['files:write'] };
  const service = world.app.app.mcpOAuth;
  const insufficient = 'Bearer error="insufficient_scope", scope="files:write"';

  const widening = await world.server({ ...scopes, allowScopeUpgradeOnRefresh: true });
  const a = await createOAuthConnection(world, widening.url, {
    credentialMode: 'shared',
    requestedScopes: ['files:read'],
  });
  await connectThroughOAuth(world, world.tenant.admin, a.id);
  // Not an insufficient_scope challenge: nothing to step up to, nothing changed.
  assert.equal(
    await service.stepUp(world.tenant.orgId, a.id, null, ['files:read'], 'Bearer error="invalid_token"'),
    null,
  );
  assert.equal(widening.stats.tokenRequests.filter((r) => r.grantType === 'refresh_token').length, 0);
  const token = await service.stepUp(world.tenant.orgId, a.id, null, ['files:read'], insufficient);
  assert.ok(token, 'a refreshed token');
  assert.equal(
    widening.stats.tokenRequests.filter((r) => r.grantType === 'refresh_token' && r.outcome === 'issued').length,
    1,
  );
  assert.deepEqual([...(await getConnection(world, world.tenant.admin, a.id)).grantedScopes].sort(), [
    'files:read',
    'files:write',
  ]);

  const fixed = await world.server(scopes);
  const b = await createOAuthConnection(world, fixed.url, {
    credentialMode: 'shared',
    requestedScopes: ['files:read'],
  });
  await connectThroughOAuth(world, world.tenant.admin, b.id);
  assert.equal(await service.stepUp(world.tenant.orgId, b.id, null, ['files:read'], insufficient), null);
  assert.equal((await getConnection(world, world.tenant.admin, b.id)).credentialHealth, 'reconnect_required');
  const again = await startAuthorization(world, world.tenant.admin, b.id);
  assert.equal(new URL(again.body.authorizationUrl).searchParams.get('scope'), 'files:read files:write');
  // Another organization's connection id is not found from this one.
  assert.equal(await service.stepUp(world.tenant.otherOrgId, b.id, null, ['files:read'], insufficient), null);
});
