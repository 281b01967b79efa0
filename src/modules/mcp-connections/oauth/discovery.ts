// Discovery per the MCP authorization spec (revision 2025-11-25), one function per step:
//   1. ask the MCP server without a token and read its `WWW-Authenticate` challenge;
//   2. protected resource metadata (RFC 9728): the challenge's `resource_metadata` URL, else the
//      well-known URLs (path-inserted first, then the root);
//   3. choose the authorization server (a configured issuer is pinned);
//   4. authorization server metadata (RFC 8414, then OpenID Connect discovery, in the spec's
//      order), checking the issuer it names and that it offers PKCE S256.
// Every request goes through the `fetch` passed in (the guarded outbound client in production).

import { OAuthMetadataSchema, OAuthProtectedResourceMetadataSchema } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { OAuthProtectedResourceMetadata } from '@modelcontextprotocol/sdk/shared/auth.js';
import { checkResourceAllowed } from '@modelcontextprotocol/sdk/shared/auth-utils.js';
import { discoverLegacy, type DiscoveryPath } from './legacy-discovery.ts';
import type { AuthorizationServerMetadata } from './server-metadata.ts';
import { OAuthFlowError, printable, requestFailure, type FetchLike, type OAuthPhase } from './errors.ts';

export const MCP_PROTOCOL_VERSION = '2025-11-25';

export interface BearerChallenge {
  resourceMetadataUrl?: string;
  scope?: string;
  error?: string;
}

/**
 * Reads the Bearer challenge of a `WWW-Authenticate` header (RFC 6750 §3, RFC 9728 §5.1).
 * Handles several challenges in one header, quoted strings with escapes and unquoted tokens.
 */
export function parseWwwAuthenticate(header: string | null | undefined): BearerChallenge | null {
  if (!header) return null;
  const s = header;
  let i = 0;
  let inBearer = false;
  let found = false;
  const params: Record<string, string> = {};
  const skipSpaces = () => {
    while (i < s.length && (s[i] === ' ' || s[i] === '\t')) i++;
  };
  while (i < s.length) {
    skipSpaces();
    if (s[i] === ',') {
      i++;
      continue;
    }
    const start = i;
    while (i < s.length && /[!#$%&'*+.^_`|~0-9A-Za-z-]/.test(s[i]!)) i++;
    const token = s.slice(start, i);
    if (!token) {
      i++; // not a token character: skip it rather than loop forever
      continue;
    }
    skipSpaces();
    if (s[i] === '=') {
      // auth-param: token = ( token / quoted-string )
      i++;
      skipSpaces();
      let value = '';
      if (s[i] === '"') {
        i++;
        while (i < s.length && s[i] !== '"') {
          if (s[i] === '\\' && i + 1 < s.length) i++;
          value += s[i];
          i++;
        }
        i++;
      } else {
        const vs = i;
        while (i < s.length && s[i] !== ',' && s[i] !== ' ' && s[i] !== '\t') i++;
        value = s.slice(vs, i);
      }
      if (inBearer) {
        const key = token.toLowerCase();
        if (!(key in params)) params[key] = value;
      }
    } else {
      // a new challenge (auth-scheme); a token68 after a scheme is ignored
      inBearer = token.toLowerCase() === 'bearer';
      if (inBearer) found = true;
    }
  }
  if (!found) return null;
  const out: BearerChallenge = {};
  if (params.resource_metadata) out.resourceMetadataUrl = params.resource_metadata;
  if (params.scope) out.scope = params.scope;
  if (params.error) out.error = params.error;
  return out;
}

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

/**
 * Step 1: an unauthenticated MCP request, to read the server's challenge. A server that answers
 * without asking for a token returns null (nothing to discover from the challenge).
 */
export async function requestChallenge(serverUrl: string | URL, fetchFn: FetchLike): Promise<BearerChallenge | null> {
  const { status, challenge } = await resourceChallenge(serverUrl, null, fetchFn);
  return status === 401 || status === 403 ? challenge : null;
}

/**
 * One MCP initialize request, with or without a token, for what the server says about it: the
 * status and its Bearer challenge (a 401 to read discovery hints from, or a 403 insufficient_scope
 * naming the scopes it wants).
 */
export async function resourceChallenge(
  serverUrl: string | URL,
  accessToken: string | null,
  fetchFn: FetchLike,
): Promise<{ status: number; challenge: BearerChallenge | null }> {
  let response: Response;
  try {
    response = await fetchFn(new URL(serverUrl), {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': MCP_PROTOCOL_VERSION,
        ...(accessToken ? { authorization: `Bearer ${accessToken}` } : {}),
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: {
          protocolVersion: MCP_PROTOCOL_VERSION,
          capabilities: {},
          clientInfo: { name: 'orgplane', version: '0.1.0' },
        },
      }),
    });
  } catch (error) {
    throw requestFailure('AUTH_RESOURCE_DISCOVERY', 'Could not reach the MCP server', error);
  }
  await response.body?.cancel().catch(() => {});
  return { status: response.status, challenge: parseWwwAuthenticate(response.headers.get('www-authenticate')) };
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

export interface IssuerChoice {
  issuer: string;
}

/**
 * Step 3: which authorization server. A configured issuer is pinned: it must be one the
 * resource lists; otherwise the connection needs an administrator's review. Without a pin the
 * first listed server is used. Without protected resource metadata, only a pinned issuer can
 * say where to go.
 */
export function chooseAuthorizationServer(
  resource: ProtectedResource | null,
  pinnedIssuer: string | null | undefined,
): IssuerChoice {
  const listed = resource?.metadata.authorization_servers ?? [];
  if (pinnedIssuer) {
    if (!resource) return { issuer: pinnedIssuer };
    const match = listed.find((s) => sameIssuer(s, pinnedIssuer));
    if (match) return { issuer: match };
    throw new OAuthFlowError(
      'AUTH_ISSUER_DISCOVERY',
      'issuer_mismatch',
      'The MCP server names an authorization server other than the configured issuer',
      { issuerReviewRequired: true },
    );
  }
  if (!resource) {
    throw new OAuthFlowError(
      'AUTH_RESOURCE_DISCOVERY',
      'resource_metadata_missing',
      'The MCP server publishes no protected resource metadata (RFC 9728)',
    );
  }
  const first = listed[0];
  if (!first) {
    throw new OAuthFlowError(
      'AUTH_RESOURCE_DISCOVERY',
      'authorization_server_missing',
      'The protected resource metadata lists no authorization server',
    );
  }
  return { issuer: first };
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

export interface DiscoveryResult {
  /** The `resource` parameter to send (RFC 8707): the metadata's value verbatim, else the server URL. */
  resource: string;
  resourceMetadataUrl: string | null;
  resourceScopes: string[];
  challengeScope: string | null;
  issuer: string;
  metadata: AuthorizationServerMetadata;
  /** How the authorization server was found (the connection records it). */
  discoveryPath: DiscoveryPath;
}

/**
 * The four steps together. A server with no protected resource metadata and no configured issuer
 * is taken for one of the 2025-03-26 spec, and discovered as that spec says (legacy-discovery.ts).
 * `challenge` may be passed when the caller already holds a 401.
 */
export async function discover(options: {
  serverUrl: string;
  fetch: FetchLike;
  pinnedIssuer?: string | null;
  challenge?: BearerChallenge | null;
  /** The grant the token will come by (the authorization code flow unless said). */
  grant?: 'authorization_code' | 'client_credentials';
}): Promise<DiscoveryResult> {
  const challenge =
    options.challenge !== undefined ? options.challenge : await requestChallenge(options.serverUrl, options.fetch);
  const resource = await fetchProtectedResourceMetadata(options.serverUrl, options.fetch, challenge);
  const serverUrl = new URL(options.serverUrl);
  serverUrl.hash = '';
  if (!resource && !options.pinnedIssuer) {
    const legacy = await discoverLegacy(options.serverUrl, options.fetch);
    return {
      resource: serverUrl.href,
      resourceMetadataUrl: null,
      resourceScopes: [],
      challengeScope: challenge?.scope ?? null,
      issuer: legacy.metadata.issuer,
      metadata: legacy.metadata,
      discoveryPath: legacy.path,
    };
  }
  const { issuer } = chooseAuthorizationServer(resource, options.pinnedIssuer);
  const metadata = await fetchAuthorizationServerMetadata(issuer, options.fetch, {
    pinned: Boolean(options.pinnedIssuer),
    ...(options.grant ? { grant: options.grant } : {}),
  });
  return {
    discoveryPath: resource ? 'protected-resource-metadata' : 'configured-issuer',
    resource: resource?.metadata.resource ?? serverUrl.href,
    resourceMetadataUrl: resource?.metadataUrl ?? null,
    resourceScopes: resource?.metadata.scopes_supported ?? [],
    challengeScope: challenge?.scope ?? null,
    issuer: metadata.issuer,
    metadata,
  };
}
