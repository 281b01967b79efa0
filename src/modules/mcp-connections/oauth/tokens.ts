// The token endpoint: client authentication (RFC 6749 §2.3.1, RFC 7523 §2.2), the authorization
// code exchange (with the PKCE verifier and the resource indicator), the client credentials grant,
// refresh, and the classification of a refusal into the credential health the API reports.

import { OAuthTokensSchema } from '@modelcontextprotocol/sdk/shared/auth.js';
import {
  OAuthFlowError,
  readOAuthAnswer,
  requestFailure,
  type CredentialHealthReason,
  type FetchLike,
  type OAuthPhase,
} from './errors.ts';
import type { OAuthClientCredentials } from './registration.ts';
import { providerAccountOf, type ProviderAccount } from './account.ts';
import { signClientAssertion } from './client-assertion.ts';

export interface TokenSet {
  accessToken: string;
  refreshToken: string | null;
  tokenType: 'Bearer';
  /** Absolute expiry of the access token; null when the server did not say. */
  expiresAt: Date | null;
  scopes: string[];
  /** The provider's account and tenant of the token, when its response names them (account.ts). */
  account: ProviderAccount;
}

/** RFC 6749 §2.3.1: Basic credentials are the form-urlencoded id and secret. */
function formEncode(value: string): string {
  return encodeURIComponent(value).replace(/%20/g, '+');
}

/** `issuer`: the authorization server's, the audience of a private_key_jwt assertion. */
export function applyClientAuthentication(
  client: OAuthClientCredentials,
  headers: Headers,
  params: URLSearchParams,
  issuer: string | undefined,
): void {
  switch (client.authMethod) {
    case 'private_key_jwt': {
      if (!issuer) throw new Error('private_key_jwt needs the issuer the assertion is addressed to');
      if (!client.privateKey)
        throw new OAuthFlowError('AUTH_TOKEN_ACQUISITION', 'client_key_missing', 'private_key_jwt needs a private key');
      params.set('client_id', client.clientId);
      params.set('client_assertion_type', 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer');
      params.set(
        'client_assertion',
        signClientAssertion({
          clientId: client.clientId,
          audience: issuer,
          privateKeyPem: client.privateKey.pem,
          algorithm: client.privateKey.algorithm,
        }),
      );
      return;
    }
    case 'client_secret_basic': {
      if (!client.clientSecret)
        throw new OAuthFlowError(
          'AUTH_TOKEN_ACQUISITION',
          'client_secret_missing',
          'client_secret_basic needs a client secret',
        );
      const pair = `${formEncode(client.clientId)}:${formEncode(client.clientSecret)}`;
      headers.set('authorization', `Basic ${Buffer.from(pair, 'utf8').toString('base64')}`);
      return;
    }
    case 'client_secret_post':
      if (!client.clientSecret)
        throw new OAuthFlowError(
          'AUTH_TOKEN_ACQUISITION',
          'client_secret_missing',
          'client_secret_post needs a client secret',
        );
      params.set('client_id', client.clientId);
      params.set('client_secret', client.clientSecret);
      return;
    case 'none':
      params.set('client_id', client.clientId);
      return;
  }
}

/**
 * A server-given expiry as a date the database can store, or null (no known expiry) when it is past
 * what a timestamp holds: `expires_in: 1e13` is a token that does not expire in practice, not a 500.
 */
export function representableDate(epochMs: number): Date | null {
  // 9999-12-31, comfortably inside both JavaScript's and PostgreSQL's ranges.
  return Number.isFinite(epochMs) && epochMs < 253402300800000 ? new Date(epochMs) : null;
}

export function tokenSetFrom(
  body: unknown,
  now: Date,
  previousRefreshToken: string | null,
  requestedScopes: string[],
): TokenSet {
  const parsed = OAuthTokensSchema.safeParse(body);
  if (!parsed.success) throw new Error('invalid token response');
  const t = parsed.data;
  if (t.token_type.toLowerCase() !== 'bearer') throw new Error('unsupported token type');
  const expiresIn =
    typeof t.expires_in === 'number' && Number.isFinite(t.expires_in) && t.expires_in > 0 ? t.expires_in : null;
  const expiresAt = expiresIn === null ? null : representableDate(now.getTime() + expiresIn * 1000);
  return {
    accessToken: t.access_token,
    // RFC 6749 §6: a refresh response may omit the refresh token; the old one stays valid.
    refreshToken: t.refresh_token ?? previousRefreshToken,
    tokenType: 'Bearer',
    expiresAt,
    // RFC 6749 §5.1: an omitted scope means the requested scope was granted.
    scopes: t.scope ? t.scope.split(/\s+/).filter(Boolean) : requestedScopes,
    account: providerAccountOf(body),
  };
}

async function tokenRequest(options: {
  phase: OAuthPhase;
  tokenEndpoint: string;
  /** The authorization server's issuer: the audience of a private_key_jwt assertion. */
  issuer?: string;
  client: OAuthClientCredentials;
  params: URLSearchParams;
  fetch: FetchLike;
  previousRefreshToken: string | null;
  requestedScopes: string[];
  now?: () => Date;
}): Promise<TokenSet> {
  const headers = new Headers({ 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' });
  applyClientAuthentication(options.client, headers, options.params, options.issuer);
  let response: Response;
  try {
    // No redirects: a token request's body carries the code, the verifier, a refresh token or the
    // client secret, and a 307 would send it on to wherever the redirect points.
    response = await options.fetch(options.tokenEndpoint, {
      method: 'POST',
      headers,
      body: options.params.toString(),
      redirect: 'error',
    });
  } catch (error) {
    throw requestFailure(options.phase, 'Could not reach the token endpoint', error);
  }
  const { json, oauthError } = await readOAuthAnswer(response);
  if (!response.ok) {
    throw new OAuthFlowError(
      options.phase,
      'token_refused',
      `The token endpoint refused the request (HTTP ${response.status}${oauthError ? `, ${oauthError}` : ''})`,
      {
        httpStatus: response.status,
        oauthError,
        retryable: response.status >= 500 || oauthError === 'temporarily_unavailable',
      },
    );
  }
  try {
    return tokenSetFrom(
      json,
      (options.now ?? (() => new Date()))(),
      options.previousRefreshToken,
      options.requestedScopes,
    );
  } catch (error) {
    throw new OAuthFlowError(
      options.phase,
      'token_response_invalid',
      `The token response is not usable: ${(error as Error).message}`,
      {
        httpStatus: response.status,
      },
    );
  }
}

/** RFC 6749 §4.1.3 with PKCE (RFC 7636 §4.5) and the resource indicator (RFC 8707 §2.2). */
export function exchangeAuthorizationCode(options: {
  tokenEndpoint: string;
  /** The authorization server's issuer: the audience of a private_key_jwt assertion. */
  issuer?: string;
  client: OAuthClientCredentials;
  code: string;
  codeVerifier: string;
  redirectUri: string;
  resource: string;
  requestedScopes: string[];
  fetch: FetchLike;
}): Promise<TokenSet> {
  const params = new URLSearchParams({
    grant_type: 'authorization_code',
    code: options.code,
    code_verifier: options.codeVerifier,
    redirect_uri: options.redirectUri,
    resource: options.resource,
  });
  return tokenRequest({ ...options, phase: 'AUTH_TOKEN_ACQUISITION', params, previousRefreshToken: null });
}

/** RFC 6749 §6. The resource indicator is sent again so the new token has the same audience. */
export function refreshAccessToken(options: {
  tokenEndpoint: string;
  /** The authorization server's issuer: the audience of a private_key_jwt assertion. */
  issuer?: string;
  client: OAuthClientCredentials;
  refreshToken: string;
  resource: string;
  scopes: string[];
  /** Ask for these scopes (RFC 6749 §6); left out, the server keeps the original grant's. */
  requestScopes?: string[];
  fetch: FetchLike;
}): Promise<TokenSet> {
  const params = new URLSearchParams({
    grant_type: 'refresh_token',
    refresh_token: options.refreshToken,
    resource: options.resource,
  });
  if (options.requestScopes && options.requestScopes.length > 0) params.set('scope', options.requestScopes.join(' '));
  return tokenRequest({
    ...options,
    phase: 'CONTINUITY_REFRESH',
    params,
    previousRefreshToken: options.refreshToken,
    requestedScopes: options.requestScopes ?? options.scopes,
  });
}

/**
 * RFC 6749 §4.4: a token for the client itself, no user and no browser. The resource indicator
 * (RFC 8707) gives it the MCP server's audience; no refresh token is expected (§4.4.3), so a token
 * near its expiry is obtained again the same way.
 */
export function clientCredentialsGrant(options: {
  tokenEndpoint: string;
  /** The authorization server's issuer: the audience of a private_key_jwt assertion. */
  issuer?: string;
  client: OAuthClientCredentials;
  resource: string;
  scopes: string[];
  fetch: FetchLike;
}): Promise<TokenSet> {
  const params = new URLSearchParams({ grant_type: 'client_credentials', resource: options.resource });
  if (options.scopes.length > 0) params.set('scope', options.scopes.join(' '));
  return tokenRequest({
    ...options,
    phase: 'AUTH_TOKEN_ACQUISITION',
    params,
    previousRefreshToken: null,
    requestedScopes: options.scopes,
  });
}

/** Refresh this long before the access token expires, so a request never carries one that is about to. */
export const REFRESH_MARGIN_SECONDS = 60;

export function needsRefresh(
  expiresAt: Date | null,
  now: Date = new Date(),
  marginSeconds = REFRESH_MARGIN_SECONDS,
): boolean {
  return expiresAt !== null && expiresAt.getTime() - marginSeconds * 1000 <= now.getTime();
}

/**
 * What a refusal means for the stored credential, or null when it says nothing about it (a
 * network failure, a 5xx, `temporarily_unavailable`: retry later, keep the credential).
 *  - the grant is no longer valid (`invalid_grant` on refresh: expired or revoked refresh
 *    token) -> credential_expired;
 *  - the server refuses us or the user (`access_denied`, `invalid_client`,
 *    `unauthorized_client`, `invalid_scope`, `invalid_target`) -> authorization_rejected;
 *  - tokens were issued but the MCP server does not accept them -> post_authorization_validation_failed.
 */
export function classifyRefusal(error: unknown): CredentialHealthReason | null {
  if (!(error instanceof OAuthFlowError)) return null;
  if (error.retryable) return null;
  if (error.phase === 'AUTH_RESOURCE_VALIDATION') return 'post_authorization_validation_failed';
  switch (error.oauthError) {
    case 'invalid_grant':
      return 'credential_expired';
    case 'access_denied':
    case 'invalid_client':
    case 'unauthorized_client':
    case 'invalid_scope':
    case 'invalid_target':
    case 'unsupported_grant_type':
      return 'authorization_rejected';
  }
  if (error.code === 'token_response_invalid') return 'post_authorization_validation_failed';
  if (
    error.phase === 'CONTINUITY_REFRESH' &&
    error.httpStatus !== undefined &&
    error.httpStatus >= 400 &&
    error.httpStatus < 500
  ) {
    return 'credential_expired';
  }
  if (error.httpStatus !== undefined && error.httpStatus >= 400 && error.httpStatus < 500)
    return 'authorization_rejected';
  return null;
}

/** Who must act on a reconnect_required credential. */
export function reconnectActionOwner(credentialMode: 'shared' | 'per_member'): 'member' | 'organization_admin' {
  return credentialMode === 'shared' ? 'organization_admin' : 'member';
}

/**
 * RFC 7009 token revocation, authenticated as the client that obtained the token. Disconnecting
 * uses it so a token orgplane forgets is also dead at the server; callers treat it as best effort.
 */
export async function revokeToken(options: {
  revocationEndpoint: string;
  /** The authorization server's issuer: the audience of a private_key_jwt assertion. */
  issuer?: string;
  client: OAuthClientCredentials;
  token: string;
  tokenTypeHint: 'access_token' | 'refresh_token';
  fetch: FetchLike;
}): Promise<void> {
  const params = new URLSearchParams({ token: options.token, token_type_hint: options.tokenTypeHint });
  const headers = new Headers({ 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' });
  applyClientAuthentication(options.client, headers, params, options.issuer);
  let response: Response;
  try {
    // No redirects, as for the token endpoint: the body carries the token.
    response = await options.fetch(options.revocationEndpoint, {
      method: 'POST',
      headers,
      body: params.toString(),
      redirect: 'error',
    });
  } catch (error) {
    throw requestFailure('CONTINUITY_REFRESH', 'Could not reach the revocation endpoint', error);
  }
  await response.body?.cancel().catch(() => {});
  // RFC 7009 §2.2: 200 whether or not the token was valid.
  if (!response.ok) {
    throw new OAuthFlowError(
      'CONTINUITY_REFRESH',
      'revocation_refused',
      `The revocation endpoint answered HTTP ${response.status}`,
      { httpStatus: response.status },
    );
  }
}
