// MCP OAuth routes, every documented error: not an OAuth connection, setup required, discovery
// refusals (issuer mismatch with a pinned issuer, no PKCE), state replay and expiry, an identity
// change or a deletion between authorize and callback, mix-up and denial at the callback, a
// refused code exchange, expired and revoked tokens, and a token the MCP server rejects.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { api } from '../support/http.ts';
import { deriveStateKey, signState } from '../../src/modules/mcp-connections/oauth/state.ts';
import {
  browserOf,
  connectThroughOAuth,
  createOAuthConnection,
  followAuthorization,
  getConnection,
  startAuthorization,
  useOAuthWorld,
} from './helpers.ts';

const world = useOAuthWorld();

async function oauthRows(table: string, connectionId: string): Promise<number> {
  const { rows } = await world.app.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM ${table} WHERE connection_id = $1`,
    [connectionId],
  );
  return rows[0]!.n;
}

test('authorize on a connection that does not use OAuth is 409 not_oauth_connection', async () => {
  const s = await world.server();
  // An API-key connection to the same server would be probed; `none` to a 401 server fails that probe, so use a plain edit-free check:
  const created = await api(world.app.url, world.tenant.admin.token).post('/v1/mcp-connections', {
    name: 'Keyed',
    url: s.url,
    authType: 'apikey',
    credentialMode: 'shared',
    access: { orgWide: true },
    apiKey: s.issueAccessToken('static-client'),
  });
  assert.equal(created.status, 201, created.text);
  const response = await startAuthorization(world, world.tenant.admin, created.body.id);
  assert.equal(response.status, 409);
  assert.equal(response.body.error, 'not_oauth_connection');
});

test('no pre-registered client, no metadata documents, no dynamic registration: 409 oauth_setup_required, shown on the connection', async () => {
  const s = await world.server({ dynamicRegistration: false });
  const connection = await createOAuthConnection(world, s.url);
  const response = await startAuthorization(world, world.tenant.member, connection.id);
  assert.equal(response.status, 409, response.text);
  assert.equal(response.body.error, 'oauth_setup_required');
  assert.equal(response.body.setupRequired, true);
  const seen = await getConnection(world, world.tenant.admin, connection.id);
  assert.equal(seen.setupRequired, true);
  assert.equal(seen.oauthClientRequired, true);
  assert.equal(seen.oauthClientConfigured, false);
  assert.equal(await oauthRows('mcp_oauth_pending_authorizations', connection.id), 0);
});

test('a pinned issuer that the server does not name: 502 with the issuer-discovery diagnostic, flagged for review', async () => {
  const s = await world.server();
  const connection = await createOAuthConnection(world, s.url, {
    authorizationServerIssuer: 'https://auth.elsewhere.example',
  });
  const response = await startAuthorization(world, world.tenant.admin, connection.id);
  assert.equal(response.status, 502, response.text);
  assert.equal(response.body.error, 'oauth_discovery_failed');
  assert.equal(response.body.diagnostic.phase, 'AUTH_ISSUER_DISCOVERY');
  assert.equal(response.body.diagnostic.code, 'issuer_mismatch');
  assert.equal(response.body.diagnostic.actionOwner, 'organization_admin');
  assert.ok(response.body.diagnostic.referenceId);
  assert.equal((await getConnection(world, world.tenant.admin, connection.id)).issuerReviewRequired, true);
  // Correcting the issuer (an edit that keeps the identity) and authorizing again clears the flag.
  const current = await getConnection(world, world.tenant.admin, connection.id);
  const fixed = await api(world.app.url, world.tenant.admin.token).put(`/v1/mcp-connections/${connection.id}`, {
    expectedUpdatedAt: current.updatedAt,
    name: current.name,
    url: current.url,
    authType: 'oauth',
    credentialMode: 'per_member',
    access: { orgWide: true },
    authorizationServerIssuer: s.issuer,
  });
  assert.equal(fixed.status, 200, fixed.text);
  assert.equal((await startAuthorization(world, world.tenant.admin, connection.id)).status, 200);
  assert.equal((await getConnection(world, world.tenant.admin, connection.id)).issuerReviewRequired, false);
});

test('metadata naming another issuer than the pinned one: refused and flagged', async () => {
  const s = await world.server({ advertisedIssuer: 'https://impostor.example/' });
  const connection = await createOAuthConnection(world, s.url, { authorizationServerIssuer: s.issuer });
  const response = await startAuthorization(world, world.tenant.admin, connection.id);
  assert.equal(response.status, 502);
  assert.equal(response.body.diagnostic.code, 'issuer_mismatch');
  assert.equal((await getConnection(world, world.tenant.admin, connection.id)).issuerReviewRequired, true);
});

test('a server without PKCE S256 is refused with a diagnostic', async () => {
  const s = await world.server({ codeChallengeMethods: ['plain'] });
  const connection = await createOAuthConnection(world, s.url);
  const response = await startAuthorization(world, world.tenant.member, connection.id);
  assert.equal(response.status, 502);
  assert.equal(response.body.diagnostic.code, 'pkce_not_supported');
  assert.equal(response.body.diagnostic.actionOwner, 'vendor');
});

test('state replay: the second callback with the same state is refused and stores nothing', async () => {
  const s = await world.server();
  const connection = await createOAuthConnection(world, s.url);
  const { authorize, redirect, callback } = await connectThroughOAuth(world, world.tenant.member, connection.id);
  assert.equal(callback.status, 200);
  const replay = await api(world.app.url).get(`${redirect.pathname}${redirect.search}`, {
    headers: browserOf(authorize),
  });
  assert.equal(replay.status, 400);
  assert.equal(replay.body.error, 'invalid_state');
  assert.equal(
    s.stats.tokenRequests.filter((r) => r.grantType === 'authorization_code').length,
    1,
    'the replayed code never reached the server',
  );
});

test('concurrent callbacks with the same state: exactly one stores', async () => {
  const s = await world.server();
  const connection = await createOAuthConnection(world, s.url);
  const authorize = await startAuthorization(world, world.tenant.member, connection.id);
  const redirect = await followAuthorization(authorize.body.authorizationUrl);
  const results = await Promise.all(
    Array.from({ length: 5 }, () =>
      api(world.app.url).get(`${redirect.pathname}${redirect.search}`, { headers: browserOf(authorize) }),
    ),
  );
  assert.deepEqual(results.map((r) => r.status).sort(), [200, 400, 400, 400, 400]);
});

test('an expired state is 400 state_expired; a state for another callback mode or connection is 400 invalid_state', async () => {
  const key = deriveStateKey(world.app.config.secretKey!);
  const s = await world.server();
  const connection = await createOAuthConnection(world, s.url);
  const expired = signState(
    {
      v: 1,
      id: 'moa_x',
      org: world.tenant.orgId,
      cid: connection.id,
      idf: 'x',
      mid: world.tenant.member.memberId,
      sub: 'member',
      mode: 'isolated-v1',
      exp: Math.floor(Date.now() / 1000) - 5,
    },
    key,
  );
  const late = await api(world.app.url).get(
    `/v1/mcp-connections/${connection.id}/oauth/callback?code=c&state=${expired}`,
  );
  assert.equal(late.status, 400);
  assert.equal(late.body.error, 'state_expired');

  const authorize = await startAuthorization(world, world.tenant.member, connection.id);
  const redirect = await followAuthorization(authorize.body.authorizationUrl);
  // An isolated-v1 state brought to the shared callback.
  const wrongMode = await api(world.app.url).get(`/v1/mcp-connections/oauth/callback${redirect.search}`, {
    headers: browserOf(authorize),
  });
  assert.equal(wrongMode.status, 400);
  assert.equal(wrongMode.body.error, 'invalid_state');
  // ... or to another connection's callback.
  const other = await createOAuthConnection(world, s.url);
  const wrongConnection = await api(world.app.url).get(
    `/v1/mcp-connections/${other.id}/oauth/callback${redirect.search}`,
    { headers: browserOf(authorize) },
  );
  assert.equal(wrongConnection.status, 400);
  // Neither consumed it: the right callback still works.
  const right = await api(world.app.url).get(`${redirect.pathname}${redirect.search}`, {
    headers: browserOf(authorize),
  });
  assert.equal(right.status, 200, right.text);
});

test('identity change between authorize and callback: nothing is stored', async () => {
  const s = await world.server();
  const connection = await createOAuthConnection(world, s.url);
  const authorize = await startAuthorization(world, world.tenant.member, connection.id);
  const redirect = await followAuthorization(authorize.body.authorizationUrl);
  const current = await getConnection(world, world.tenant.admin, connection.id);
  const edited = await api(world.app.url, world.tenant.admin.token).put(`/v1/mcp-connections/${connection.id}`, {
    expectedUpdatedAt: current.updatedAt,
    name: current.name,
    url: current.url,
    authType: 'oauth',
    credentialMode: 'shared',
    access: { orgWide: true },
  });
  assert.equal(edited.status, 200, edited.text);
  assert.equal(edited.body.identityChanged, true);
  const callback = await api(world.app.url).get(`${redirect.pathname}${redirect.search}`, {
    headers: browserOf(authorize),
  });
  assert.ok(callback.status === 400 || callback.status === 409, callback.text);
  assert.equal(await oauthRows('mcp_connection_credentials', connection.id), 0);
  assert.equal((await getConnection(world, world.tenant.member, connection.id)).connected, false);
  assert.equal(s.stats.tokenRequests.filter((r) => r.grantType === 'authorization_code').length, 0);
});

test('identity change racing the callback (pending row still there): the identity check refuses, nothing stored', async () => {
  const s = await world.server();
  const connection = await createOAuthConnection(world, s.url);
  const authorize = await startAuthorization(world, world.tenant.member, connection.id);
  const redirect = await followAuthorization(authorize.body.authorizationUrl);
  // The identity changes without the edit route (as a concurrent edit would between claim and write).
  await world.app.db.query(`UPDATE mcp_connections SET identity_fingerprint = 'changed' WHERE id = $1`, [
    connection.id,
  ]);
  const callback = await api(world.app.url).get(`${redirect.pathname}${redirect.search}`, {
    headers: browserOf(authorize),
  });
  assert.equal(callback.status, 409, callback.text);
  assert.equal(callback.body.error, 'connection_identity_changed');
  assert.equal(await oauthRows('mcp_connection_credentials', connection.id), 0);
});

test('connection deleted between authorize and callback: nothing is stored', async () => {
  const s = await world.server();
  const connection = await createOAuthConnection(world, s.url);
  const authorize = await startAuthorization(world, world.tenant.member, connection.id);
  const redirect = await followAuthorization(authorize.body.authorizationUrl);
  assert.equal(
    (await api(world.app.url, world.tenant.admin.token).delete(`/v1/mcp-connections/${connection.id}`)).status,
    204,
  );
  const callback = await api(world.app.url).get(`${redirect.pathname}${redirect.search}`, {
    headers: browserOf(authorize),
  });
  assert.ok(callback.status === 400 || callback.status === 404, callback.text);
  const { rows } = await world.app.db.query(
    'SELECT count(*)::int AS n FROM mcp_connection_credentials WHERE connection_id = $1',
    [connection.id],
  );
  assert.equal(rows[0].n, 0);
});

test('a mix-up (iss of another issuer) is 400 issuer_mismatch; a declined authorization is 403 authorization_denied', async () => {
  const mixUp = await world.server({ responseIssuer: 'https://other-issuer.example/' });
  const a = await createOAuthConnection(world, mixUp.url);
  const first = await connectThroughOAuth(world, world.tenant.member, a.id);
  assert.equal(first.callback.status, 400);
  assert.equal(first.callback.body.error, 'issuer_mismatch');
  assert.equal(mixUp.stats.tokenRequests.length, 0, 'no code is sent to a token endpoint after a mix-up');

  const declines = await world.server({ denyAuthorization: true, issParameter: false });
  const b = await createOAuthConnection(world, declines.url);
  const second = await connectThroughOAuth(world, world.tenant.member, b.id);
  assert.equal(second.callback.status, 403);
  assert.equal(second.callback.body.error, 'authorization_denied');
  assert.equal(second.callback.body.providerCode, 'access_denied');
});

test('a refused code exchange (wrong client secret) is 502 with a diagnostic; nothing stored, secret not echoed', async () => {
  const s = await world.server({ dynamicRegistration: false });
  const connection = await createOAuthConnection(world, s.url, {
    oauthClient: {
      clientId: 'c-wrong',
      clientSecret: 'the-wrong-secret',
      tokenEndpointAuthMethod: 'client_secret_post',
    },
  });
  s.addClient({
    clientId: 'c-wrong',
    clientSecret: 'the-right-secret',
    redirectUris: [`${world.app.url}/v1/mcp-connections/${connection.id}/oauth/callback`],
    tokenEndpointAuthMethod: 'client_secret_post',
  });
  const { callback } = await connectThroughOAuth(world, world.tenant.member, connection.id);
  assert.equal(callback.status, 502, callback.text);
  assert.equal(callback.body.error, 'oauth_token_exchange_failed');
  assert.equal(callback.body.diagnostic.phase, 'AUTH_TOKEN_ACQUISITION');
  assert.equal(callback.body.diagnostic.actionOwner, 'organization_admin');
  assert.ok(!callback.text.includes('the-wrong-secret'));
  assert.equal(await oauthRows('mcp_connection_credentials', connection.id), 0);
});

test('revoked tokens: refresh is refused, the credential becomes reconnect_required (credential_expired) for the member', async () => {
  const s = await world.server({ accessTokenTtlSeconds: 30 });
  const connection = await createOAuthConnection(world, s.url);
  const { member } = world.tenant;
  await connectThroughOAuth(world, member, connection.id);
  s.revokeAll();
  const result = await world.app.app.mcpOAuth.accessToken(world.tenant.orgId, connection.id, member.memberId);
  assert.deepEqual(result, { status: 'reconnect_required', reason: 'credential_expired' });
  const seen = await getConnection(world, member, connection.id);
  assert.equal(seen.credentialHealth, 'reconnect_required');
  assert.equal(seen.credentialHealthReason, 'credential_expired');
  assert.equal(seen.needsReconnect, true);
  assert.equal(seen.reconnectActionOwner, 'member');
  // Reconnecting makes it healthy again.
  await connectThroughOAuth(world, member, connection.id);
  assert.equal((await getConnection(world, member, connection.id)).credentialHealth, 'ready');
});

test('an expired token without a refresh token: reconnect_required; for a shared identity the admin must act', async () => {
  const s = await world.server({ accessTokenTtlSeconds: 30, issueRefreshTokens: false });
  const connection = await createOAuthConnection(world, s.url, { credentialMode: 'shared' });
  await connectThroughOAuth(world, world.tenant.admin, connection.id);
  const result = await world.app.app.mcpOAuth.accessToken(world.tenant.orgId, connection.id, null);
  assert.deepEqual(result, { status: 'reconnect_required', reason: 'credential_expired' });
  const seen = await getConnection(world, world.tenant.member, connection.id);
  assert.equal(seen.credentialHealth, 'reconnect_required');
  assert.equal(seen.reconnectActionOwner, 'organization_admin');
});

test('a refresh that fails for a transient reason leaves the credential as it was', async () => {
  const s = await world.server({ accessTokenTtlSeconds: 30 });
  const connection = await createOAuthConnection(world, s.url);
  await connectThroughOAuth(world, world.tenant.member, connection.id);
  await s.close();
  const result = await world.app.app.mcpOAuth.accessToken(
    world.tenant.orgId,
    connection.id,
    world.tenant.member.memberId,
  );
  assert.equal(result.status, 'unavailable');
  assert.equal((await getConnection(world, world.tenant.member, connection.id)).credentialHealth, 'ready');
});

test('the MCP server rejects a stored, valid-looking token: the test route reports AUTH_RESOURCE_VALIDATION', async () => {
  const s = await world.server();
  const connection = await createOAuthConnection(world, s.url, { credentialMode: 'shared' });
  await connectThroughOAuth(world, world.tenant.admin, connection.id);
  s.revokeAll();
  const tested = await api(world.app.url, world.tenant.admin.token).post(`/v1/mcp-connections/${connection.id}/test`);
  assert.equal(tested.status, 200);
  assert.equal(tested.body.ok, false);
  assert.equal(tested.body.diagnostic.phase, 'AUTH_RESOURCE_VALIDATION');
  const seen = await getConnection(world, world.tenant.admin, connection.id);
  assert.equal(seen.credentialHealth, 'reconnect_required');
  assert.equal(seen.credentialHealthReason, 'post_authorization_validation_failed');
  assert.equal(seen.reconnectActionOwner, 'organization_admin');
});

test('disconnect when the authorization server is down: 204, the credential is gone, the failure is only logged', async () => {
  const s = await world.server();
  const connection = await createOAuthConnection(world, s.url);
  await connectThroughOAuth(world, world.tenant.member, connection.id);
  await s.close();
  const gone = await api(world.app.url, world.tenant.member.token).delete(
    `/v1/mcp-connections/${connection.id}/credentials`,
  );
  assert.equal(gone.status, 204);
  assert.equal((await getConnection(world, world.tenant.member, connection.id)).connectedForMe, false);
  assert.ok(world.app.logText().includes('MCP OAuth token revocation failed'));
});

test('an expiry past what a date holds (expires_in 1e13) is a token without a known expiry, stored and used, not a 500', async () => {
  const s = await world.server({ accessTokenTtlSeconds: 1e13 });
  const connection = await createOAuthConnection(world, s.url);
  const { member } = world.tenant;
  const { callback } = await connectThroughOAuth(world, member, connection.id);
  assert.equal(callback.status, 200, callback.text);
  assert.equal(await oauthRows('mcp_connection_credentials', connection.id), 1);
  // Used as it is: no refresh is due for a token with no known expiry.
  const result = await world.app.app.mcpOAuth.accessToken(world.tenant.orgId, connection.id, member.memberId);
  assert.ok(result.status === 'ok' && !result.refreshed, JSON.stringify(result));
  assert.equal((await getConnection(world, member, connection.id)).credentialHealth, 'ready');
});
