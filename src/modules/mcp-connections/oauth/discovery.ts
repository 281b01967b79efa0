// Discovery per the MCP authorization spec (revision 2025-11-25), one function per step:
//   1. ask the MCP server without a token and read its `WWW-Authenticate` challenge;
//   2. protected resource metadata (RFC 9728): the challenge's `resource_metadata` URL, else the
//      well-known URLs (path-inserted first, then the root);
//   3. choose the authorization server (a configured issuer is pinned);
//   4. authorization server metadata (RFC 8414, then OpenID Connect discovery, in the spec's
//      order), checking the issuer it names and that it offers PKCE S256.
// Every request goes through the `fetch` passed in (the guarded outbound client in production).
// Step 1 is in challenge.ts, steps 2 and 4 in metadata-fetch.ts; this file chooses the server (step 3)
// and runs the steps together.
import { discoverLegacy, type DiscoveryPath } from './legacy-discovery.ts';
import type { AuthorizationServerMetadata } from './server-metadata.ts';
import { OAuthFlowError, type FetchLike } from './errors.ts';
import { requestChallenge, type BearerChallenge } from './challenge.ts';
import {
  fetchAuthorizationServerMetadata,
  fetchProtectedResourceMetadata,
  sameIssuer,
  type ProtectedResource,
} from './metadata-fetch.ts';

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
