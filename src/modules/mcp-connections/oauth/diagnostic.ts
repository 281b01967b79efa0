// OAuth flow failures as the spec's Diagnostic (the same shape the connection probe returns),
// so an administrator reads one kind of report whatever failed.

import { buildDiagnostic, type ActionOwner, type Diagnostic, type FailureDescription } from '../probe/index.ts';
import type { ErrorCode } from '../../../http/error-catalog.ts';
import type { ApiError } from '../../../http/errors.ts';
import type { OAuthFlowError } from './errors.ts';

const operatorActions: Record<string, { owner: ActionOwner; action: string; category: string }> = {
  issuer_mismatch: {
    owner: 'organization_admin',
    category: 'authorization_server',
    action:
      'Review the configured authorization server issuer: the server names another one. Correct the issuer only if you trust the new one.',
  },
  issuer_missing: {
    owner: 'vendor',
    category: 'authorization_server',
    action: 'The authorization server promised an iss parameter and did not send it; contact its operator.',
  },
  pkce_not_supported: {
    owner: 'vendor',
    category: 'authorization_server',
    action: 'The authorization server must support PKCE with S256; ask its operator to enable it.',
  },
  code_flow_not_supported: {
    owner: 'vendor',
    category: 'authorization_server',
    action: 'The authorization server must support the authorization code flow.',
  },
  metadata_missing: {
    owner: 'vendor',
    category: 'authorization_server',
    action: 'The authorization server publishes no metadata; configure its issuer or contact its operator.',
  },
  metadata_invalid: {
    owner: 'vendor',
    category: 'authorization_server',
    action: 'The server publishes invalid OAuth metadata; contact its operator.',
  },
  metadata_unavailable: {
    owner: 'vendor',
    category: 'authorization_server',
    action: 'The server failed to answer; retry later.',
  },
  resource_metadata_missing: {
    owner: 'organization_admin',
    category: 'resource',
    action:
      'The MCP server publishes no protected resource metadata: configure the authorization server issuer, or check the URL.',
  },
  resource_mismatch: {
    owner: 'vendor',
    category: 'resource',
    action: 'The MCP server describes another resource in its metadata; contact its operator.',
  },
  resource_metadata_url_invalid: {
    owner: 'vendor',
    category: 'resource',
    action: 'The MCP server names an invalid metadata URL; contact its operator.',
  },
  authorization_server_missing: {
    owner: 'vendor',
    category: 'resource',
    action: 'The MCP server lists no authorization server; contact its operator.',
  },
  address_blocked: {
    owner: 'network_admin',
    category: 'network_policy',
    action:
      'The server is on a network this service does not dial; have the operator allow it, or use a public endpoint.',
  },
  redirect_blocked: {
    owner: 'network_admin',
    category: 'network_policy',
    action: 'The server redirects to an address this service does not dial.',
  },
  timeout: { owner: 'vendor', category: 'network', action: 'The server did not answer in time; retry later.' },
  unreachable: {
    owner: 'vendor',
    category: 'network',
    action: 'The server could not be reached; check the URL and retry.',
  },
  response_too_large: { owner: 'vendor', category: 'http', action: 'The server answered with more data than allowed.' },
  registration_refused: {
    owner: 'provider_admin',
    category: 'client_registration',
    action:
      'The authorization server refused to register a client: register one there and configure it on the connection.',
  },
  registration_invalid: {
    owner: 'vendor',
    category: 'client_registration',
    action: 'The registration response is invalid; configure a pre-registered client instead.',
  },
  token_refused: {
    owner: 'member',
    category: 'token',
    action: 'Connect again; if it keeps failing, an administrator should check the OAuth client settings.',
  },
  token_response_invalid: {
    owner: 'vendor',
    category: 'token',
    action: 'The authorization server issued an unusable token response; contact its operator.',
  },
  client_secret_missing: {
    owner: 'organization_admin',
    category: 'client_registration',
    action: 'The configured authentication method needs a client secret: add it to the OAuth client settings.',
  },
  authorization_refused: {
    owner: 'member',
    category: 'authorization',
    action: 'The authorization was not granted; start again and approve the request.',
  },
  code_missing: {
    owner: 'vendor',
    category: 'authorization',
    action: 'The authorization server sent no code; start again.',
  },
  setup_required: {
    owner: 'organization_admin',
    category: 'client_registration',
    action:
      'Register orgplane as a client with the authorization server and configure its client id (and secret) on the connection.',
  },
  shared_not_connected: {
    owner: 'organization_admin',
    category: 'authorization',
    action:
      'An owner or admin connects the shared identity through OAuth: POST /v1/mcp-connections/{id}/oauth/authorize.',
  },
  not_connected: {
    owner: 'member',
    category: 'authorization',
    action: 'Connect through OAuth: POST /v1/mcp-connections/{id}/oauth/authorize and approve the request.',
  },
  reconnect_required: { owner: 'member', category: 'authorization', action: 'Connect again through OAuth.' },
};

export function oauthFailureDescription(error: OAuthFlowError): FailureDescription {
  const known = operatorActions[error.code] ?? {
    owner: 'vendor' as const,
    category: 'authorization',
    action: 'Retry; if it persists, report the reference id.',
  };
  let owner = known.owner;
  if (
    error.code === 'token_refused' &&
    (error.oauthError === 'invalid_client' || error.oauthError === 'unauthorized_client')
  )
    owner = 'organization_admin';
  const description: FailureDescription = {
    phase: error.phase,
    category: known.category,
    code: error.code,
    retryable: error.retryable,
    actionOwner: owner,
    operatorAction: known.action,
    message: error.message,
  };
  if (error.httpStatus !== undefined) description.httpStatus = error.httpStatus;
  return description;
}

/** The Diagnostic of a failed OAuth step against `url` (the MCP server or the endpoint that failed). */
export function oauthDiagnostic(error: OAuthFlowError, url: string | undefined, reachable: boolean): Diagnostic {
  let parsed: URL | undefined;
  try {
    parsed = url ? new URL(url) : undefined;
  } catch {
    parsed = undefined;
  }
  return buildDiagnostic(oauthFailureDescription(error), reachable ? 'reachable' : 'configured', parsed);
}

const networkCodes = new Set(['unreachable', 'timeout', 'address_blocked', 'redirect_blocked']);

/** Past the first request to the MCP server, it was reachable (`reachable` in highestPassed). */
export function reachedServer(error: OAuthFlowError): boolean {
  return error.phase !== 'AUTH_RESOURCE_DISCOVERY' || !networkCodes.has(error.code);
}

/** A failed OAuth step as the route's error: the catalog's `failure`, the step's message, and its diagnostic. */
export function oauthFailure(failure: ErrorCode, error: OAuthFlowError, url: string | undefined): ApiError {
  return failure(error.message, { diagnostic: oauthDiagnostic(error, url, reachedServer(error)) });
}
