// A real OAuth-protected MCP server for tests, on loopback over HTTP, built from the MCP SDK:
// its authorization handlers (`mcpAuthRouter`: authorize, token, register, revoke), its bearer
// middleware (`requireBearerAuth`) in front of a Streamable HTTP MCP server with one tool, and an
// in-memory provider that approves every authorization request at once (no login page).
//
// The test controls what a real deployment would vary: which registrations it accepts
// (pre-registered clients with client_secret_basic, client_secret_post or private_key_jwt, dynamic
// registration, client ID metadata documents), the client credentials grant, token lifetimes,
// refresh token rotation, revocation, the issuer it advertises, PKCE support, where its metadata
// lives (path-inserted or root, RFC 8414 or OpenID), whether its 401 names the resource metadata,
// and RFC 9207 `iss` in responses. Counters record what clients did, so tests can assert on the
// protocol, not on our own code. One file per protocol step:
//   provider.ts              state, clients, codes, tokens (the SDK provider)
//   metadata.ts              authorization server and protected resource metadata
//   client-authentication.ts the token endpoint's client authentication (Basic, post, private_key_jwt)
//   client-credentials.ts    the client credentials grant
//   mcp-endpoint.ts          the protected MCP endpoint

import { randomBytes, randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import { mcpAuthRouter } from '@modelcontextprotocol/sdk/server/auth/router.js';
import { authenticateClients } from './client-authentication.ts';
import { serveClientCredentials } from './client-credentials.ts';
import { serveMcp } from './mcp-endpoint.ts';
import { serveMetadata } from './metadata.ts';
import { clientRecord, createContext, createProvider } from './provider.ts';
import type { OAuthMcpServer, OAuthMcpServerOptions } from './types.ts';

export type { OAuthMcpServer, OAuthMcpServerOptions } from './types.ts';

export async function startOAuthMcpServer(options: OAuthMcpServerOptions = {}): Promise<OAuthMcpServer> {
  const app = express();
  app.disable('x-powered-by');
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const port = (server.address() as AddressInfo).port;
  const origin = `http://127.0.0.1:${port}`;
  const issuerPath = (options.issuerPath ?? '').replace(/\/+$/, '');
  const issuerUrl = new URL(`${origin}${issuerPath}/`);
  // A bare origin is advertised as "http://host:port/", as the SDK writes it; with a path, no trailing slash.
  const issuer = issuerPath ? `${origin}${issuerPath}` : issuerUrl.href;
  const mcpPath = options.mcpPath ?? '/mcp';
  const mcpUrl = `${origin}${mcpPath}`;
  const prmAt = options.resourceMetadataAt ?? 'path';
  const resourceMetadataUrl =
    prmAt === 'root'
      ? `${origin}/.well-known/oauth-protected-resource`
      : `${origin}/.well-known/oauth-protected-resource${mcpPath}`;

  const ctx = createContext(options, issuer);
  const { provider, clientsStore, issueTokens } = createProvider(ctx);
  const base = serveMetadata(app, ctx, provider, { origin, issuerUrl, issuerPath, mcpPath, mcpUrl, prmAt });
  const tokenPath = new URL(base.token_endpoint).pathname;
  const revocationPath = base.revocation_endpoint ? new URL(base.revocation_endpoint).pathname : undefined;
  authenticateClients(app, ctx, (clientId) => Promise.resolve(clientsStore.getClient(clientId)), {
    origin,
    tokenPath,
    revocationPath,
  });
  serveClientCredentials(app, ctx, tokenPath, issueTokens);

  const rl = { rateLimit: false as const };
  // The SDK places its endpoints at the origin's root (/authorize, /token, ...) whatever the issuer path.
  app.use(
    mcpAuthRouter({
      provider,
      issuerUrl,
      scopesSupported: options.scopesSupported,
      resourceServerUrl: new URL(mcpUrl),
      authorizationOptions: rl,
      tokenOptions: rl,
      clientRegistrationOptions: { ...rl, clientSecretExpirySeconds: 0 },
      revocationOptions: rl,
    }),
  );
  serveMcp(app, ctx, provider, mcpPath, resourceMetadataUrl);

  let closing: Promise<void> | undefined;
  return {
    url: mcpUrl,
    origin,
    issuer,
    resourceMetadataUrl,
    stats: ctx.stats,
    options,
    expireAccessTokens() {
      for (const record of ctx.accessTokens.values()) record.expiresAt = Math.floor(Date.now() / 1000) - 1;
    },
    revokeAll() {
      for (const record of ctx.accessTokens.values()) record.revoked = true;
      for (const record of ctx.refreshTokens.values()) record.revoked = true;
    },
    addClient(c) {
      ctx.clients.set(c.clientId, clientRecord(c));
    },
    rejectAtResource(on) {
      ctx.rejectingAtResource = on;
    },
    issueAccessToken(clientId, scopes = [], ttlSeconds = 3600) {
      const token = `at_${randomBytes(24).toString('base64url')}`;
      ctx.accessTokens.set(token, {
        clientId,
        scopes,
        resource: mcpUrl,
        expiresAt: Math.floor(Date.now() / 1000) + ttlSeconds,
        revoked: false,
        grantId: randomUUID(),
      });
      return token;
    },
    close: () => {
      // Idempotent: a test may stop the server early to simulate an outage.
      closing ??= new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      });
      return closing;
    },
  };
}
