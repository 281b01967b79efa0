// Servers of the MCP 2025-03-26 authorization spec (no RFC 9728 protected resource metadata),
// connected end to end through orgplane's routes: metadata at the server's origin, or none at all
// (the default /authorize, /token, /register), the connection recording which path discovery took.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { api } from '../support/http.ts';
import { connectThroughOAuth, createOAuthConnection, getConnection, useOAuthWorld } from './helpers.ts';

const world = useOAuthWorld();

test('2025-03-26, metadata at the origin: connects, tests, and records legacy-metadata', async () => {
  const s = await world.server({ resourceMetadataInChallenge: false, resourceMetadataAt: 'none' });
  const connection = await createOAuthConnection(world, s.url);
  assert.equal(connection.oauthDiscoveryPath, null);
  const { authorize, callback } = await connectThroughOAuth(world, world.tenant.member, connection.id);
  assert.equal(authorize.status, 200, authorize.text);
  assert.equal(callback.status, 200, callback.text);
  assert.equal(callback.body.status, 'connected');
  const authUrl = new URL(authorize.body.authorizationUrl);
  assert.equal(authUrl.searchParams.get('code_challenge_method'), 'S256');
  assert.equal(authUrl.searchParams.get('resource'), s.url);
  const seen = await getConnection(world, world.tenant.member, connection.id);
  assert.equal(seen.oauthDiscoveryPath, 'legacy-metadata');
  assert.equal(seen.connectedForMe, true);
  assert.equal(seen.oauthRegistrationSource, 'dynamic');
});

test('2025-03-26, no metadata at all: the default endpoints are used and recorded; the catalog is taken by the test', async () => {
  const s = await world.server({
    resourceMetadataInChallenge: false,
    resourceMetadataAt: 'none',
    issuerPath: '/tenant-a',
    issParameter: false,
  });
  const connection = await createOAuthConnection(world, s.url, { credentialMode: 'shared' });
  const { callback } = await connectThroughOAuth(world, world.tenant.admin, connection.id);
  assert.equal(callback.status, 200, callback.text);
  const seen = await getConnection(world, world.tenant.admin, connection.id);
  assert.equal(seen.oauthDiscoveryPath, 'legacy-default-endpoints');
  assert.equal(seen.connected, true);
  assert.ok(s.stats.registrations.length >= 1, 'registered at the default /register');
  assert.ok(
    s.stats.tokenRequests.some((request) => request.outcome === 'issued'),
    'a token from the default /token',
  );

  const tested = await api(world.app.url, world.tenant.admin.token).post(`/v1/mcp-connections/${connection.id}/test`);
  assert.equal(tested.status, 200, tested.text);
  assert.equal(tested.body.ok, true, tested.text);
  const tools = await api(world.app.url, world.tenant.member.token).get(`/v1/mcp-connections/${connection.id}/tools`);
  assert.equal(tools.status, 200, tools.text);
  assert.deepEqual(
    tools.body.tools.map((tool: { name: string }) => tool.name),
    ['whoami'],
  );
  assert.deepEqual(tools.body.serverInfo, { name: 'oauth-test-server', version: '1.0.0' });
});
