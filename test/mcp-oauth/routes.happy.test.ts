// MCP OAuth routes, happy paths, against real OAuth-protected MCP servers: each registration
// source, both client authentication methods, both callback modes, per-member and shared
// identities, the test route with a stored token, refresh, and disconnect.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { api } from '../support/http.ts';
import { listToolsWith } from './mcp-client.ts';
import {
  browserOf,
  connectThroughOAuth,
  createOAuthConnection,
  followAuthorization,
  getConnection,
  useOAuthWorld,
} from './helpers.ts';

const world = useOAuthWorld();

test('per_member with dynamic registration: each member connects their own account; one registration serves all', async () => {
  const s = await world.server({ scopesSupported: ['files:read'] });
  const connection = await createOAuthConnection(world, s.url);
  const { member, admin } = world.tenant;

  const first = await connectThroughOAuth(world, member, connection.id);
  const authUrl = new URL(first.authorize.body.authorizationUrl);
  assert.equal(first.authorize.body.callbackMode, 'isolated-v1');
  assert.equal(authUrl.searchParams.get('code_challenge_method'), 'S256');
  assert.equal(authUrl.searchParams.get('resource'), s.url);
  assert.equal(authUrl.searchParams.get('scope'), 'files:read');
  assert.equal(
    authUrl.searchParams.get('redirect_uri'),
    `${world.app.url}/v1/mcp-connections/${connection.id}/oauth/callback`,
  );
  assert.equal(first.redirect.pathname, `/v1/mcp-connections/${connection.id}/oauth/callback`);
  assert.equal(first.callback.status, 200, first.callback.text);
  assert.deepEqual(first.callback.body, {
    status: 'connected',
    connectionId: connection.id,
    subject: 'member',
    grantedScopes: ['files:read'],
  });

  const forMember = await getConnection(world, member, connection.id);
  assert.equal(forMember.connectedForMe, true);
  assert.equal(forMember.connected, true);
  assert.equal(forMember.credentialHealth, 'ready');
  assert.equal(forMember.oauthRegistrationSource, 'dynamic');
  assert.equal(forMember.oauthCallbackMode, 'isolated-v1');
  assert.deepEqual(forMember.grantedScopes, ['files:read']);
  assert.equal(forMember.setupRequired, false);
  // The admin has not connected their own account.
  const forAdmin = await getConnection(world, admin, connection.id);
  assert.equal(forAdmin.connectedForMe, false);
  assert.equal(forAdmin.needsReconnect, true);

  await connectThroughOAuth(world, admin, connection.id);
  assert.equal((await getConnection(world, admin, connection.id)).connectedForMe, true);
  assert.equal(s.stats.registrations.length, 1, 'registered once per connection, reused by the second member');
  const grants = s.stats.tokenRequests.filter((r) => r.grantType === 'authorization_code');
  assert.equal(grants.length, 2);
  assert.ok(
    grants.every((g) => g.authMethod === 'client_secret_basic' && g.outcome === 'issued' && g.resource === s.url),
  );

  // The stored token works: the test route reaches catalog_ready with the admin's credential.
  const tested = await api(world.app.url, admin.token).post(`/v1/mcp-connections/${connection.id}/test`);
  assert.equal(tested.status, 200, tested.text);
  assert.equal(tested.body.ok, true, tested.text);
  assert.equal(tested.body.highestPassed, 'catalog_ready');
  assert.deepEqual(tested.body.tools, ['whoami']);
});

test('shared identity with a pre-registered client (client_secret_basic): an admin connects it for everyone', async () => {
  const s = await world.server({ dynamicRegistration: false });
  const connection = await createOAuthConnection(world, s.url, {
    credentialMode: 'shared',
    oauthClient: {
      clientId: 'orgplane-basic',
      clientSecret: 'basic secret/with:odd&chars',
      tokenEndpointAuthMethod: 'client_secret_basic',
    },
  });
  s.addClient({
    clientId: 'orgplane-basic',
    clientSecret: 'basic secret/with:odd&chars',
    redirectUris: [`${world.app.url}/v1/mcp-connections/${connection.id}/oauth/callback`],
    tokenEndpointAuthMethod: 'client_secret_basic',
  });
  const { callback } = await connectThroughOAuth(world, world.tenant.admin, connection.id);
  assert.equal(callback.status, 200, callback.text);
  assert.equal(callback.body.subject, 'shared');
  assert.equal(s.stats.tokenRequests.at(-1)!.authMethod, 'client_secret_basic');
  assert.equal(s.stats.tokenRequests.at(-1)!.clientId, 'orgplane-basic');
  assert.equal(s.stats.registrations.length, 0);

  // Every member sees the shared identity connected.
  const forMember = await getConnection(world, world.tenant.member, connection.id);
  assert.equal(forMember.connected, true);
  assert.equal(forMember.connectedForMe, true);
  assert.equal(forMember.oauthRegistrationSource, 'pre-registered');
  assert.equal(forMember.oauthClientConfigured, true);
  assert.ok(!JSON.stringify(forMember).includes('basic secret'));
});

test('pre-registered client with client_secret_post', async () => {
  const s = await world.server({ dynamicRegistration: false });
  const connection = await createOAuthConnection(world, s.url, {
    oauthClient: {
      clientId: 'orgplane-post',
      clientSecret: 'post-secret',
      tokenEndpointAuthMethod: 'client_secret_post',
    },
  });
  s.addClient({
    clientId: 'orgplane-post',
    clientSecret: 'post-secret',
    redirectUris: [`${world.app.url}/v1/mcp-connections/${connection.id}/oauth/callback`],
    tokenEndpointAuthMethod: 'client_secret_post',
  });
  const { callback } = await connectThroughOAuth(world, world.tenant.member, connection.id);
  assert.equal(callback.status, 200, callback.text);
  assert.equal(s.stats.tokenRequests.at(-1)!.authMethod, 'client_secret_post');
  assert.equal(s.stats.tokenRequests.at(-1)!.outcome, 'issued');
});

test('client ID metadata document: the server fetches /oauth/client-metadata.json; the shared-v1 callback is used', async () => {
  const doc = await api(world.app.url).get('/oauth/client-metadata.json');
  assert.equal(doc.status, 200);
  assert.equal(doc.body.client_id, `${world.app.url}/oauth/client-metadata.json`);
  assert.deepEqual(doc.body.redirect_uris, [`${world.app.url}/v1/mcp-connections/oauth/callback`]);
  assert.equal(doc.body.token_endpoint_auth_method, 'none');

  const s = await world.server({ clientMetadataDocuments: true });
  const connection = await createOAuthConnection(world, s.url);
  const { authorize, redirect, callback } = await connectThroughOAuth(world, world.tenant.member, connection.id);
  assert.equal(authorize.body.callbackMode, 'shared-v1');
  assert.equal(new URL(authorize.body.authorizationUrl).searchParams.get('client_id'), doc.body.client_id);
  assert.equal(redirect.pathname, '/v1/mcp-connections/oauth/callback');
  assert.equal(callback.status, 200, callback.text);
  assert.deepEqual(s.stats.clientMetadataFetches.at(-1), doc.body.client_id);
  assert.equal(s.stats.registrations.length, 0);
  assert.equal(s.stats.tokenRequests.at(-1)!.authMethod, 'none');
  const seen = await getConnection(world, world.tenant.member, connection.id);
  assert.equal(seen.oauthRegistrationSource, 'client-metadata');
  assert.equal(seen.oauthCallbackMode, 'shared-v1');
  assert.equal(seen.oauthCallbackUrl, `${world.app.url}/v1/mcp-connections/oauth/callback`);
});

test('an OpenID-only authorization server with an issuer path is discovered and used', async () => {
  const s = await world.server({ metadataStyle: 'openid', issuerPath: '/realms/acme' });
  const connection = await createOAuthConnection(world, s.url);
  const { callback } = await connectThroughOAuth(world, world.tenant.member, connection.id);
  assert.equal(callback.status, 200, callback.text);
});

test('refresh: an expiring access token is refreshed once, with the resource, and the new one works', async () => {
  const s = await world.server({ accessTokenTtlSeconds: 30 });
  const connection = await createOAuthConnection(world, s.url);
  const { member } = world.tenant;
  await connectThroughOAuth(world, member, connection.id);
  const service = world.app.app.mcpOAuth;
  const token = await service.accessToken(world.tenant.orgId, connection.id, member.memberId);
  assert.equal(token.status, 'ok');
  assert.equal(token.status === 'ok' && token.refreshed, true, '30 s left is inside the refresh margin');
  const refreshes = s.stats.tokenRequests.filter((r) => r.grantType === 'refresh_token');
  assert.equal(refreshes.length, 1);
  assert.equal(refreshes[0]!.resource, s.url);
  assert.equal(refreshes[0]!.outcome, 'issued');
  assert.equal((await getConnection(world, member, connection.id)).credentialHealth, 'ready');
  assert.deepEqual(await listToolsWith(s.url, (token as { accessToken: string }).accessToken), ['whoami']);
  // The refreshed token is stored: the next call within its life does not refresh again... unless
  // it is inside the margin too, as here (30 s tokens): then it refreshes with the rotated token.
  const again = await service.accessToken(world.tenant.orgId, connection.id, member.memberId);
  assert.equal(again.status, 'ok');
  assert.equal(
    s.stats.tokenRequests.filter((r) => r.grantType === 'refresh_token' && r.outcome === 'issued').length,
    2,
  );
});

test('a token far from expiry is used as stored, without a refresh', async () => {
  const s = await world.server({ accessTokenTtlSeconds: 3600 });
  const connection = await createOAuthConnection(world, s.url);
  await connectThroughOAuth(world, world.tenant.member, connection.id);
  const token = await world.app.app.mcpOAuth.accessToken(
    world.tenant.orgId,
    connection.id,
    world.tenant.member.memberId,
  );
  assert.equal(token.status === 'ok' && token.refreshed, false);
  assert.equal(s.stats.tokenRequests.filter((r) => r.grantType === 'refresh_token').length, 0);
  assert.deepEqual(await listToolsWith(s.url, (token as { accessToken: string }).accessToken), ['whoami']);
});

test("disconnect deletes the caller's own credential only; the shared one is disconnected by an admin", async () => {
  const s = await world.server();
  const perMember = await createOAuthConnection(world, s.url);
  const { member, admin } = world.tenant;
  await connectThroughOAuth(world, member, perMember.id);
  await connectThroughOAuth(world, admin, perMember.id);
  const before = await world.app.app.mcpOAuth.accessToken(world.tenant.orgId, perMember.id, member.memberId);
  assert.equal(before.status, 'ok');
  const gone = await api(world.app.url, member.token).delete(`/v1/mcp-connections/${perMember.id}/credentials`);
  assert.equal(gone.status, 204);
  // The member's tokens were revoked at the server too (RFC 7009): refresh token, then access token.
  assert.deepEqual(
    s.stats.revocations.map((r) => r.kind),
    ['refresh_token', 'access_token'],
  );
  await assert.rejects(listToolsWith(s.url, (before as { accessToken: string }).accessToken));
  assert.equal((await getConnection(world, member, perMember.id)).connectedForMe, false);
  assert.equal((await getConnection(world, admin, perMember.id)).connectedForMe, true);
  // Idempotent.
  assert.equal(
    (await api(world.app.url, member.token).delete(`/v1/mcp-connections/${perMember.id}/credentials`)).status,
    204,
  );

  const shared = await createOAuthConnection(world, s.url, { credentialMode: 'shared' });
  await connectThroughOAuth(world, admin, shared.id);
  assert.equal((await getConnection(world, member, shared.id)).connected, true);
  const refused = await api(world.app.url, member.token).delete(`/v1/mcp-connections/${shared.id}/credentials`);
  assert.equal(refused.status, 403);
  assert.equal((await getConnection(world, member, shared.id)).connected, true);
  assert.equal(
    (await api(world.app.url, admin.token).delete(`/v1/mcp-connections/${shared.id}/credentials`)).status,
    204,
  );
  const after = await getConnection(world, member, shared.id);
  assert.equal(after.connected, false);
  assert.equal(after.reconnectActionOwner, 'organization_admin');
});

test('a browser landing on the callback gets a page (success and failure), with headers that forbid framing and referrers', async () => {
  const s = await world.server();
  const connection = await createOAuthConnection(world, s.url);
  const authorize = await api(world.app.url, world.tenant.member.token).post(
    `/v1/mcp-connections/${connection.id}/oauth/authorize`,
  );
  const redirect = await followAuthorization(authorize.body.authorizationUrl);
  const browser = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };
  const page = await api(world.app.url).get(`${redirect.pathname}${redirect.search}`, {
    headers: browserOf(authorize, browser),
  });
  assert.equal(page.status, 200);
  assert.match(page.headers.get('content-type')!, /^text\/html/);
  assert.equal(page.headers.get('x-frame-options'), 'DENY');
  assert.equal(page.headers.get('referrer-policy'), 'no-referrer');
  assert.match(page.text, /<h1 id="result">Connected<\/h1>/);
  assert.equal((await getConnection(world, world.tenant.member, connection.id)).connectedForMe, true);
  // The replay, from a browser: an error page with the status and the error code, escaped.
  const replay = await api(world.app.url).get(`${redirect.pathname}${redirect.search}`, {
    headers: browserOf(authorize, browser),
  });
  assert.equal(replay.status, 400);
  assert.match(replay.headers.get('content-type')!, /^text\/html/);
  assert.match(replay.text, /Not connected/);
  assert.match(replay.text, /<code id="code">invalid_state<\/code>/);
  // A program still gets JSON.
  const json = await api(world.app.url).get(`${redirect.pathname}${redirect.search}`, {
    headers: browserOf(authorize),
  });
  assert.equal(json.body.error, 'invalid_state');
});
