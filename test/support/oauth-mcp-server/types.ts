// The shapes of the test OAuth MCP server (./index.ts): its options, what it records, and its handle.
import type { KeyObject } from 'node:crypto';
import type { OAuthClientInformationFull } from '@modelcontextprotocol/sdk/shared/auth.js';

export interface PreRegisteredTestClient {
  clientId: string;
  clientSecret?: string;
  redirectUris: string[];
  tokenEndpointAuthMethod?: 'client_secret_basic' | 'client_secret_post' | 'private_key_jwt' | 'none';
  /** private_key_jwt: the key its client assertions are verified with (RFC 7523). */
  publicKey?: KeyObject;
  /** May obtain tokens for itself with the client credentials grant (RFC 6749 §4.4). */
  clientCredentials?: boolean;
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
  /** Refuse every client credentials grant with this OAuth error (read at each request). */
  refuseClientCredentials?: string;
}

export interface CodeRecord {
  clientId: string;
  challenge: string;
  redirectUri: string;
  scopes: string[];
  resource?: string;
}

export interface TokenRecord {
  clientId: string;
  scopes: string[];
  resource?: string;
  expiresAt: number; // seconds
  revoked: boolean;
  grantId: string;
}

export interface RefreshRecord {
  clientId: string;
  scopes: string[];
  resource?: string;
  revoked: boolean;
  grantId: string;
}

export interface TokenRequestRecord {
  grantType: string;
  clientId: string;
  authMethod: 'client_secret_basic' | 'client_secret_post' | 'private_key_jwt' | 'none';
  resource?: string;
  /** The scope asked for, as sent. */
  scope?: string;
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
    authorizations: Array<{
      clientId: string;
      redirectUri: string;
      scopes: string[];
      resource?: string;
      state?: string;
    }>;
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
