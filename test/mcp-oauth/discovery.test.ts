// Discovery against real SDK-built OAuth-protected MCP servers on loopback.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseWwwAuthenticate, requestChallenge } from '../../src/modules/mcp-connections/oauth/challenge.ts';
import { chooseAuthorizationServer, discover } from '../../src/modules/mcp-connections/oauth/discovery.ts';
import {
  authorizationServerMetadataUrls,
  fetchAuthorizationServerMetadata,
  fetchProtectedResourceMetadata,
  protectedResourceMetadataUrls,
  sameIssuer,
} from '../../src/modules/mcp-connections/oauth/metadata-fetch.ts';
import { OAuthFlowError } from '../../src/modules/mcp-connections/oauth/errors.ts';
import { startOAuthMcpServer, type OAuthMcpServer } from '../support/oauth-mcp-server/index.ts';
import { strictFetch, testFetch } from './helpers.ts';

const servers: OAuthMcpServer[] = [];
async function server(options: Parameters<typeof startOAuthMcpServer>[0] = {}) {
  const s = await startOAuthMcpServer(options);
  servers.push(s);
  return s;
}
after(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

async function rejectsWith(
  promise: Promise<unknown> | (() => unknown),
  code: string,
  check?: (e: OAuthFlowError) => void,
) {
  await assert.rejects(
    async () => (typeof promise === 'function' ? promise() : promise),
    (error: unknown) => {
      assert.ok(error instanceof OAuthFlowError, `expected OAuthFlowError, got ${String(error)}`);
      assert.equal(error.code, code);
      check?.(error);
      return true;
    },
  );
}

test('WWW-Authenticate: Bearer params, quoted and unquoted, among other challenges', () => {
  assert.deepEqual(parseWwwAuthenticate('Bearer resource_metadata="https://a.example/x", scope="a b"'), {
    resourceMetadataUrl: 'https://a.example/x',
    scope: 'a b',
  });
  assert.deepEqual(parseWwwAuthenticate('Basic realm="x", Bearer error=invalid_token, scope=files:read'), {
    error: 'invalid_token',
    scope: 'files:read',
  });
  assert.deepEqual(parseWwwAuthenticate('Bearer realm="a \\"quoted\\", value"'), {});
  assert.equal(parseWwwAuthenticate('Basic realm="x"'), null);
  assert.equal(parseWwwAuthenticate(''), null);
  assert.equal(parseWwwAuthenticate(null), null);
  // Parameters of another scheme are not taken as the Bearer ones.
  assert.deepEqual(parseWwwAuthenticate('Digest resource_metadata="https://evil.example", Bearer scope="s"'), {
    scope: 's',
  });
  // Garbage never throws.
  assert.doesNotThrow(() => parseWwwAuthenticate('Bearer ===,,, "unterminated'));
});

test('well-known URL order follows the MCP spec', () => {
  assert.deepEqual(protectedResourceMetadataUrls('https://h.example/public/mcp').map(String), [
    'https://h.example/.well-known/oauth-protected-resource/public/mcp',
    'https://h.example/.well-known/oauth-protected-resource',
  ]);
  assert.deepEqual(protectedResourceMetadataUrls('https://h.example/').map(String), [
    'https://h.example/.well-known/oauth-protected-resource',
  ]);
  assert.deepEqual(authorizationServerMetadataUrls('https://auth.example/tenant1').map(String), [
    'https://auth.example/.well-known/oauth-authorization-server/tenant1',
    'https://auth.example/.well-known/openid-configuration/tenant1',
    'https://auth.example/tenant1/.well-known/openid-configuration',
  ]);
  assert.deepEqual(authorizationServerMetadataUrls('https://auth.example').map(String), [
    'https://auth.example/.well-known/oauth-authorization-server',
    'https://auth.example/.well-known/openid-configuration',
  ]);
  assert.ok(sameIssuer('https://a.example/', 'https://a.example'));
  assert.ok(!sameIssuer('https://a.example/t1', 'https://a.example/t1/'));
  assert.ok(!sameIssuer('https://a.example', 'https://b.example'));
});

test('the 401 challenge names the resource metadata, and discovery follows it', async () => {
  const s = await server({ scopesSupported: ['mcp:read'] });
  const challenge = await requestChallenge(s.url, testFetch);
  assert.equal(challenge?.resourceMetadataUrl, s.resourceMetadataUrl);
  const result = await discover({ serverUrl: s.url, fetch: testFetch });
  assert.equal(result.issuer, s.issuer);
  assert.equal(result.resource, s.url);
  assert.equal(result.resourceMetadataUrl, s.resourceMetadataUrl);
  assert.deepEqual(result.resourceScopes, ['mcp:read']);
  assert.ok(result.metadata.code_challenge_methods_supported?.includes('S256'));
  assert.equal(result.metadata.authorization_response_iss_parameter_supported, true);
});

test('without resource_metadata in the challenge, the path-inserted then the root well-known URL are tried', async () => {
  const s = await server({ resourceMetadataInChallenge: false, resourceMetadataAt: 'root' });
  const challenge = await requestChallenge(s.url, testFetch);
  assert.equal(challenge?.resourceMetadataUrl, undefined);
  const found = await fetchProtectedResourceMetadata(s.url, testFetch, challenge);
  assert.equal(found?.metadataUrl, `${s.origin}/.well-known/oauth-protected-resource`);
  assert.deepEqual(s.stats.metadataFetches.slice(0, 2), [
    '/.well-known/oauth-protected-resource/mcp',
    '/.well-known/oauth-protected-resource',
  ]);
});

test('an issuer with a path is found by path insertion; an OpenID-only server by OpenID discovery', async () => {
  const withPath = await server({ issuerPath: '/tenant1' });
  const meta = await fetchAuthorizationServerMetadata(withPath.issuer, testFetch);
  assert.equal(meta.issuer, withPath.issuer);
  assert.deepEqual(withPath.stats.metadataFetches, ['/.well-known/oauth-authorization-server/tenant1']);

  const openid = await server({ issuerPath: '/realm', metadataStyle: 'openid' });
  const oidc = await fetchAuthorizationServerMetadata(openid.issuer, testFetch);
  assert.equal(oidc.issuer, openid.issuer);
  assert.deepEqual(openid.stats.metadataFetches, [
    '/.well-known/oauth-authorization-server/realm',
    '/.well-known/openid-configuration/realm',
  ]);

  const openidRoot = await server({ metadataStyle: 'openid' });
  const full = await discover({ serverUrl: openidRoot.url, fetch: testFetch });
  assert.equal(full.issuer, openidRoot.issuer);
});

test('a server that does not advertise PKCE S256 is refused, also when the field is absent', async () => {
  const plainOnly = await server({ codeChallengeMethods: ['plain'] });
  await rejectsWith(discover({ serverUrl: plainOnly.url, fetch: testFetch }), 'pkce_not_supported', (e) =>
    assert.equal(e.phase, 'AUTH_ISSUER_DISCOVERY'),
  );
  const absent = await server({ codeChallengeMethods: null });
  await rejectsWith(discover({ serverUrl: absent.url, fetch: testFetch }), 'pkce_not_supported');
});

test('metadata naming another issuer is refused; flagged for review when the issuer was pinned', async () => {
  const s = await server({ advertisedIssuer: 'https://evil.example/' });
  await rejectsWith(discover({ serverUrl: s.url, fetch: testFetch }), 'issuer_mismatch', (e) =>
    assert.equal(e.issuerReviewRequired, false),
  );
  await rejectsWith(
    discover({ serverUrl: s.url, fetch: testFetch, pinnedIssuer: s.issuer }),
    'issuer_mismatch',
    (e) => {
      assert.equal(e.issuerReviewRequired, true);
      assert.ok(!e.message.includes('evil.example/x'));
    },
  );
});

test('a pinned issuer that the resource does not list is refused and flagged; one it lists is used', async () => {
  const s = await server();
  await rejectsWith(
    discover({ serverUrl: s.url, fetch: testFetch, pinnedIssuer: 'https://auth.other.example' }),
    'issuer_mismatch',
    (e) => {
      assert.equal(e.issuerReviewRequired, true);
      assert.equal(e.phase, 'AUTH_ISSUER_DISCOVERY');
    },
  );
  // The pin matches with or without the root slash.
  const ok = await discover({ serverUrl: s.url, fetch: testFetch, pinnedIssuer: s.issuer.replace(/\/$/, '') });
  assert.equal(ok.issuer, s.issuer);
});

test('resource metadata for another resource is refused; no metadata and no pin is a 2025-03-26 server, found at its origin', async () => {
  const other = await server();
  const s = await server({ resourceMetadataInChallenge: false, resourceMetadataAt: 'none' });
  // The challenge points at another server's metadata, which describes another resource.
  await rejectsWith(
    fetchProtectedResourceMetadata(s.url, testFetch, { resourceMetadataUrl: other.resourceMetadataUrl }),
    'resource_mismatch',
  );
  const legacy = await discover({ serverUrl: s.url, fetch: testFetch });
  assert.equal(legacy.discoveryPath, 'legacy-metadata');
  assert.equal(legacy.issuer, s.issuer);
  assert.equal(legacy.resource, s.url);
  assert.equal(legacy.resourceMetadataUrl, null);
  // With a pinned issuer the authorization server can still be found.
  const pinned = await discover({ serverUrl: s.url, fetch: testFetch, pinnedIssuer: s.issuer });
  assert.equal(pinned.discoveryPath, 'configured-issuer');
  assert.equal(pinned.issuer, s.issuer);
  assert.equal(pinned.resource, s.url);
  await rejectsWith(
    () =>
      chooseAuthorizationServer({ metadata: { resource: s.url, authorization_servers: [] }, metadataUrl: 'x' }, null),
    'authorization_server_missing',
  );
});

test('2025-03-26 without any metadata: the default endpoints at the origin; metadata of another issuer is refused', async () => {
  // Its metadata lives under the issuer path only, so the origin has none: the defaults apply.
  const s = await server({ resourceMetadataInChallenge: false, resourceMetadataAt: 'none', issuerPath: '/tenant-a' });
  const found = await discover({ serverUrl: s.url, fetch: testFetch });
  const origin = new URL(s.url).origin;
  assert.equal(found.discoveryPath, 'legacy-default-endpoints');
  assert.equal(found.issuer, origin);
  assert.equal(found.metadata.authorization_endpoint, `${origin}/authorize`);
  assert.equal(found.metadata.token_endpoint, `${origin}/token`);
  assert.equal(found.metadata.registration_endpoint, `${origin}/register`);
  assert.ok(
    s.stats.metadataFetches.includes('/.well-known/oauth-authorization-server'),
    JSON.stringify(s.stats.metadataFetches),
  );
  // Metadata at the origin naming another issuer is a mix-up risk: refused.
  const liar = await server({
    resourceMetadataInChallenge: false,
    resourceMetadataAt: 'none',
    advertisedIssuer: 'https://elsewhere.example/',
  });
  await rejectsWith(discover({ serverUrl: liar.url, fetch: testFetch }), 'issuer_mismatch');
});

test("2025-03-26 metadata at the origin may name an issuer with a path there (the conformance suite's server); another port is another origin, refused", async () => {
  // No RFC 9728 anywhere; the origin's RFC 8414 document names `<origin>/oauth` (or `issuerFor`'s
  // answer), its endpoints under it: the MCP conformance suite's 2025-03-26 back-compat server.
  let issuerFor = (origin: string) => `${origin}/oauth`;
  const legacy = createServer((request, response) => {
    const origin = `http://127.0.0.1:${(legacy.address() as AddressInfo).port}`;
    request.resume();
    if (request.url === '/.well-known/oauth-authorization-server') {
      response.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          issuer: issuerFor(origin),
          authorization_endpoint: `${origin}/oauth/authorize`,
          token_endpoint: `${origin}/oauth/token`,
          registration_endpoint: `${origin}/oauth/register`,
          response_types_supported: ['code'],
          code_challenge_methods_supported: ['S256'],
        }),
      );
    } else if (request.url === '/mcp') {
      response.writeHead(401, { 'www-authenticate': 'Bearer error="invalid_token"' }).end();
    } else {
      response.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => legacy.listen(0, '127.0.0.1', resolve));
  after(() => new Promise<void>((resolve) => legacy.close(() => resolve())));
  const origin = `http://127.0.0.1:${(legacy.address() as AddressInfo).port}`;
  const found = await discover({ serverUrl: `${origin}/mcp`, fetch: testFetch });
  assert.equal(found.discoveryPath, 'legacy-metadata');
  assert.equal(found.issuer, `${origin}/oauth`);
  assert.equal(found.metadata.token_endpoint, `${origin}/oauth/token`);
  assert.equal(found.resource, `${origin}/mcp`);
  issuerFor = (at) => `${at.replace(/:\d+$/, '')}:1/oauth`;
  await rejectsWith(discover({ serverUrl: `${origin}/mcp`, fetch: testFetch }), 'issuer_mismatch');
  issuerFor = (at) => `${at}/oauth?tenant=a`;
  await rejectsWith(discover({ serverUrl: `${origin}/mcp`, fetch: testFetch }), 'issuer_mismatch');
});

test('an unreachable server is a retryable discovery failure', async () => {
  const s = await server();
  const url = s.url;
  await s.close();
  servers.splice(servers.indexOf(s), 1);
  await rejectsWith(discover({ serverUrl: url, fetch: testFetch }), 'unreachable', (e) =>
    assert.equal(e.retryable, true),
  );
});

test('through the guarded client without a loopback allowance, discovery is refused by policy', async () => {
  const s = await server();
  await rejectsWith(discover({ serverUrl: s.url, fetch: strictFetch }), 'address_blocked', (e) => {
    assert.equal(e.retryable, false);
    assert.equal(e.phase, 'AUTH_RESOURCE_DISCOVERY');
  });
  assert.equal(s.stats.mcpRequests, 0);
  // A resource_metadata URL pointing at a blocked address is refused the same way.
  await rejectsWith(
    fetchProtectedResourceMetadata('https://mcp.example/mcp', strictFetch, {
      resourceMetadataUrl: 'http://169.254.169.254/latest/meta-data',
    }),
    'address_blocked',
  );
});
