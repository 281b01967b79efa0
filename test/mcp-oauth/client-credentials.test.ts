// The client credentials grant for a connection's shared identity (oauthClient.grantType
// `client_credentials`), with client_secret_basic and private_key_jwt (RFC 7523), against the SDK-built
// OAuth MCP server, which verifies the secret or the signed assertion itself: the routes' happy path,
// every refusal of the new fields, who may see and set them, and renewal by the background health job.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { api } from '../support/http.ts';
import type { OAuthMcpServer } from '../support/oauth-mcp-server/index.ts';
import { HOUR, removeAfter, useHealthWorld, viewOf } from '../mcp-connections/health-helpers.ts';
import { credentialRows } from '../mcp-connections/helpers.ts';
import { connectThroughOAuth, editBody, startAuthorization } from './helpers.ts';

const world = useHealthWorld({ refreshMarginSeconds: 300 });
const SECRET = 'cc-secret-7f3e9a1c5b2d4e6f8a0b';

function keyPair(type: 'ec' | 'rsa' | 'ed25519'): { pem: string; publicKey: KeyObject } {
  const pair =
    type === 'ec'
      ? generateKeyPairSync('ec', { namedCurve: 'P-256' })
      : type === 'rsa'
        ? generateKeyPairSync('rsa', { modulusLength: 2048 })
        : generateKeyPairSync('ed25519');
  return { pem: pair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), publicKey: pair.publicKey };
}

const ec = keyPair('ec');
const rsa = keyPair('rsa');
let s: OAuthMcpServer;
before(async () => {
  s = await world.server({ accessTokenTtlSeconds: 600 });
  s.addClient({ clientId: 'cc-basic', clientSecret: SECRET, redirectUris: [], clientCredentials: true });
  s.addClient({
    clientId: 'cc-ec',
    redirectUris: [],
    tokenEndpointAuthMethod: 'private_key_jwt',
    publicKey: ec.publicKey,
    clientCredentials: true,
  });
  s.addClient({
    clientId: 'cc-rsa',
    redirectUris: [],
    tokenEndpointAuthMethod: 'private_key_jwt',
    publicKey: rsa.publicKey,
    clientCredentials: true,
  });
  s.addClient({ clientId: 'code-only', clientSecret: SECRET, redirectUris: [] });
});

const admin = () => api(world.app.url, world.tenant.admin.token);

function body(oauthClient: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return {
    name: 'Reports',
    url: s.url,
    authType: 'oauth',
    credentialMode: 'shared',
    access: { orgWide: true },
    oauthClient,
    ...extra,
  };
}

async function create(oauthClient: Record<string, unknown>, t: { after(fn: () => Promise<void>): void }) {
  const created = await admin().post('/v1/mcp-connections', body(oauthClient));
  assert.equal(created.status, 201, created.text);
  removeAfter(t, world, created.body.id);
  return created;
}

const grants = (clientId: string) =>
  s.stats.tokenRequests.filter((r) => r.grantType === 'client_credentials' && r.clientId === clientId);

test('client_secret_basic: created without a browser, the test obtains the token and the server accepts it', async (t) => {
  const created = await create(
    {
      clientId: 'cc-basic',
      clientSecret: SECRET,
      tokenEndpointAuthMethod: 'client_secret_basic',
      grantType: 'client_credentials',
    },
    t,
  );
  assert.equal(created.body.oauthGrantType, 'client_credentials');
  assert.equal(created.body.oauthTokenEndpointAuthMethod, 'client_secret_basic');
  assert.equal(created.body.oauthClientSecretConfigured, true);
  assert.equal(created.body.oauthClientPrivateKeyConfigured, false);
  assert.equal(created.body.oauthClientSigningAlgorithm, null);
  assert.equal(created.body.connected, false);
  assert.ok(!created.text.includes(SECRET));

  const tested = await admin().post(`/v1/mcp-connections/${created.body.id}/test`);
  assert.equal(tested.status, 200, tested.text);
  assert.deepEqual({ ok: tested.body.ok, tools: tested.body.tools }, { ok: true, tools: ['whoami'] });
  assert.deepEqual(
    grants('cc-basic').map((r) => ({ authMethod: r.authMethod, resource: r.resource, outcome: r.outcome })),
    [{ authMethod: 'client_secret_basic', resource: s.url, outcome: 'issued' }],
  );
  assert.equal(s.stats.authorizations.filter((a) => a.clientId === 'cc-basic').length, 0);
  const view = await viewOf(world.app, world.tenant.member.token, created.body.id);
  assert.deepEqual({ connected: view.connected, health: view.credentialHealth }, { connected: true, health: 'ready' });
  // A second test uses the stored token: no second grant.
  assert.equal((await admin().post(`/v1/mcp-connections/${created.body.id}/test`)).body.ok, true);
  assert.equal(grants('cc-basic').length, 1);
});

test('private_key_jwt: an EC key signs ES256 and an RSA key PS256; the server verifies the assertion; the key is write-only', async (t) => {
  const withEc = await create(
    {
      clientId: 'cc-ec',
      privateKey: ec.pem,
      tokenEndpointAuthMethod: 'private_key_jwt',
      grantType: 'client_credentials',
    },
    t,
  );
  assert.equal(withEc.body.oauthTokenEndpointAuthMethod, 'private_key_jwt');
  assert.equal(withEc.body.oauthClientSigningAlgorithm, 'ES256');
  assert.equal(withEc.body.oauthClientPrivateKeyConfigured, true);
  assert.equal(withEc.body.oauthClientSecretConfigured, false);
  const withRsa = await create(
    { clientId: 'cc-rsa', privateKey: rsa.pem, signingAlgorithm: 'PS256', grantType: 'client_credentials' },
    t,
  );
  assert.equal(withRsa.body.oauthTokenEndpointAuthMethod, 'private_key_jwt', 'a key alone means private_key_jwt');
  assert.equal(withRsa.body.oauthClientSigningAlgorithm, 'PS256');

  for (const [connection, clientId] of [
    [withEc, 'cc-ec'],
    [withRsa, 'cc-rsa'],
  ] as const) {
    const tested = await admin().post(`/v1/mcp-connections/${connection.body.id}/test`);
    assert.equal(tested.body.ok, true, tested.text);
    assert.deepEqual(
      grants(clientId).map((r) => [r.authMethod, r.outcome]),
      [['private_key_jwt', 'issued']],
    );
  }
  const shown =
    (await admin().get(`/v1/mcp-connections/${withEc.body.id}`)).text + (await admin().get('/v1/mcp-connections')).text;
  assert.ok(!shown.includes('PRIVATE KEY') && !shown.includes(ec.pem.split('\n')[1]!), 'the key never comes back');
  const { rows } = await world.app.db.query<{ sealed: string }>(
    'SELECT oauth_client_private_key_sealed AS sealed FROM mcp_connections WHERE id = $1',
    [withEc.body.id],
  );
  assert.ok(rows[0]!.sealed && !rows[0]!.sealed.includes('PRIVATE KEY'), 'sealed at rest');

  // An edit naming the same client without the key keeps it (and its algorithm).
  const current = (await admin().get(`/v1/mcp-connections/${withEc.body.id}`)).body;
  const edited = await admin().put(`/v1/mcp-connections/${withEc.body.id}`, {
    ...editBody(current),
    oauthClient: { clientId: 'cc-ec', grantType: 'client_credentials' },
  });
  assert.equal(edited.status, 200, edited.text);
  assert.deepEqual(
    [
      edited.body.oauthClientPrivateKeyConfigured,
      edited.body.oauthClientSigningAlgorithm,
      edited.body.oauthTokenEndpointAuthMethod,
    ],
    [true, 'ES256', 'private_key_jwt'],
  );
  // An algorithm the stored key cannot sign with is refused, not silently dropped.
  const mismatch = await admin().put(`/v1/mcp-connections/${withEc.body.id}`, {
    ...editBody(edited.body),
    oauthClient: { clientId: 'cc-ec', signingAlgorithm: 'RS256' },
  });
  assert.equal(mismatch.status, 400, mismatch.text);
  assert.ok(
    mismatch.body.details.some((d: { path: string[] }) => d.path.join('.') === 'oauthClient.signingAlgorithm'),
    mismatch.text,
  );
  assert.equal((await admin().get(`/v1/mcp-connections/${withEc.body.id}`)).body.oauthClientSigningAlgorithm, 'ES256');
});

test('private_key_jwt also authenticates the authorization code flow: the code exchange and the refresh carry an assertion, no secret', async (t) => {
  const created = await admin().post(
    '/v1/mcp-connections',
    body({ clientId: 'code-ec', privateKey: ec.pem }, { credentialMode: 'per_member' }),
  );
  assert.equal(created.status, 201, created.text);
  removeAfter(t, world, created.body.id);
  assert.deepEqual(
    [created.body.oauthGrantType, created.body.oauthTokenEndpointAuthMethod],
    ['authorization_code', 'private_key_jwt'],
  );
  s.addClient({
    clientId: 'code-ec',
    redirectUris: [created.body.oauthCallbackUrl],
    tokenEndpointAuthMethod: 'private_key_jwt',
    publicKey: ec.publicKey,
  });
  const { callback } = await connectThroughOAuth(world, world.tenant.member, created.body.id);
  assert.equal(callback.status, 200, callback.text);
  assert.equal(callback.body.status, 'connected');
  const refreshed = await world.app.app.mcpOAuth.accessToken(
    world.tenant.orgId,
    created.body.id,
    world.tenant.member.memberId,
    { forceRefresh: true },
  );
  assert.equal(refreshed.status, 'ok');
  const requests = s.stats.tokenRequests
    .filter((r) => r.clientId === 'code-ec')
    .map((r) => [r.grantType, r.authMethod, r.outcome]);
  assert.deepEqual(requests, [
    ['authorization_code', 'private_key_jwt', 'issued'],
    ['refresh_token', 'private_key_jwt', 'issued'],
  ]);
});

test('the background job obtains a new token before the old one expires (no refresh token: the grant again)', async (t) => {
  const created = await create({ clientId: 'cc-basic', clientSecret: SECRET, grantType: 'client_credentials' }, t);
  const before = grants('cc-basic').length;
  assert.equal((await admin().post(`/v1/mcp-connections/${created.body.id}/test`)).body.ok, true);
  assert.equal(grants('cc-basic').length, before + 1);
  const clock = world.clock();
  // 400 s on, the 600 s token is within the 300 s margin.
  const run = await clock.at(400);
  assert.ok(run.refreshes >= 1, JSON.stringify(run));
  assert.equal(grants('cc-basic').length, before + 2);
  assert.equal(
    s.stats.tokenRequests.filter((r) => r.clientId === 'cc-basic' && r.grantType === 'refresh_token').length,
    0,
  );
  const probe = await clock.at(HOUR + 1);
  assert.ok(probe.ready >= 1);
  assert.equal((await viewOf(world.app, world.tenant.admin.token, created.body.id)).credentialHealth, 'ready');
});

test('a refused grant is a failed test with a diagnostic, never a 500; refused after a token was stored, the credential needs the admin', async (t) => {
  const wrong = await create(
    { clientId: 'cc-basic', clientSecret: 'not-the-secret', grantType: 'client_credentials' },
    t,
  );
  const tested = await admin().post(`/v1/mcp-connections/${wrong.body.id}/test`);
  assert.equal(tested.status, 200, tested.text);
  assert.equal(tested.body.ok, false);
  assert.equal(tested.body.diagnostic.phase, 'AUTH_TOKEN_ACQUISITION');
  assert.equal(tested.body.diagnostic.httpStatus, 401);
  assert.ok(!tested.text.includes('not-the-secret'));
  assert.equal((await credentialRows(world.app, wrong.body.id)).length, 0);

  // A client the server does not let use the grant.
  const codeOnly = await create({ clientId: 'code-only', clientSecret: SECRET, grantType: 'client_credentials' }, t);
  assert.equal((await admin().post(`/v1/mcp-connections/${codeOnly.body.id}/test`)).body.ok, false);

  const good = await create({ clientId: 'cc-basic', clientSecret: SECRET, grantType: 'client_credentials' }, t);
  assert.equal((await admin().post(`/v1/mcp-connections/${good.body.id}/test`)).body.ok, true);
  s.options.refuseClientCredentials = 'invalid_client';
  t.after(() => void delete s.options.refuseClientCredentials);
  const service = world.app.app.mcpOAuth;
  const renewed = await service.accessToken(world.tenant.orgId, good.body.id, null, { forceRefresh: true });
  assert.deepEqual(renewed, { status: 'reconnect_required', reason: 'authorization_rejected' });
  const view = await viewOf(world.app, world.tenant.admin.token, good.body.id);
  assert.deepEqual(
    [view.credentialHealth, view.credentialHealthReason, view.reconnectActionOwner],
    ['reconnect_required', 'authorization_rejected', 'organization_admin'],
  );
  // The client fixed at the server: the next test obtains a token again, no browser needed.
  delete s.options.refuseClientCredentials;
  assert.equal((await admin().post(`/v1/mcp-connections/${good.body.id}/test`)).body.ok, true);
  assert.equal((await viewOf(world.app, world.tenant.admin.token, good.body.id)).credentialHealth, 'ready');
});

test('the new fields refuse what cannot work: 400 with the field named', async () => {
  const cases: Array<[string, Record<string, unknown>, Record<string, unknown>, string]> = [
    [
      'a key that is not PEM',
      { clientId: 'c', privateKey: 'not a key', grantType: 'client_credentials' },
      {},
      'privateKey',
    ],
    [
      'a public key',
      { clientId: 'c', privateKey: ec.publicKey.export({ type: 'spki', format: 'pem' }).toString() },
      {},
      'privateKey',
    ],
    [
      'an algorithm the key cannot sign',
      { clientId: 'c', privateKey: rsa.pem, signingAlgorithm: 'ES256' },
      {},
      'privateKey',
    ],
    ['an unknown algorithm', { clientId: 'c', privateKey: ec.pem, signingAlgorithm: 'HS256' }, {}, 'signingAlgorithm'],
    [
      'an unknown auth method',
      { clientId: 'c', clientSecret: SECRET, tokenEndpointAuthMethod: 'tls_client_auth' },
      {},
      'tokenEndpointAuthMethod',
    ],
    ['an unknown grant', { clientId: 'c', clientSecret: SECRET, grantType: 'password' }, {}, 'grantType'],
    [
      'private_key_jwt without a key',
      { clientId: 'c', clientSecret: SECRET, tokenEndpointAuthMethod: 'private_key_jwt' },
      {},
      'privateKey',
    ],
    [
      'client_credentials without a secret or a key',
      { clientId: 'c', grantType: 'client_credentials' },
      {},
      'grantType',
    ],
    [
      'client_credentials on a per_member connection',
      { clientId: 'c', clientSecret: SECRET, grantType: 'client_credentials' },
      { credentialMode: 'per_member' },
      'grantType',
    ],
    ['a key too long', { clientId: 'c', privateKey: 'x'.repeat(16385) }, {}, 'privateKey'],
  ];
  for (const [what, oauthClient, extra, field] of cases) {
    const response = await admin().post('/v1/mcp-connections', body(oauthClient, extra));
    assert.equal(response.status, 400, `${what}: ${response.text}`);
    assert.equal(response.body.error, 'invalid_request', what);
    assert.ok(
      response.body.details.some((d: { path: string[] }) => d.path.join('.') === `oauthClient.${field}`),
      `${what}: ${JSON.stringify(response.body.details)}`,
    );
    assert.ok(!response.text.includes('BEGIN'), `${what}: the key is not echoed`);
  }
});

test('an edit to client_credentials is judged like a create; authorize on such a connection is 409', async (t) => {
  const created = await create({ clientId: 'cc-basic', clientSecret: SECRET }, t);
  const current = (await admin().get(`/v1/mcp-connections/${created.body.id}`)).body;
  assert.equal(current.oauthGrantType, 'authorization_code');
  const perMember = await admin().put(`/v1/mcp-connections/${created.body.id}`, {
    ...editBody(current),
    credentialMode: 'per_member',
    oauthClient: { clientId: 'cc-basic', grantType: 'client_credentials' },
  });
  assert.equal(perMember.status, 400, perMember.text);
  // Another client id drops the stored secret: nothing left to authenticate with.
  const noSecret = await admin().put(`/v1/mcp-connections/${created.body.id}`, {
    ...editBody(current),
    oauthClient: { clientId: 'other', grantType: 'client_credentials' },
  });
  assert.equal(noSecret.status, 400, noSecret.text);
  const edited = await admin().put(`/v1/mcp-connections/${created.body.id}`, {
    ...editBody(current),
    oauthClient: { clientId: 'cc-basic', grantType: 'client_credentials' },
  });
  assert.equal(edited.status, 200, edited.text);
  assert.equal(edited.body.oauthGrantType, 'client_credentials');
  assert.equal(edited.body.oauthClientSecretConfigured, true, 'the same client keeps its secret');
  const authorize = await startAuthorization(world, world.tenant.admin, created.body.id);
  assert.equal(authorize.status, 409);
  assert.equal(authorize.body.error, 'client_credentials_grant');
});

test('security: anonymous 401, a member 403, another organization 404; members never see the secret or the key', async (t) => {
  const payload = body({ clientId: 'cc-ec', privateKey: ec.pem, grantType: 'client_credentials' });
  assert.equal((await api(world.app.url).post('/v1/mcp-connections', payload)).status, 401);
  const byMember = await api(world.app.url, world.tenant.member.token).post('/v1/mcp-connections', payload);
  assert.equal(byMember.status, 403);
  const created = await create({ clientId: 'cc-ec', privateKey: ec.pem, grantType: 'client_credentials' }, t);
  const id = created.body.id;
  for (const [who, token, status] of [
    ['other admin', world.tenant.otherAdmin.token, 404],
    ['outsider', world.tenant.outsider.token, 403],
  ] as const) {
    assert.equal((await api(world.app.url, token).get(`/v1/mcp-connections/${id}`)).status, status, who);
    assert.equal((await api(world.app.url, token).post(`/v1/mcp-connections/${id}/test`)).status, status, who);
  }
  const current = (await admin().get(`/v1/mcp-connections/${id}`)).body;
  const memberEdit = await api(world.app.url, world.tenant.member.token).put(`/v1/mcp-connections/${id}`, {
    ...editBody(current),
    oauthClient: { clientId: 'cc-ec', privateKey: rsa.pem },
  });
  assert.equal(memberEdit.status, 403);
  const otherEdit = await api(world.app.url, world.tenant.otherAdmin.token).put(`/v1/mcp-connections/${id}`, {
    ...editBody(current),
    oauthClient: { clientId: 'cc-ec', privateKey: rsa.pem },
  });
  assert.equal(otherEdit.status, 404);
  assert.equal(
    (await admin().get(`/v1/mcp-connections/${id}`)).body.oauthClientSigningAlgorithm,
    'ES256',
    'neither edit changed the key',
  );
  const seen = await api(world.app.url, world.tenant.member.token).get(`/v1/mcp-connections/${id}`);
  assert.equal(seen.status, 200);
  assert.ok(!seen.text.includes('PRIVATE KEY'));
  // Nothing the grant sent reached the log: neither the key nor an assertion signed with it.
  assert.equal((await admin().post(`/v1/mcp-connections/${id}/test`)).body.ok, true);
  assert.ok(!world.app.logText().includes('PRIVATE KEY') && !world.app.logText().includes('client_assertion'));
});
