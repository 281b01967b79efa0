// Discovery for servers of the MCP 2025-03-26 authorization spec, which publish no protected
// resource metadata (RFC 9728). That spec's order: the authorization base URL is the MCP server's
// URL without its path; its RFC 8414 metadata at `/.well-known/oauth-authorization-server`; and,
// when there is none (404), the default endpoints `/authorize`, `/token` and `/register` there.
// The same checks as the current spec's discovery hold for metadata found: the issuer it names
// (at the origin), the code flow, PKCE S256. Default endpoints say nothing of PKCE: 2025-03-26 makes
// PKCE mandatory for every client and server, so S256 is used (and assumed).
import { OAuthMetadataSchema } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { AuthorizationServerMetadata } from './server-metadata.ts';
import { OAuthFlowError, printable, requestFailure, type FetchLike } from './errors.ts';

export type DiscoveryPath =
  | 'protected-resource-metadata'
  | 'configured-issuer'
  | 'legacy-metadata'
  | 'legacy-default-endpoints';

export async function discoverLegacy(
  serverUrl: string,
  fetchFn: FetchLike,
): Promise<{ metadata: AuthorizationServerMetadata; path: DiscoveryPath }> {
  const phase = 'AUTH_ISSUER_DISCOVERY';
  const origin = new URL(serverUrl).origin;
  const url = new URL('/.well-known/oauth-authorization-server', origin);
  let response: Response;
  try {
    response = await fetchFn(url, {
      method: 'GET',
      headers: { accept: 'application/json', 'mcp-protocol-version': '2025-03-26' },
    });
  } catch (error) {
    throw requestFailure(phase, `Could not fetch ${url.origin}${url.pathname}`, error);
  }
  if (response.status === 404) {
    await response.body?.cancel().catch(() => {});
    return {
      path: 'legacy-default-endpoints',
      metadata: {
        issuer: origin,
        authorization_endpoint: `${origin}/authorize`,
        token_endpoint: `${origin}/token`,
        registration_endpoint: `${origin}/register`,
        response_types_supported: ['code'],
        code_challenge_methods_supported: ['S256'],
      } as AuthorizationServerMetadata,
    };
  }
  if (!response.ok) {
    await response.body?.cancel().catch(() => {});
    throw new OAuthFlowError(
      phase,
      response.status >= 500 ? 'metadata_unavailable' : 'resource_metadata_missing',
      `The MCP server publishes no protected resource metadata (RFC 9728), and its origin's authorization server metadata answered HTTP ${response.status}`,
      { httpStatus: response.status, retryable: response.status >= 500 },
    );
  }
  let body: unknown;
  try {
    body = await response.json();
  } catch {
    throw new OAuthFlowError(phase, 'metadata_invalid', `${url.origin}${url.pathname} did not return JSON`, {
      httpStatus: response.status,
    });
  }
  const parsed = OAuthMetadataSchema.safeParse(body);
  if (!parsed.success)
    throw new OAuthFlowError(phase, 'metadata_invalid', 'The authorization server metadata is not valid (RFC 8414)');
  const metadata = parsed.data as AuthorizationServerMetadata;
  if (!sameOrigin(metadata.issuer, origin)) {
    throw new OAuthFlowError(
      phase,
      'issuer_mismatch',
      `The authorization server metadata names another issuer (${printable(metadata.issuer)}) than the MCP server's origin`,
    );
  }
  if (!metadata.response_types_supported.includes('code')) {
    throw new OAuthFlowError(
      phase,
      'code_flow_not_supported',
      'The authorization server does not offer the authorization code flow',
    );
  }
  if (!metadata.code_challenge_methods_supported?.includes('S256')) {
    throw new OAuthFlowError(phase, 'pkce_not_supported', 'The authorization server does not advertise PKCE with S256');
  }
  return { metadata, path: 'legacy-metadata' };
}

/**
 * Under 2025-03-26 the authorization server is the MCP server's origin, and the document came from
 * there: the issuer it names may carry a path (the conformance suite's server says `<origin>/oauth`,
 * with its endpoints under it), but an issuer on another origin is a mix-up risk and refused.
 */
function sameOrigin(issuer: string, origin: string): boolean {
  try {
    const url = new URL(issuer);
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.origin === origin && !url.search && !url.hash;
  } catch {
    return false;
  }
}
