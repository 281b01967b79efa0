// How orgplane identifies itself to an authorization server, in the MCP spec's order of
// preference: a client the administrator registered (`oauthClient`), then a client ID metadata
// document served by orgplane (when the server advertises support), then dynamic client
// registration (RFC 7591), done once per connection and reused. When none is possible the
// connection is `setupRequired`: a state to show, not an error.

import { OAuthClientInformationFullSchema } from '@modelcontextprotocol/sdk/shared/auth.js';
import { OAuthFlowError, readOAuthAnswer, requestFailure, type FetchLike } from './errors.ts';
import type { AuthorizationServerMetadata } from './server-metadata.ts';
import type { SigningAlgorithm } from '../contracts.ts';

export type RegistrationSource = 'pre-registered' | 'client-metadata' | 'dynamic';
export type TokenEndpointAuthMethod = 'client_secret_basic' | 'client_secret_post' | 'private_key_jwt' | 'none';

/** What the token endpoint needs to know about our client. */
export interface OAuthClientCredentials {
  clientId: string;
  clientSecret?: string | null;
  authMethod: TokenEndpointAuthMethod;
  /** private_key_jwt: the PEM private key and the algorithm the client assertion is signed with. */
  privateKey?: { pem: string; algorithm: SigningAlgorithm } | null;
}

export interface PreRegisteredClient {
  clientId: string;
  clientSecret?: string | null;
  tokenEndpointAuthMethod?: 'client_secret_basic' | 'client_secret_post' | 'private_key_jwt' | null;
  privateKey?: { pem: string; algorithm: SigningAlgorithm } | null;
}

export interface DynamicClient extends OAuthClientCredentials {
  issuer: string;
  redirectUris: string[];
  clientSecretExpiresAt?: number | null;
}

export type RegistrationPlan =
  | { source: 'pre-registered'; client: OAuthClientCredentials }
  | { source: 'client-metadata'; client: OAuthClientCredentials }
  | { source: 'dynamic'; client: OAuthClientCredentials | null; registrationEndpoint: string }
  | { source: null; setupRequired: true; reason: string };

function isLoopbackHost(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127\./.test(hostname);
}

/**
 * A client ID metadata document URL is only usable when the server can fetch it: https with a
 * path (draft-ietf-oauth-client-id-metadata-document), or loopback http in development.
 */
export function clientMetadataUrlUsable(url: string | null | undefined): boolean {
  if (!url) return false;
  try {
    const u = new URL(url);
    if (u.pathname === '/' || u.hash) return false;
    return u.protocol === 'https:' || (u.protocol === 'http:' && isLoopbackHost(u.hostname));
  } catch {
    return false;
  }
}

/** The auth method for a pre-registered client: the configured one, else what the server prefers. */
export function preRegisteredAuthMethod(
  client: PreRegisteredClient,
  metadata?: AuthorizationServerMetadata | null,
): TokenEndpointAuthMethod {
  if (client.privateKey && (client.tokenEndpointAuthMethod === 'private_key_jwt' || !client.clientSecret))
    return 'private_key_jwt';
  if (!client.clientSecret) return 'none';
  if (client.tokenEndpointAuthMethod) return client.tokenEndpointAuthMethod;
  const supported = metadata?.token_endpoint_auth_methods_supported;
  // RFC 8414 §2: an absent list means client_secret_basic.
  if (!supported || supported.includes('client_secret_basic')) return 'client_secret_basic';
  if (supported.includes('client_secret_post')) return 'client_secret_post';
  return 'client_secret_basic';
}

/** The choice itself. `dynamicClient` is a client registered earlier for this connection and issuer. */
export function chooseRegistration(input: {
  preRegistered?: PreRegisteredClient | null;
  metadata?: AuthorizationServerMetadata | null;
  clientMetadataUrl?: string | null;
  dynamicClient?: DynamicClient | null;
  /** The redirect URI the flow will use; a stored dynamic client registered for another one is not reused. */
  redirectUri?: string | null;
}): RegistrationPlan {
  const { preRegistered, metadata } = input;
  if (preRegistered?.clientId) {
    return {
      source: 'pre-registered',
      client: {
        clientId: preRegistered.clientId,
        clientSecret: preRegistered.clientSecret ?? null,
        authMethod: preRegisteredAuthMethod(preRegistered, metadata),
        ...(preRegistered.privateKey ? { privateKey: preRegistered.privateKey } : {}),
      },
    };
  }
  if (!metadata) {
    return { source: null, setupRequired: true, reason: 'The authorization server has not been discovered yet' };
  }
  if (metadata.client_id_metadata_document_supported === true && clientMetadataUrlUsable(input.clientMetadataUrl)) {
    return {
      source: 'client-metadata',
      client: { clientId: input.clientMetadataUrl!, clientSecret: null, authMethod: 'none' },
    };
  }
  if (metadata.registration_endpoint) {
    const stored = input.dynamicClient;
    const reusable =
      stored &&
      stored.issuer === metadata.issuer &&
      !secretExpired(stored) &&
      (!input.redirectUri || stored.redirectUris.includes(input.redirectUri))
        ? stored
        : null;
    return { source: 'dynamic', client: reusable, registrationEndpoint: metadata.registration_endpoint };
  }
  return {
    source: null,
    setupRequired: true,
    reason:
      'The authorization server supports neither client ID metadata documents nor dynamic registration: configure an OAuth client',
  };
}

function secretExpired(client: DynamicClient, now = Date.now()): boolean {
  // RFC 7591 §3.2.1: 0 means the secret does not expire.
  return Boolean(client.clientSecret && client.clientSecretExpiresAt && client.clientSecretExpiresAt * 1000 <= now);
}

/** The auth method to ask for at registration: a confidential client when the server allows one. */
export function dynamicAuthMethod(metadata: AuthorizationServerMetadata): TokenEndpointAuthMethod {
  const supported = metadata.token_endpoint_auth_methods_supported;
  if (!supported || supported.includes('client_secret_basic')) return 'client_secret_basic';
  if (supported.includes('client_secret_post')) return 'client_secret_post';
  return 'none';
}

/** RFC 7591 dynamic client registration. */
export async function registerDynamicClient(options: {
  metadata: AuthorizationServerMetadata;
  redirectUris: string[];
  scope?: string | null;
  clientName?: string;
  clientUri?: string | null;
  fetch: FetchLike;
}): Promise<DynamicClient> {
  const phase = 'AUTH_CLIENT_REGISTRATION';
  const endpoint = options.metadata.registration_endpoint;
  if (!endpoint)
    throw new OAuthFlowError(
      phase,
      'registration_not_supported',
      'The authorization server offers no dynamic client registration',
    );
  const requestedMethod = dynamicAuthMethod(options.metadata);
  const body: Record<string, unknown> = {
    client_name: options.clientName ?? 'orgplane',
    redirect_uris: options.redirectUris,
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: requestedMethod,
  };
  if (options.clientUri) body.client_uri = options.clientUri;
  if (options.scope) body.scope = options.scope;
  let response: Response;
  try {
    response = await options.fetch(endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(body),
    });
  } catch (error) {
    throw requestFailure(phase, 'Could not reach the registration endpoint', error);
  }
  const { json, oauthError } = await readOAuthAnswer(response);
  if (!response.ok) {
    throw new OAuthFlowError(
      phase,
      'registration_refused',
      `Dynamic client registration was refused (HTTP ${response.status}${oauthError ? `, ${oauthError}` : ''})`,
      {
        httpStatus: response.status,
        oauthError,
        retryable: response.status >= 500,
      },
    );
  }
  const parsed = OAuthClientInformationFullSchema.safeParse(json);
  if (!parsed.success) {
    throw new OAuthFlowError(phase, 'registration_invalid', 'The registration response is not valid (RFC 7591)', {
      httpStatus: response.status,
    });
  }
  const info = parsed.data;
  const answered = info.token_endpoint_auth_method;
  const authMethod: TokenEndpointAuthMethod =
    answered === 'client_secret_basic' || answered === 'client_secret_post' || answered === 'none'
      ? answered
      : info.client_secret
        ? requestedMethod === 'none'
          ? 'client_secret_basic'
          : requestedMethod
        : 'none';
  return {
    issuer: options.metadata.issuer,
    clientId: info.client_id,
    clientSecret: info.client_secret ?? null,
    clientSecretExpiresAt: info.client_secret_expires_at ?? null,
    authMethod,
    redirectUris: info.redirect_uris,
  };
}
