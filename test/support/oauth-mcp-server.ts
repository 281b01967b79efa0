// A real OAuth-protected MCP server for tests, on loopback over HTTP, built from the MCP SDK:
// its authorization handlers (`mcpAuthRouter`: authorize, token, register, revoke), its bearer
// middleware (`requireBearerAuth`) in front of a Streamable HTTP MCP server with one tool, and an
// in-memory provider that approves every authorization request at once (no login page).
//
// The test controls what a real deployment would vary: which registrations it accepts
// (pre-registered clients with client_secret_basic or client_secret_post, dynamic registration,
// client ID metadata documents), token lifetimes, refresh token rotation, revocation, the issuer
// it advertises, PKCE support, where its metadata lives (path-inserted or root, RFC 8414 or
// OpenID), whether its 401 names the resource metadata, and RFC 9207 `iss` in responses.
// Counters record what clients did, so tests can assert on the protocol, not on our own code.

import { randomBytes, randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import type { Request, Response, NextFunction } from 'express';
import * as z from 'zod';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { mcpAuthRouter, createOAuthMetadata } from '@modelcontextprotocol/sdk/server/auth/router.js';
import { requireBearerAuth } from '@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js';
import type { OAuthServerProvider, AuthorizationParams } from '@modelcontextprotocol/sdk/server/auth/provider.js';
import type { OAuthRegisteredClientsStore } from '@modelcontextprotocol/sdk/server/auth/clients.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { InvalidGrantError, InvalidTokenError, InvalidScopeError, AccessDeniedError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { OAuthClientInformationFull, OAuthTokens, OAuthTokenRevocationRequest } from '@modelcontextprotocol/sdk/shared/auth.js';

export interface PreRegisteredTestClient {
  clientId: string;
  clientSecret?: string;
  redirectUris: string[];
  tokenEndpointAuthMethod?: 'client_secret_basic' | 'client_secret_post' | 'none';
}

export interface OAuthMcpServerOptions {
  /** RFC 7591 registration endpoint (default true). */
  dynamicRegistration?: boolean;
  /** Holds each registration this long before answering, so concurrent registrations overlap. */
  registrationDelayMs?: number;
  /** Accept https/http URLs as client ids and fetch them as client ID metadata documents (default false). */
  clientMetadataDocuments?: boolean;
  clients?: PreRegisteredTestClient[];
  /** Access token lifetime (default 3600). 0 or less issues tokens that are already expired. */
  accessTokenTtlSeconds?: number;
  issueRefreshTokens?: boolean;
  rotateRefreshTokens?: boolean;
  scopesSupported?: string[];
  /** Scopes the MCP endpoint demands (403 insufficient_scope otherwise). */
  requiredScopes?: string[];
  /** Let a refresh grant scopes beyond the original grant (a step-up); default: refused, invalid_scope (RFC 6749 §6). */
  allowScopeUpgradeOnRefresh?: boolean;
  /** Issuer path, e.g. '/tenant1': metadata then sits at the path-inserted well-known URLs. */
  issuerPath?: string;
  metadataStyle?: 'oauth' | 'openid';
  /** Overrides code_challenge_methods_supported; null leaves it out. */
  codeChallengeMethods?: string[] | null;
  /** Makes the metadata name this issuer instead of its own (a misconfigured or hostile server). */
  advertisedIssuer?: string;
  /** Awaited before the MCP endpoint answers its nth POST (n counted from 1): a test acts at that moment. */
  onMcpRequest?: (n: number) => Promise<void>;
  /** The issuer(s) listed in the protected resource metadata (default: its own). */
  authorizationServers?: string[];
  /** Put resource_metadata in the 401 challenge (default true). */
  resourceMetadataInChallenge?: boolean;
  /** Where the protected resource metadata is served: 'path' (path-inserted), 'root', 'both', 'none'. */
  resourceMetadataAt?: 'path' | 'root' | 'both' | 'none';
  /** RFC 9207: add `iss` to authorization responses and advertise it (default true). */
  issParameter?: boolean;
  /** Value of `iss` in responses when it should lie (mix-up tests). */
  responseIssuer?: string;
  /** Answer every authorization request with error=access_denied. */
  denyAuthorization?: boolean;
  /** MCP endpoint path (default '/mcp'). */
  mcpPath?: string;
  /**
   * Read at every MCP request: the endpoint answers 401 invalid_token to every access token, even one
   * just issued (a server that no longer accepts this client), while the token endpoint keeps issuing.
   */
  rejectAccessTokens?: boolean;
  /** Claims of an OpenID Connect ID token added to every token response (an unsigned JWT: header.claims.signature). */
  idTokenClaims?: Record<string, unknown>;
  /** Fields added to every token response (providers' own: user_id, tenant_id, ...). */
  tokenResponseExtras?: Record<string, unknown>;
}

interface CodeRecord {
  clientId: string;
  challenge: string;
  redirectUri: string;
  scopes: string[];
  resource?: string;
}

interface TokenRecord {
  clientId: string;
  scopes: string[];
  resource?: string;
  expiresAt: number; // seconds
  revoked: boolean;
  grantId: string;
}

interface RefreshRecord {
  clientId: string;
  scopes: string[];
  resource?: string;
  revoked: boolean;
  grantId: string;
}

export interface TokenRequestRecord {
  grantType: string;
  clientId: string;
  authMethod: 'client_secret_basic' | 'client_secret_post' | 'none';
  resource?: string;
  outcome: 'issued' | 'refused';
}

export interface OAuthMcpServer {
  /** The MCP endpoint (what a connection's url is). */
  url: string;
  origin: string;
  issuer: string;
  resourceMetadataUrl: string;
  stats: {
    registrations: OAuthClientInformationFull[];
    metadataFetches: string[];
    clientMetadataFetches: string[];
    authorizations: Array<{ clientId: string; redirectUri: string; scopes: string[]; resource?: string; state?: string }>;
    tokenRequests: TokenRequestRecord[];
    /** Tokens revoked through the revocation endpoint (RFC 7009), by kind. */
    revocations: Array<{ clientId: string; kind: 'access_token' | 'refresh_token' | 'unknown' }>;
    mcpRequests: number;
  };
  options: OAuthMcpServerOptions;
  /** Marks every access token issued so far as expired. */
  expireAccessTokens(): void;
  /** Revokes every token (access and refresh) issued so far, as an administrator would. */
  revokeAll(): void;
  /** Registers a client after start (its redirect URIs often depend on ids created later). */
  addClient(client: PreRegisteredTestClient): void;
  /**
   * The MCP endpoint refuses every access token (401 invalid_token) while on, tokens issued later
   * included, although the token endpoint goes on issuing and refreshing them: a resource that
   * no longer accepts the grant its authorization server still honours.
   */
  rejectAtResource(on: boolean): void;
  /** Issues an access token directly (as if a grant had happened), for resource-side tests. */
  issueAccessToken(clientId: string, scopes?: string[], ttlSeconds?: number): string;
  close(): Promise<void>;
}

function oauthError(res: Response, status: number, error: string, description: string) {
  res.status(status).json({ error, error_description: description });
}

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
  const prmPathUrl = `${origin}/.well-known/oauth-protected-resource${mcpPath}`;
  const prmRootUrl = `${origin}/.well-known/oauth-protected-resource`;
  const prmAt = options.resourceMetadataAt ?? 'path';
  const resourceMetadataUrl = prmAt === 'root' ? prmRootUrl : prmPathUrl;

  const stats: OAuthMcpServer['stats'] = {
    registrations: [],
    metadataFetches: [],
    clientMetadataFetches: [],
    authorizations: [],
    tokenRequests: [],
    revocations: [],
    mcpRequests: 0,
  };
  const clients = new Map<string, OAuthClientInformationFull>();
  for (const c of options.clients ?? []) {
    clients.set(c.clientId, {
      client_id: c.clientId,
      client_secret: c.clientSecret,
      redirect_uris: c.redirectUris,
      token_endpoint_auth_method: c.tokenEndpointAuthMethod ?? (c.clientSecret ? 'client_secret_basic' : 'none'),
    });
  }
  const codes = new Map<string, CodeRecord>();
  const accessTokens = new Map<string, TokenRecord>();
  const refreshTokens = new Map<string, RefreshRecord>();
  const ttl = () => options.accessTokenTtlSeconds ?? 3600;
  let rejectingAtResource = false;
  const accountFields = (): Record<string, unknown> => {
    const fields: Record<string, unknown> = { ...options.tokenResponseExtras };
    if (options.idTokenClaims) {
      const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
      fields.id_token = `${part({ alg: 'RS256', typ: 'JWT' })}.${part({ iss: issuer, aud: 'client', iat: Math.floor(Date.now() / 1000), ...options.idTokenClaims })}.${randomBytes(32).toString('base64url')}`;
    }
    return fields;
  };

  async function fetchClientMetadataDocument(clientId: string): Promise<OAuthClientInformationFull | undefined> {
    stats.clientMetadataFetches.push(clientId);
    try {
      const response = await fetch(clientId, { headers: { accept: 'application/json' } });
      if (!response.ok) return undefined;
      const doc = (await response.json()) as Record<string, unknown>;
      // The document must name itself as the client id.
      if (doc.client_id !== clientId || !Array.isArray(doc.redirect_uris)) return undefined;
      return {
        client_id: clientId,
        redirect_uris: doc.redirect_uris as string[],
        token_endpoint_auth_method: 'none',
        client_name: typeof doc.client_name === 'string' ? doc.client_name : undefined,
      };
    } catch {
      return undefined;
    }
  }

  const clientsStore: OAuthRegisteredClientsStore = {
    async getClient(clientId) {
      const known = clients.get(clientId);
      if (known) return known;
      if (options.clientMetadataDocuments && /^https?:\/\//.test(clientId)) return fetchClientMetadataDocument(clientId);
      return undefined;
    },
    ...(options.dynamicRegistration === false
      ? {}
      : {
          async registerClient(client: Omit<OAuthClientInformationFull, 'client_id' | 'client_id_issued_at'>) {
            if (options.registrationDelayMs) await new Promise((resolve) => setTimeout(resolve, options.registrationDelayMs));
            const full = { ...client, client_id: randomUUID(), client_id_issued_at: Math.floor(Date.now() / 1000) } as OAuthClientInformationFull;
            clients.set(full.client_id, full);
            stats.registrations.push(full);
            return full;
          },
        }),
  };

  function issueTokens(clientId: string, scopes: string[], resource: string | undefined, grantId: string): OAuthTokens {
    const accessToken = `at_${randomBytes(24).toString('base64url')}`;
    accessTokens.set(accessToken, {
      clientId,
      scopes,
      resource,
      expiresAt: Math.floor(Date.now() / 1000) + ttl(),
      revoked: false,
      grantId,
    });
    const tokens: OAuthTokens = { access_token: accessToken, token_type: 'Bearer', expires_in: ttl(), scope: scopes.join(' '), ...accountFields() };
    if (options.issueRefreshTokens !== false) {
      const refreshToken = `rt_${randomBytes(24).toString('base64url')}`;
      refreshTokens.set(refreshToken, { clientId, scopes, resource, revoked: false, grantId });
      tokens.refresh_token = refreshToken;
    }
    return tokens;
  }

  const provider: OAuthServerProvider = {
    get clientsStore() {
      return clientsStore;
    },
    async authorize(client: OAuthClientInformationFull, params: AuthorizationParams, res: Response) {
      stats.authorizations.push({
        clientId: client.client_id,
        redirectUri: params.redirectUri,
        scopes: params.scopes ?? [],
        resource: params.resource?.href,
        state: params.state,
      });
      if (options.denyAuthorization) throw new AccessDeniedError('The user declined');
      const code = randomBytes(16).toString('base64url');
      codes.set(code, {
        clientId: client.client_id,
        challenge: params.codeChallenge,
        redirectUri: params.redirectUri,
        scopes: params.scopes ?? [],
        resource: params.resource?.href,
      });
      const target = new URL(params.redirectUri);
      target.searchParams.set('code', code);
      if (params.state !== undefined) target.searchParams.set('state', params.state);
      if (options.issParameter !== false) target.searchParams.set('iss', options.responseIssuer ?? issuer);
      res.redirect(302, target.href);
    },
    async challengeForAuthorizationCode(client, code) {
      const record = codes.get(code);
      if (!record || record.clientId !== client.client_id) throw new InvalidGrantError('Unknown authorization code');
      return record.challenge;
    },
    async exchangeAuthorizationCode(client, code, _verifier, redirectUri, resource) {
      const record = codes.get(code);
      if (!record || record.clientId !== client.client_id) throw new InvalidGrantError('Unknown authorization code');
      codes.delete(code); // single use
      if (redirectUri !== undefined && redirectUri !== record.redirectUri) throw new InvalidGrantError('redirect_uri does not match');
      if (record.resource && resource?.href !== record.resource) throw new InvalidGrantError('resource does not match');
      return issueTokens(client.client_id, record.scopes, record.resource, randomUUID());
    },
    async exchangeRefreshToken(client, refreshToken, scopes, resource) {
      const record = refreshTokens.get(refreshToken);
      if (!record || record.revoked || record.clientId !== client.client_id) throw new InvalidGrantError('Invalid refresh token');
      if (record.resource && resource && resource.href !== record.resource) throw new InvalidGrantError('resource does not match');
      if (scopes && !options.allowScopeUpgradeOnRefresh && scopes.some((scope) => !record.scopes.includes(scope))) {
        throw new InvalidScopeError('A refresh cannot widen the grant');
      }
      if (options.rotateRefreshTokens !== false) {
        refreshTokens.delete(refreshToken);
        return issueTokens(client.client_id, scopes ?? record.scopes, record.resource, record.grantId);
      }
      const accessToken = `at_${randomBytes(24).toString('base64url')}`;
      accessTokens.set(accessToken, {
        clientId: client.client_id,
        scopes: record.scopes,
        resource: record.resource,
        expiresAt: Math.floor(Date.now() / 1000) + ttl(),
        revoked: false,
        grantId: record.grantId,
      });
      return { access_token: accessToken, token_type: 'Bearer', expires_in: ttl(), scope: record.scopes.join(' '), ...accountFields() };
    },
    async verifyAccessToken(token: string): Promise<AuthInfo> {
      const record = accessTokens.get(token);
      if (!record || record.revoked || options.rejectAccessTokens || rejectingAtResource) throw new InvalidTokenError('Invalid access token');
      return {
        token,
        clientId: record.clientId,
        scopes: record.scopes,
        expiresAt: record.expiresAt,
        ...(record.resource ? { resource: new URL(record.resource) } : {}),
      };
    },
    async revokeToken(client: OAuthClientInformationFull, request: OAuthTokenRevocationRequest) {
      const at = accessTokens.get(request.token);
      if (at && at.clientId === client.client_id) at.revoked = true;
      const rt = refreshTokens.get(request.token);
      if (rt && rt.clientId === client.client_id) rt.revoked = true;
      stats.revocations.push({ clientId: client.client_id, kind: at ? 'access_token' : rt ? 'refresh_token' : 'unknown' });
    },
  };

  // --- authorization server metadata, served by us so every variation is possible --------------
  const base = createOAuthMetadata({ provider, issuerUrl, scopesSupported: options.scopesSupported });
  const asMetadata: Record<string, unknown> = {
    ...base,
    issuer: options.advertisedIssuer ?? issuer,
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
  };
  if (options.codeChallengeMethods === null) delete asMetadata.code_challenge_methods_supported;
  else if (options.codeChallengeMethods) asMetadata.code_challenge_methods_supported = options.codeChallengeMethods;
  if (options.clientMetadataDocuments) asMetadata.client_id_metadata_document_supported = true;
  if (options.issParameter !== false) asMetadata.authorization_response_iss_parameter_supported = true;
  if (options.metadataStyle === 'openid') {
    Object.assign(asMetadata, {
      jwks_uri: `${origin}/jwks`,
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: ['RS256'],
    });
  }
  const asMetadataPath =
    options.metadataStyle === 'openid'
      ? issuerPath
        ? `/.well-known/openid-configuration${issuerPath}`
        : '/.well-known/openid-configuration'
      : `/.well-known/oauth-authorization-server${issuerPath}`;
  app.get(asMetadataPath, (req, res) => {
    stats.metadataFetches.push(req.path);
    res.json(asMetadata);
  });

  const prm = {
    resource: mcpUrl,
    authorization_servers: options.authorizationServers ?? [issuer],
    scopes_supported: options.scopesSupported,
    resource_name: 'orgplane test MCP server',
  };
  if (prmAt === 'path' || prmAt === 'both') {
    app.get(`/.well-known/oauth-protected-resource${mcpPath}`, (req, res) => {
      stats.metadataFetches.push(req.path);
      res.json(prm);
    });
  }
  if (prmAt === 'root' || prmAt === 'both') {
    app.get('/.well-known/oauth-protected-resource', (req, res) => {
      stats.metadataFetches.push(req.path);
      res.json(prm);
    });
  }
  // Every other well-known URL is a 404 (the SDK router would otherwise serve its defaults
  // there); misses are recorded too, since tests check the order in which clients look.
  app.use('/.well-known', (req, res) => {
    stats.metadataFetches.push(`${req.baseUrl}${req.path}`);
    res.status(404).json({ error: 'not_found' });
  });

  // --- the token endpoint's client authentication --------------------------------------------
  // The SDK's token handler reads client_id/client_secret from the body (client_secret_post).
  // This middleware accepts HTTP Basic (RFC 6749 §2.3.1) too, records which method was used, and
  // holds each client to the method it registered, so a test proves the method really used.
  const tokenPaths = [base.token_endpoint, base.revocation_endpoint].filter((u): u is string => Boolean(u)).map((u) => new URL(u).pathname);
  for (const path of tokenPaths) {
    app.use(path, express.urlencoded({ extended: false }), async (req: Request, res: Response, next: NextFunction) => {
      if (req.method !== 'POST') return next();
      const body = (req.body ?? {}) as Record<string, string>;
      let method: TokenRequestRecord['authMethod'] = body.client_secret ? 'client_secret_post' : 'none';
      const header = req.headers.authorization;
      if (header && /^basic /i.test(header)) {
        const decoded = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
        const colon = decoded.indexOf(':');
        if (colon < 0) return oauthError(res, 401, 'invalid_client', 'Malformed Basic credentials');
        const decode = (v: string) => decodeURIComponent(v.replace(/\+/g, ' '));
        const id = decode(decoded.slice(0, colon));
        if (body.client_id && body.client_id !== id) return oauthError(res, 400, 'invalid_request', 'Two client identities');
        body.client_id = id;
        body.client_secret = decode(decoded.slice(colon + 1));
        method = 'client_secret_basic';
      }
      const client = body.client_id ? await clientsStore.getClient(body.client_id) : undefined;
      const registered = client?.token_endpoint_auth_method;
      if (path === new URL(base.token_endpoint).pathname) {
        stats.tokenRequests.push({
          grantType: body.grant_type ?? '',
          clientId: body.client_id ?? '',
          authMethod: method,
          resource: body.resource,
          outcome: 'refused',
        });
        const record = stats.tokenRequests[stats.tokenRequests.length - 1]!;
        res.on('finish', () => {
          if (res.statusCode === 200) record.outcome = 'issued';
        });
      }
      if (client && registered && registered !== method && (registered === 'client_secret_basic' || registered === 'client_secret_post')) {
        return oauthError(res, 401, 'invalid_client', `Client must authenticate with ${registered}`);
      }
      req.body = body;
      next();
    });
  }

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

  // --- the protected MCP endpoint -------------------------------------------------------------
  const bearer = requireBearerAuth({
    verifier: provider,
    requiredScopes: options.requiredScopes,
    ...(options.resourceMetadataInChallenge === false ? {} : { resourceMetadataUrl }),
  });
  app.post(mcpPath, (_req, _res, next) => {
    stats.mcpRequests++;
    if (!options.onMcpRequest) return next();
    options.onMcpRequest(stats.mcpRequests).then(() => next(), next);
  }, bearer, express.json(), async (req: Request, res: Response) => {
    const mcp = new McpServer({ name: 'oauth-test-server', version: '1.0.0' });
    mcp.registerTool('whoami', { description: 'Says which OAuth client called', inputSchema: { note: z.string().optional() } }, async () => ({
      content: [{ type: 'text', text: `client ${req.auth?.clientId ?? 'unknown'}` }],
    }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void mcp.close();
    });
    await mcp.connect(transport);
    await transport.handleRequest(req, res, req.body);
  });
  app.all(mcpPath, bearer, (_req, res) => {
    res.status(405).set('allow', 'POST').json({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed' }, id: null });
  });

  let closing: Promise<void> | undefined;
  return {
    url: mcpUrl,
    origin,
    issuer,
    resourceMetadataUrl,
    stats,
    options,
    expireAccessTokens() {
      for (const record of accessTokens.values()) record.expiresAt = Math.floor(Date.now() / 1000) - 1;
    },
    revokeAll() {
      for (const record of accessTokens.values()) record.revoked = true;
      for (const record of refreshTokens.values()) record.revoked = true;
    },
    addClient(c) {
      clients.set(c.clientId, {
        client_id: c.clientId,
        client_secret: c.clientSecret,
        redirect_uris: c.redirectUris,
        token_endpoint_auth_method: c.tokenEndpointAuthMethod ?? (c.clientSecret ? 'client_secret_basic' : 'none'),
      });
    },
    rejectAtResource(on) {
      rejectingAtResource = on;
    },
    issueAccessToken(clientId, scopes = [], ttlSeconds = 3600) {
      const token = `at_${randomBytes(24).toString('base64url')}`;
      accessTokens.set(token, { clientId, scopes, resource: mcpUrl, expiresAt: Math.floor(Date.now() / 1000) + ttlSeconds, revoked: false, grantId: randomUUID() });
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
