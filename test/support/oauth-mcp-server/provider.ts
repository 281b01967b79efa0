// The authorization server's state and the SDK provider over it (./index.ts serves it through the
// SDK's `mcpAuthRouter`): clients (pre-registered, dynamically registered, client ID metadata
// documents), authorization codes, access and refresh tokens, revocation. Every authorization is
// approved at once (no login page).
import { randomBytes, randomUUID, type KeyObject } from 'node:crypto';
import type { Response } from 'express';
import type { OAuthServerProvider, AuthorizationParams } from '@modelcontextprotocol/sdk/server/auth/provider.js';
import type { OAuthRegisteredClientsStore } from '@modelcontextprotocol/sdk/server/auth/clients.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import {
  InvalidGrantError,
  InvalidTokenError,
  InvalidScopeError,
  AccessDeniedError,
} from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type {
  OAuthClientInformationFull,
  OAuthTokens,
  OAuthTokenRevocationRequest,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import type {
  CodeRecord,
  OAuthMcpServer,
  OAuthMcpServerOptions,
  PreRegisteredTestClient,
  RefreshRecord,
  TokenRecord,
} from './types.ts';

/** A client as the server knows it: the SDK's record, and what the client credentials grant needs. */
export type TestClientRecord = OAuthClientInformationFull & { public_key?: KeyObject; client_credentials?: boolean };

/** What every part of the server reads and writes. */
export interface ServerContext {
  options: OAuthMcpServerOptions;
  issuer: string;
  stats: OAuthMcpServer['stats'];
  clients: Map<string, TestClientRecord>;
  codes: Map<string, CodeRecord>;
  accessTokens: Map<string, TokenRecord>;
  refreshTokens: Map<string, RefreshRecord>;
  rejectingAtResource: boolean;
}

export function clientRecord(c: PreRegisteredTestClient): TestClientRecord {
  return {
    client_id: c.clientId,
    client_secret: c.clientSecret,
    redirect_uris: c.redirectUris,
    token_endpoint_auth_method: c.tokenEndpointAuthMethod ?? (c.clientSecret ? 'client_secret_basic' : 'none'),
    ...(c.publicKey ? { public_key: c.publicKey } : {}),
    ...(c.clientCredentials ? { client_credentials: true } : {}),
  };
}

export function createContext(options: OAuthMcpServerOptions, issuer: string): ServerContext {
  const clients = new Map<string, TestClientRecord>();
  for (const c of options.clients ?? []) clients.set(c.clientId, clientRecord(c));
  return {
    options,
    issuer,
    stats: {
      registrations: [],
      metadataFetches: [],
      clientMetadataFetches: [],
      authorizations: [],
      tokenRequests: [],
      revocations: [],
      mcpRequests: 0,
    },
    clients,
    codes: new Map(),
    accessTokens: new Map(),
    refreshTokens: new Map(),
    rejectingAtResource: false,
  };
}

const ttl = (ctx: ServerContext) => ctx.options.accessTokenTtlSeconds ?? 3600;

export function createProvider(ctx: ServerContext) {
  const accountFields = (): Record<string, unknown> => {
    const fields: Record<string, unknown> = { ...ctx.options.tokenResponseExtras };
    if (ctx.options.idTokenClaims) {
      const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
      fields.id_token = `${part({ alg: 'RS256', typ: 'JWT' })}.${part({ iss: ctx.issuer, aud: 'client', iat: Math.floor(Date.now() / 1000), ...ctx.options.idTokenClaims })}.${randomBytes(32).toString('base64url')}`;
    }
    return fields;
  };

  async function fetchClientMetadataDocument(clientId: string): Promise<OAuthClientInformationFull | undefined> {
    ctx.stats.clientMetadataFetches.push(clientId);
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
      const known = ctx.clients.get(clientId);
      if (known) return known;
      if (ctx.options.clientMetadataDocuments && /^https?:\/\//.test(clientId))
        return fetchClientMetadataDocument(clientId);
      return undefined;
    },
    ...(ctx.options.dynamicRegistration === false
      ? {}
      : {
          async registerClient(client: Omit<OAuthClientInformationFull, 'client_id' | 'client_id_issued_at'>) {
            if (ctx.options.registrationDelayMs)
              await new Promise((resolve) => setTimeout(resolve, ctx.options.registrationDelayMs));
            const full = {
              ...client,
              client_id: randomUUID(),
              client_id_issued_at: Math.floor(Date.now() / 1000),
            } as OAuthClientInformationFull;
            ctx.clients.set(full.client_id, full);
            ctx.stats.registrations.push(full);
            return full;
          },
        }),
  };

  /** `refresh`: issue a refresh token too (the client credentials grant does not, RFC 6749 §4.4.3). */
  function issueTokens(
    clientId: string,
    scopes: string[],
    resource: string | undefined,
    grantId: string,
    refresh = ctx.options.issueRefreshTokens !== false,
  ): OAuthTokens {
    const accessToken = `at_${randomBytes(24).toString('base64url')}`;
    ctx.accessTokens.set(accessToken, {
      clientId,
      scopes,
      resource,
      expiresAt: Math.floor(Date.now() / 1000) + ttl(ctx),
      revoked: false,
      grantId,
    });
    const tokens: OAuthTokens = {
      access_token: accessToken,
      token_type: 'Bearer',
      expires_in: ttl(ctx),
      scope: scopes.join(' '),
      ...accountFields(),
    };
    if (refresh) {
      const refreshToken = `rt_${randomBytes(24).toString('base64url')}`;
      ctx.refreshTokens.set(refreshToken, { clientId, scopes, resource, revoked: false, grantId });
      tokens.refresh_token = refreshToken;
    }
    return tokens;
  }

  const provider: OAuthServerProvider = {
    get clientsStore() {
      return clientsStore;
    },
    async authorize(client: OAuthClientInformationFull, params: AuthorizationParams, res: Response) {
      ctx.stats.authorizations.push({
        clientId: client.client_id,
        redirectUri: params.redirectUri,
        scopes: params.scopes ?? [],
        resource: params.resource?.href,
        state: params.state,
      });
      if (ctx.options.denyAuthorization) throw new AccessDeniedError('The user declined');
      const code = randomBytes(16).toString('base64url');
      ctx.codes.set(code, {
        clientId: client.client_id,
        challenge: params.codeChallenge,
        redirectUri: params.redirectUri,
        scopes: params.scopes ?? [],
        resource: params.resource?.href,
      });
      const target = new URL(params.redirectUri);
      target.searchParams.set('code', code);
      if (params.state !== undefined) target.searchParams.set('state', params.state);
      if (ctx.options.issParameter !== false) target.searchParams.set('iss', ctx.options.responseIssuer ?? ctx.issuer);
      res.redirect(302, target.href);
    },
    async challengeForAuthorizationCode(client, code) {
      const record = ctx.codes.get(code);
      if (!record || record.clientId !== client.client_id) throw new InvalidGrantError('Unknown authorization code');
      return record.challenge;
    },
    async exchangeAuthorizationCode(client, code, _verifier, redirectUri, resource) {
      const record = ctx.codes.get(code);
      if (!record || record.clientId !== client.client_id) throw new InvalidGrantError('Unknown authorization code');
      ctx.codes.delete(code); // single use
      if (redirectUri !== undefined && redirectUri !== record.redirectUri)
        throw new InvalidGrantError('redirect_uri does not match');
      if (record.resource && resource?.href !== record.resource) throw new InvalidGrantError('resource does not match');
      return issueTokens(client.client_id, record.scopes, record.resource, randomUUID());
    },
    async exchangeRefreshToken(client, refreshToken, scopes, resource) {
      const record = ctx.refreshTokens.get(refreshToken);
      if (!record || record.revoked || record.clientId !== client.client_id)
        throw new InvalidGrantError('Invalid refresh token');
      if (record.resource && resource && resource.href !== record.resource)
        throw new InvalidGrantError('resource does not match');
      if (scopes && !ctx.options.allowScopeUpgradeOnRefresh && scopes.some((scope) => !record.scopes.includes(scope))) {
        throw new InvalidScopeError('A refresh cannot widen the grant');
      }
      if (ctx.options.rotateRefreshTokens !== false) {
        ctx.refreshTokens.delete(refreshToken);
        return issueTokens(client.client_id, scopes ?? record.scopes, record.resource, record.grantId);
      }
      const accessToken = `at_${randomBytes(24).toString('base64url')}`;
      ctx.accessTokens.set(accessToken, {
        clientId: client.client_id,
        scopes: record.scopes,
        resource: record.resource,
        expiresAt: Math.floor(Date.now() / 1000) + ttl(ctx),
        revoked: false,
        grantId: record.grantId,
      });
      return {
        access_token: accessToken,
        token_type: 'Bearer',
        expires_in: ttl(ctx),
        scope: record.scopes.join(' '),
        ...accountFields(),
      };
    },
    async verifyAccessToken(token: string): Promise<AuthInfo> {
      const record = ctx.accessTokens.get(token);
      if (!record || record.revoked || ctx.options.rejectAccessTokens || ctx.rejectingAtResource)
        throw new InvalidTokenError('Invalid access token');
      return {
        token,
        clientId: record.clientId,
        scopes: record.scopes,
        expiresAt: record.expiresAt,
        ...(record.resource ? { resource: new URL(record.resource) } : {}),
      };
    },
    async revokeToken(client: OAuthClientInformationFull, request: OAuthTokenRevocationRequest) {
      const at = ctx.accessTokens.get(request.token);
      if (at && at.clientId === client.client_id) at.revoked = true;
      const rt = ctx.refreshTokens.get(request.token);
      if (rt && rt.clientId === client.client_id) rt.revoked = true;
      ctx.stats.revocations.push({
        clientId: client.client_id,
        kind: at ? 'access_token' : rt ? 'refresh_token' : 'unknown',
      });
    },
  };
  return { provider, clientsStore, issueTokens };
}
