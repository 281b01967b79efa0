// The flow functions end to end against real SDK-built OAuth-protected MCP servers: registration
// (each source), the authorization request, the callback checks, the code exchange with both
// client authentication methods, refresh, expiry and revocation, and the refusal classification.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { discover } from '../../src/modules/mcp-connections/oauth/discovery.ts';
import {
  chooseRegistration,
  registerDynamicClient,
  clientMetadataUrlUsable,
} from '../../src/modules/mcp-connections/oauth/registration.ts';
import {
  buildAuthorizationUrl,
  createPkcePair,
  pkceChallenge,
  selectScopes,
  stepUpScopes,
} from '../../src/modules/mcp-connections/oauth/authorize.ts';
import { authorizationCodeFrom, checkResponseIssuer } from '../../src/modules/mcp-connections/oauth/callback.ts';
import {
  classifyRefusal,
  exchangeAuthorizationCode,
  needsRefresh,
  refreshAccessToken,
  reconnectActionOwner,
} from '../../src/modules/mcp-connections/oauth/tokens.ts';
import { OAuthFlowError } from '../../src/modules/mcp-connections/oauth/errors.ts';
import {
  clientMetadataDocument,
  clientMetadataUrl,
  isolatedCallbackUrl,
  sharedCallbackUrl,
} from '../../src/modules/mcp-connections/oauth/urls.ts';
import type { OAuthClientCredentials } from '../../src/modules/mcp-connections/oauth/registration.ts';
import type { DiscoveryResult } from '../../src/modules/mcp-connections/oauth/discovery.ts';
import { startOAuthMcpServer, type OAuthMcpServer } from '../support/oauth-mcp-server/index.ts';
import { followAuthorization, testFetch } from './helpers.ts';
import { listToolsWith } from './mcp-client.ts';

const PUBLIC_URL = 'http://127.0.0.1:9';
const CONNECTION = 'emc_01jd0000000000000000000000';
const REDIRECT = isolatedCallbackUrl(PUBLIC_URL, CONNECTION);

const closers: Array<() => Promise<void>> = [];
after(async () => {
  for (const close of closers) await close();
});
async function server(options: Parameters<typeof startOAuthMcpServer>[0] = {}): Promise<OAuthMcpServer> {
  const s = await startOAuthMcpServer(options);
  closers.push(() => s.close());
  return s;
}

/** Runs authorize -> (auto approval) -> callback checks -> code exchange, as the service will. */
async function authorizeAndExchange(
  d: DiscoveryResult,
  client: OAuthClientCredentials,
  redirectUri = REDIRECT,
  scopes: string[] = [],
) {
  const pkce = createPkcePair();
  const url = buildAuthorizationUrl({
    authorizationEndpoint: d.metadata.authorization_endpoint,
    clientId: client.clientId,
    redirectUri,
    state: 'opaque-state',
    codeChallenge: pkce.challenge,
    resource: d.resource,
    scopes,
  });
  const back = await followAuthorization(url);
  assert.equal(`${back.origin}${back.pathname}`, redirectUri);
  const query = Object.fromEntries(back.searchParams) as Record<string, string>;
  assert.equal(query.state, 'opaque-state');
  checkResponseIssuer(query, d.issuer, d.metadata.authorization_response_iss_parameter_supported === true);
  const code = authorizationCodeFrom(query);
  return exchangeAuthorizationCode({
    tokenEndpoint: d.metadata.token_endpoint,
    client,
    code,
    codeVerifier: pkce.verifier,
    redirectUri,
    resource: d.resource,
    requestedScopes: scopes,
    fetch: testFetch,
  });
}

test('PKCE pair is S256 of the verifier; scopes: requested, else challenge, else resource metadata', () => {
  const pair = createPkcePair();
  assert.match(pair.verifier, /^[A-Za-z0-9_-]{43}$/);
  assert.equal(pair.challenge, pkceChallenge(pair.verifier));
  // RFC 7636 appendix B test vector.
  assert.equal(
    pkceChallenge('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk'),
    'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
  );
  assert.notEqual(createPkcePair().verifier, pair.verifier);
  assert.deepEqual(selectScopes({ requested: ['a', 'a', 'b'], challengeScope: 'c', resourceScopes: ['d'] }), [
    'a',
    'b',
  ]);
  assert.deepEqual(selectScopes({ requested: [], challengeScope: 'c  e', resourceScopes: ['d'] }), ['c', 'e']);
  assert.deepEqual(selectScopes({ resourceScopes: ['d'] }), ['d']);
  assert.deepEqual(selectScopes({}), []);
  assert.deepEqual(stepUpScopes(['a'], 'a b'), ['a', 'b']);
  assert.equal(stepUpScopes(['a', 'b'], 'b'), null);
  assert.equal(stepUpScopes(['a'], null), null);
});

test('authorization URL carries PKCE S256, resource, state, scopes and keeps the endpoint query', () => {
  const url = new URL(
    buildAuthorizationUrl({
      authorizationEndpoint: 'https://as.example/authorize?tenant=t1&state=theirs',
      clientId: 'c1',
      redirectUri: REDIRECT,
      state: 'ours',
      codeChallenge: 'ch',
      resource: 'https://mcp.example/mcp',
      scopes: ['a', 'b'],
    }),
  );
  assert.equal(url.searchParams.get('tenant'), 't1');
  assert.equal(url.searchParams.getAll('state').join(), 'ours');
  assert.equal(url.searchParams.get('code_challenge_method'), 'S256');
  assert.equal(url.searchParams.get('code_challenge'), 'ch');
  assert.equal(url.searchParams.get('resource'), 'https://mcp.example/mcp');
  assert.equal(url.searchParams.get('scope'), 'a b');
  assert.equal(url.searchParams.get('response_type'), 'code');
  assert.equal(url.searchParams.get('redirect_uri'), REDIRECT);
});

test('registration order: pre-registered, then client metadata document, then dynamic, else setupRequired', async () => {
  const cimd = await server({ clientMetadataDocuments: true });
  const d = await discover({ serverUrl: cimd.url, fetch: testFetch });
  const metadataUrl = clientMetadataUrl(PUBLIC_URL);
  const pre = chooseRegistration({
    preRegistered: { clientId: 'pre', clientSecret: 's', tokenEndpointAuthMethod: 'client_secret_post' },
    metadata: d.metadata,
    clientMetadataUrl: metadataUrl,
  });
  assert.deepEqual(pre, {
    source: 'pre-registered',
    client: { clientId: 'pre', clientSecret: 's', authMethod: 'client_secret_post' },
  });
  const noSecret = chooseRegistration({ preRegistered: { clientId: 'pub' }, metadata: d.metadata });
  assert.equal(noSecret.source === 'pre-registered' && noSecret.client.authMethod, 'none');
  const viaDoc = chooseRegistration({ metadata: d.metadata, clientMetadataUrl: metadataUrl });
  assert.deepEqual(viaDoc, {
    source: 'client-metadata',
    client: { clientId: metadataUrl, clientSecret: null, authMethod: 'none' },
  });
  // A document URL the server could not fetch (plain http to a public host) is not offered.
  assert.equal(clientMetadataUrlUsable('http://orgplane.example/oauth/client-metadata.json'), false);
  assert.equal(clientMetadataUrlUsable('https://orgplane.example/oauth/client-metadata.json'), true);
  const dyn = chooseRegistration({
    metadata: d.metadata,
    clientMetadataUrl: 'http://orgplane.example/oauth/client-metadata.json',
  });
  assert.equal(dyn.source, 'dynamic');

  const none = await server({ dynamicRegistration: false });
  const dn = await discover({ serverUrl: none.url, fetch: testFetch });
  const setup = chooseRegistration({ metadata: dn.metadata, clientMetadataUrl: metadataUrl });
  assert.equal(setup.source, null);
  assert.ok('setupRequired' in setup && setup.setupRequired);
});

test('dynamic registration, reused while valid, then code exchange with the registered auth method', async () => {
  const s = await server();
  const d = await discover({ serverUrl: s.url, fetch: testFetch });
  const plan = chooseRegistration({ metadata: d.metadata, redirectUri: REDIRECT });
  assert.equal(plan.source, 'dynamic');
  assert.equal(plan.source === 'dynamic' && plan.client, null);
  const registered = await registerDynamicClient({ metadata: d.metadata, redirectUris: [REDIRECT], fetch: testFetch });
  assert.equal(s.stats.registrations.length, 1);
  assert.equal(registered.authMethod, 'client_secret_basic');
  assert.ok(registered.clientSecret);
  // Stored and offered again: reused, not registered twice.
  const again = chooseRegistration({ metadata: d.metadata, dynamicClient: registered, redirectUri: REDIRECT });
  assert.equal(again.source === 'dynamic' && again.client?.clientId, registered.clientId);
  // Registered for another callback: not reused.
  const moved = chooseRegistration({ metadata: d.metadata, dynamicClient: registered, redirectUri: `${REDIRECT}x` });
  assert.equal(moved.source === 'dynamic' && moved.client, null);

  const tokens = await authorizeAndExchange(d, registered);
  assert.ok(tokens.accessToken.startsWith('at_'));
  assert.ok(tokens.refreshToken);
  assert.ok(tokens.expiresAt && tokens.expiresAt.getTime() > Date.now());
  const tokenRequest = s.stats.tokenRequests.at(-1)!;
  assert.deepEqual(
    [tokenRequest.grantType, tokenRequest.authMethod, tokenRequest.outcome, tokenRequest.resource],
    ['authorization_code', 'client_secret_basic', 'issued', s.url],
  );
  assert.equal(s.stats.authorizations.at(-1)!.resource, s.url);
  assert.deepEqual(await listToolsWith(s.url, tokens.accessToken), ['whoami']);
});

test('pre-registered clients: client_secret_basic and client_secret_post each used as configured', async () => {
  const s = await server({
    dynamicRegistration: false,
    clients: [
      {
        clientId: 'basic-client',
        clientSecret: 'b-secret with space&amp',
        redirectUris: [REDIRECT],
        tokenEndpointAuthMethod: 'client_secret_basic',
      },
      {
        clientId: 'post-client',
        clientSecret: 'p-secret',
        redirectUris: [REDIRECT],
        tokenEndpointAuthMethod: 'client_secret_post',
      },
    ],
  });
  const d = await discover({ serverUrl: s.url, fetch: testFetch });
  for (const [id, secret, method] of [
    ['basic-client', 'b-secret with space&amp', 'client_secret_basic'],
    ['post-client', 'p-secret', 'client_secret_post'],
  ] as const) {
    const plan = chooseRegistration({
      preRegistered: { clientId: id, clientSecret: secret, tokenEndpointAuthMethod: method },
      metadata: d.metadata,
    });
    assert.equal(plan.source, 'pre-registered');
    const tokens = await authorizeAndExchange(d, (plan as { client: OAuthClientCredentials }).client);
    assert.ok(tokens.accessToken);
    assert.equal(s.stats.tokenRequests.at(-1)!.authMethod, method);
  }
  // The wrong secret is refused by the server, and that reads as authorization_rejected.
  await assert.rejects(
    authorizeAndExchange(d, { clientId: 'post-client', clientSecret: 'wrong', authMethod: 'client_secret_post' }),
    (e: unknown) =>
      e instanceof OAuthFlowError &&
      e.oauthError === 'invalid_client' &&
      classifyRefusal(e) === 'authorization_rejected',
  );
  // A client held to basic that sends post is refused too: the method matters.
  await assert.rejects(
    authorizeAndExchange(d, {
      clientId: 'basic-client',
      clientSecret: 'b-secret with space&amp',
      authMethod: 'client_secret_post',
    }),
    OAuthFlowError,
  );
});

test('client ID metadata document: the server fetches our document and accepts its shared callback', async () => {
  let docServer: Server;
  const publicUrl: string = await new Promise((resolve) => {
    docServer = createServer((req, res) => {
      const url = `http://127.0.0.1:${(docServer.address() as AddressInfo).port}`;
      if (req.url === '/oauth/client-metadata.json') {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify(clientMetadataDocument(url)));
      } else {
        res.statusCode = 404;
        res.end();
      }
    }).listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(docServer.address() as AddressInfo).port}`));
  });
  closers.push(() => new Promise((r) => docServer.close(() => r())));
  const s = await server({ clientMetadataDocuments: true });
  const d = await discover({ serverUrl: s.url, fetch: testFetch });
  const plan = chooseRegistration({ metadata: d.metadata, clientMetadataUrl: clientMetadataUrl(publicUrl) });
  assert.equal(plan.source, 'client-metadata');
  const tokens = await authorizeAndExchange(
    d,
    (plan as { client: OAuthClientCredentials }).client,
    sharedCallbackUrl(publicUrl),
  );
  assert.ok(tokens.accessToken);
  assert.deepEqual(s.stats.clientMetadataFetches.at(-1), clientMetadataUrl(publicUrl));
  assert.equal(s.stats.registrations.length, 0);
  assert.equal(s.stats.tokenRequests.at(-1)!.authMethod, 'none');
  // The isolated callback is not in the document, so the server refuses it.
  await assert.rejects(authorizeAndExchange(d, (plan as { client: OAuthClientCredentials }).client, REDIRECT));
});

test('callback checks: iss of another issuer, missing iss when promised, an error response', async () => {
  assert.throws(
    () => checkResponseIssuer({ iss: 'https://evil.example' }, 'https://as.example/', true),
    (e: unknown) => e instanceof OAuthFlowError && e.code === 'issuer_mismatch',
  );
  assert.throws(
    () => checkResponseIssuer({}, 'https://as.example/', true),
    (e: unknown) => e instanceof OAuthFlowError && e.code === 'issuer_missing',
  );
  assert.doesNotThrow(() => checkResponseIssuer({}, 'https://as.example/', false));
  assert.doesNotThrow(() => checkResponseIssuer({ iss: 'https://as.example' }, 'https://as.example/', true));
  assert.throws(
    () => authorizationCodeFrom({ error: 'access_denied' }),
    (e: unknown) => e instanceof OAuthFlowError && classifyRefusal(e) === 'authorization_rejected',
  );
  assert.throws(
    () => authorizationCodeFrom({}),
    (e: unknown) => e instanceof OAuthFlowError && e.code === 'code_missing',
  );

  // A mix-up: the server answers with another issuer's iss.
  const s = await server({ responseIssuer: 'https://evil.example/' });
  const d = await discover({ serverUrl: s.url, fetch: testFetch });
  const client = await registerDynamicClient({ metadata: d.metadata, redirectUris: [REDIRECT], fetch: testFetch });
  await assert.rejects(
    authorizeAndExchange(d, client),
    (e: unknown) => e instanceof OAuthFlowError && e.code === 'issuer_mismatch',
  );
  // A user who declines: access_denied comes back through the redirect. (The SDK's error
  // redirect carries no iss, so this server does not promise one: RFC 9207 would have us refuse.)
  const deny = await server({ denyAuthorization: true, issParameter: false });
  const dd = await discover({ serverUrl: deny.url, fetch: testFetch });
  const c2 = await registerDynamicClient({ metadata: dd.metadata, redirectUris: [REDIRECT], fetch: testFetch });
  await assert.rejects(
    authorizeAndExchange(dd, c2),
    (e: unknown) => e instanceof OAuthFlowError && e.oauthError === 'access_denied',
  );
});

test('refresh: new access token, rotated refresh token; an expired access token is refused by the MCP server', async () => {
  const s = await server();
  const d = await discover({ serverUrl: s.url, fetch: testFetch });
  const client = await registerDynamicClient({ metadata: d.metadata, redirectUris: [REDIRECT], fetch: testFetch });
  const first = await authorizeAndExchange(d, client);
  s.expireAccessTokens();
  await assert.rejects(listToolsWith(s.url, first.accessToken));
  const refreshed = await refreshAccessToken({
    tokenEndpoint: d.metadata.token_endpoint,
    client,
    refreshToken: first.refreshToken!,
    resource: d.resource,
    scopes: first.scopes,
    fetch: testFetch,
  });
  assert.notEqual(refreshed.accessToken, first.accessToken);
  assert.notEqual(refreshed.refreshToken, first.refreshToken);
  assert.deepEqual(await listToolsWith(s.url, refreshed.accessToken), ['whoami']);
  assert.equal(s.stats.tokenRequests.at(-1)!.grantType, 'refresh_token');
  assert.equal(s.stats.tokenRequests.at(-1)!.resource, s.url);
  // The rotated-out refresh token is dead: invalid_grant, which reads as credential_expired.
  const reused = await refreshAccessToken({
    tokenEndpoint: d.metadata.token_endpoint,
    client,
    refreshToken: first.refreshToken!,
    resource: d.resource,
    scopes: [],
    fetch: testFetch,
  }).catch((e) => e);
  assert.ok(reused instanceof OAuthFlowError);
  assert.equal(reused.phase, 'CONTINUITY_REFRESH');
  assert.equal(reused.oauthError, 'invalid_grant');
  assert.equal(classifyRefusal(reused), 'credential_expired');
  assert.ok(!reused.message.includes(first.refreshToken!));
});

test('a server that does not rotate keeps the old refresh token; revoked tokens cannot be refreshed', async () => {
  const s = await server({ rotateRefreshTokens: false });
  const d = await discover({ serverUrl: s.url, fetch: testFetch });
  const client = await registerDynamicClient({ metadata: d.metadata, redirectUris: [REDIRECT], fetch: testFetch });
  const first = await authorizeAndExchange(d, client);
  const refreshed = await refreshAccessToken({
    tokenEndpoint: d.metadata.token_endpoint,
    client,
    refreshToken: first.refreshToken!,
    resource: d.resource,
    scopes: [],
    fetch: testFetch,
  });
  assert.equal(refreshed.refreshToken, first.refreshToken);
  s.revokeAll();
  await assert.rejects(listToolsWith(s.url, refreshed.accessToken));
  const error = await refreshAccessToken({
    tokenEndpoint: d.metadata.token_endpoint,
    client,
    refreshToken: first.refreshToken!,
    resource: d.resource,
    scopes: [],
    fetch: testFetch,
  }).catch((e) => e);
  assert.equal(classifyRefusal(error), 'credential_expired');
});

test('refusal classification and refresh timing', () => {
  const refusal = (
    phase: ConstructorParameters<typeof OAuthFlowError>[0],
    oauthError?: string,
    httpStatus?: number,
    retryable = false,
  ) => new OAuthFlowError(phase, 'x', 'x', { oauthError, httpStatus, retryable });
  assert.equal(classifyRefusal(refusal('CONTINUITY_REFRESH', 'invalid_grant', 400)), 'credential_expired');
  assert.equal(classifyRefusal(refusal('CONTINUITY_REFRESH', 'invalid_client', 401)), 'authorization_rejected');
  assert.equal(
    classifyRefusal(refusal('AUTH_TOKEN_ACQUISITION', 'unauthorized_client', 400)),
    'authorization_rejected',
  );
  assert.equal(
    classifyRefusal(refusal('AUTH_RESOURCE_VALIDATION', undefined, 401)),
    'post_authorization_validation_failed',
  );
  assert.equal(classifyRefusal(refusal('CONTINUITY_REFRESH', 'temporarily_unavailable', 503, true)), null);
  assert.equal(classifyRefusal(refusal('CONTINUITY_REFRESH', undefined, 502, true)), null);
  assert.equal(classifyRefusal(new Error('x')), null);
  const now = new Date('2026-01-01T00:00:00Z');
  assert.equal(needsRefresh(null, now), false);
  assert.equal(needsRefresh(new Date('2026-01-01T00:00:30Z'), now), true);
  assert.equal(needsRefresh(new Date('2026-01-01T01:00:00Z'), now), false);
  assert.equal(reconnectActionOwner('shared'), 'organization_admin');
  assert.equal(reconnectActionOwner('per_member'), 'member');
});

test("a refusal names the provider's error code only when it is one: text of any other shape (the client secret, control characters) is never repeated", async () => {
  const secret = 'Sx7-client-secret-0123456789';
  // What a hostile or broken authorization server may put in `error`.
  const answers = [secret, `invalid_client\u0000\u001b[31m${'x'.repeat(500)}`, 'invalid client', 'x'.repeat(61)];
  let next = 0;
  const refusing = createServer((request, response) => {
    request.resume();
    const error = next < answers.length * 2 ? answers[Math.floor(next++ / 2)] : 'invalid_client';
    response.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error }));
  });
  await new Promise<void>((resolve) => refusing.listen(0, '127.0.0.1', resolve));
  closers.push(() => new Promise((resolve) => refusing.close(() => resolve())));
  const endpoint = `http://127.0.0.1:${(refusing.address() as AddressInfo).port}/refuse`;
  const metadata = {
    issuer: endpoint,
    authorization_endpoint: endpoint,
    token_endpoint: endpoint,
    registration_endpoint: endpoint,
    response_types_supported: ['code'],
  };
  const client = { clientId: 'c', clientSecret: secret, authMethod: 'client_secret_post' } as OAuthClientCredentials;
  const refusals = async () => [
    (await registerDynamicClient({ metadata, redirectUris: [REDIRECT], fetch: testFetch }).catch(
      (e) => e,
    )) as OAuthFlowError,
    (await refreshAccessToken({
      tokenEndpoint: endpoint,
      client,
      refreshToken: 'r',
      resource: endpoint,
      scopes: [],
      fetch: testFetch,
    }).catch((e) => e)) as OAuthFlowError,
  ];

  for (const answer of answers) {
    const [registration, token] = await refusals();
    assert.equal(registration!.code, 'registration_refused');
    assert.equal(token!.code, 'token_refused');
    for (const error of [registration!, token!]) {
      assert.equal(error.httpStatus, 400);
      assert.equal(error.oauthError, undefined, JSON.stringify(answer));
      assert.ok(!error.message.includes(secret) && !error.message.includes('xxx'), error.message);
      assert.doesNotMatch(error.message, /[\u0000-\u001f]/);
    }
  }
  // A real code is named.
  const [registration, token] = await refusals();
  assert.equal(registration!.oauthError, 'invalid_client');
  assert.equal(token!.oauthError, 'invalid_client');
  assert.match(token!.message, /invalid_client/);
  // The same rule for the error the browser brings back to the callback.
  assert.throws(
    () => authorizationCodeFrom({ error: secret, state: 's' }),
    (error: OAuthFlowError) => error.oauthError === undefined && !error.message.includes(secret),
  );
  assert.throws(
    () => authorizationCodeFrom({ error: 'access_denied', state: 's' }),
    (error: OAuthFlowError) => error.oauthError === 'access_denied',
  );
});

test('a token endpoint that redirects is refused: the code, the verifier and the client secret in the body go nowhere else', async () => {
  const received: string[] = [];
  const elsewhere = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      received.push(body);
      response
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ access_token: 'a', token_type: 'Bearer' }));
    });
  });
  await new Promise<void>((resolve) => elsewhere.listen(0, '127.0.0.1', resolve));
  const elsewhereUrl = `http://localhost:${(elsewhere.address() as AddressInfo).port}/token`;
  const redirecting = createServer((request, response) => {
    request.resume();
    response.writeHead(307, { location: elsewhereUrl }).end();
  });
  await new Promise<void>((resolve) => redirecting.listen(0, '127.0.0.1', resolve));
  closers.push(
    () => new Promise((resolve) => elsewhere.close(() => resolve())),
    () => new Promise((resolve) => redirecting.close(() => resolve())),
  );
  const tokenEndpoint = `http://127.0.0.1:${(redirecting.address() as AddressInfo).port}/token`;
  const client = {
    clientId: 'c',
    clientSecret: 'the-client-secret',
    authMethod: 'client_secret_post',
  } as OAuthClientCredentials;
  const exchange = await exchangeAuthorizationCode({
    tokenEndpoint,
    client,
    code: 'the-code',
    codeVerifier: 'the-verifier',
    redirectUri: REDIRECT,
    resource: tokenEndpoint,
    requestedScopes: [],
    fetch: testFetch,
  }).catch((e) => e);
  const refresh = await refreshAccessToken({
    tokenEndpoint,
    client,
    refreshToken: 'the-refresh-token',
    resource: tokenEndpoint,
    scopes: [],
    fetch: testFetch,
  }).catch((e) => e);
  for (const error of [exchange, refresh]) assert.ok(error instanceof OAuthFlowError, String(error));
  assert.deepEqual(received, []);
});
