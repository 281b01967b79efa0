// Steps 2 and 4 of discovery (discovery.ts): where the metadata documents are (the well-known URLs),
// and fetching and checking them: the protected resource's (RFC 9728) and the authorization server's
// (RFC 8414, OpenID Connect discovery).
import { OAuthMetadataSchema, OAuthProtectedResourceMetadataSchema } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { OAuthProtectedResourceMetadata } from '@modelcontextprotocol/sdk/shared/auth.js';
import { checkResourceAllowed } from '@modelcontextprotocol/sdk/shared/auth-utils.js';
import type { AuthorizationServerMetadata } from './server-metadata.ts';
import { OAuthFlowError, printable, requestFailure, type FetchLike, type OAuthPhase } from './errors.ts';
import { MCP_PROTOCOL_VERSION, type BearerChallenge } from './challenge.ts';

function wellKnownUrls(base: URL, suffix: string): URL[] {
  const path = base.pathname.replace(/\/+$/, '');
  const urls: URL[] = [];
  if (path) urls.push(new URL(`/.well-known/${suffix}${path}`, base.origin));
  urls.push(new URL(`/.well-known/${suffix}`, base.origin));
  return urls;
}

/** RFC 9728 §3 as the MCP spec orders it: path-inserted well-known URL, then the root one. */
export function protectedResourceMetadataUrls(serverUrl: string | URL): URL[] {
  return wellKnownUrls(new URL(serverUrl), 'oauth-protected-resource');
}

/**
 * Authorization server metadata URLs in the MCP spec's order. For an issuer with a path:
 * RFC 8414 path-inserted, OpenID path-inserted, OpenID path-appended; without a path:
 * RFC 8414 then OpenID at the root.
 */
export function authorizationServerMetadataUrls(issuer: string | URL): URL[] {
  const url = new URL(issuer);
  const path = url.pathname.replace(/\/+$/, '');
  if (!path) {
    return [
      new URL('/.well-known/oauth-authorization-server', url.origin),
      new URL('/.well-known/openid-configuration', url.origin),
    ];
  }
  return [
    new URL(`/.well-known/oauth-authorization-server${path}`, url.origin),
    new URL(`/.well-known/openid-configuration${path}`, url.origin),
    new URL(`${path}/.well-known/openid-configuration`, url.origin),
  ];
}

/** Issuers compare as identical strings (RFC 8414 §3.3), except that a bare origin may carry its "/" or not. */
export function sameIssuer(a: string, b: string): boolean {
  if (a === b) return true;
  const strip = (v: string) => (/^[a-z][a-z0-9+.-]*:\/\/[^/?#]+\/$/i.test(v) ? v.slice(0, -1) : v);
  return strip(a) === strip(b);
}

async function getJson(url: URL, fetchFn: FetchLike, phase: OAuthPhase): Promise<{ status: number; body?: unknown }> {
  let response: Response;
  try {
    response = await fetchFn(url, {
      method: 'GET',
      headers: { accept: 'application/json', 'mcp-protocol-version': MCP_PROTOCOL_VERSION },
    });
  } catch (error) {
    throw requestFailure(phase, `Could not fetch ${url.origin}${url.pathname}`, error);
  }
  if (!response.ok) {
    await response.body?.cancel().catch(() => {});
    return { status: response.status };
  }
  let body: unknown;
  try {
    body = await response.json();
  } catch {
    throw new OAuthFlowError(phase, 'metadata_invalid', `${url.origin}${url.pathname} did not return JSON`, {
      httpStatus: response.status,
    });
  }
  return { status: response.status, body };
}

export interface ProtectedResource {
  metadata: OAuthProtectedResourceMetadata;
  metadataUrl: string;
}

/**
 * Step 2: protected resource metadata. The challenge's `resource_metadata` URL is used when
 * given; otherwise the well-known URLs are tried in order (a 4xx moves to the next). The
 * document's `resource` must cover the server URL (RFC 9728 §3.3), so one server cannot
 * send us to another's authorization server.
 */
export async function fetchProtectedResourceMetadata(
  serverUrl: string | URL,
  fetchFn: FetchLike,
  challenge?: BearerChallenge | null,
): Promise<ProtectedResource | null> {
  const phase = 'AUTH_RESOURCE_DISCOVERY';
  let candidates: URL[];
  if (challenge?.resourceMetadataUrl) {
    let url: URL;
    try {
      url = new URL(challenge.resourceMetadataUrl);
    } catch {
      throw new OAuthFlowError(
        phase,
        'resource_metadata_url_invalid',
        'The server named an invalid resource_metadata URL',
      );
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') {
      throw new OAuthFlowError(
        phase,
        'resource_metadata_url_invalid',
        'The server named a resource_metadata URL that is not http(s)',
      );
    }
    candidates = [url];
  } else {
    candidates = protectedResourceMetadataUrls(serverUrl);
  }
  for (const url of candidates) {
    const { status, body } = await getJson(url, fetchFn, phase);
    if (body === undefined) {
      if (status >= 500) {
        throw new OAuthFlowError(phase, 'metadata_unavailable', `Protected resource metadata answered HTTP ${status}`, {
          httpStatus: status,
          retryable: true,
        });
      }
      continue;
    }
    const parsed = OAuthProtectedResourceMetadataSchema.safeParse(body);
    if (!parsed.success) {
      throw new OAuthFlowError(phase, 'metadata_invalid', 'The protected resource metadata is not valid (RFC 9728)');
    }
    const metadata = parsed.data;
    if (!checkResourceAllowed({ requestedResource: new URL(serverUrl), configuredResource: metadata.resource })) {
      throw new OAuthFlowError(
        phase,
        'resource_mismatch',
        `The protected resource metadata describes ${printable(metadata.resource)}, not this server`,
      );
    }
    return { metadata, metadataUrl: url.href };
  }
  return null;
}

/**
 * Step 4: authorization server metadata, in the spec's order. The document must name the issuer
 * we asked for (RFC 8414 §3.3 / OIDC Discovery §4.3), offer the code flow, and advertise PKCE
 * S256 (the MCP spec: a client MUST refuse a server that does not). `pinned` marks an issuer
 * that came from configuration, so a mismatch there is flagged for review.
 */
export async function fetchAuthorizationServerMetadata(
  issuer: string,
  fetchFn: FetchLike,
  options: { pinned?: boolean; grant?: 'authorization_code' | 'client_credentials' } = {},
): Promise<AuthorizationServerMetadata> {
  const phase = 'AUTH_ISSUER_DISCOVERY';
  let issuerUrl: URL;
  try {
    issuerUrl = new URL(issuer);
  } catch {
    throw new OAuthFlowError(phase, 'issuer_invalid', 'The authorization server issuer is not a URL');
  }
  if (issuerUrl.protocol !== 'https:' && issuerUrl.protocol !== 'http:') {
    throw new OAuthFlowError(phase, 'issuer_invalid', 'The authorization server issuer is not an http(s) URL');
  }
  for (const url of authorizationServerMetadataUrls(issuerUrl)) {
    const { status, body } = await getJson(url, fetchFn, phase);
    if (body === undefined) {
      if (status >= 500) {
        throw new OAuthFlowError(
          phase,
          'metadata_unavailable',
          `Authorization server metadata answered HTTP ${status}`,
          { httpStatus: status, retryable: true },
        );
      }
      continue;
    }
    const parsed = OAuthMetadataSchema.safeParse(body);
    if (!parsed.success) {
      throw new OAuthFlowError(phase, 'metadata_invalid', 'The authorization server metadata is not valid (RFC 8414)');
    }
    const metadata = parsed.data as AuthorizationServerMetadata;
    if (!sameIssuer(metadata.issuer, issuer)) {
      throw new OAuthFlowError(
        phase,
        'issuer_mismatch',
        `The authorization server metadata names another issuer (${printable(metadata.issuer)})`,
        {
          issuerReviewRequired: options.pinned ?? false,
        },
      );
    }
    // The code flow and PKCE are the browser's; a client obtaining a token for itself uses neither.
    if (options.grant === 'client_credentials') return metadata;
    if (!metadata.response_types_supported.includes('code')) {
      throw new OAuthFlowError(
        phase,
        'code_flow_not_supported',
        'The authorization server does not offer the authorization code flow',
      );
    }
    if (!metadata.code_challenge_methods_supported?.includes('S256')) {
      throw new OAuthFlowError(
        phase,
        'pkce_not_supported',
        'The authorization server does not advertise PKCE with S256',
      );
    }
    return metadata;
  }
  throw new OAuthFlowError(
    phase,
    'metadata_missing',
    'The authorization server publishes no RFC 8414 or OpenID Connect metadata',
  );
}
