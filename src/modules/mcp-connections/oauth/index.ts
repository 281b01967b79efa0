// Wires MCP OAuth into the app: builds the service and registers its routes. The connections module
// (../index.ts) builds it first and hands the service it builds next the hooks below.

import type { FastifyInstance } from 'fastify';
import type { Config } from '../../../config.ts';
import type { Database, Queryable } from '../../../db/database.ts';
import type { OutboundClient } from '../../../platform/outbound.ts';
import { loadOrCreateKeyRing, type SecretBox } from '../../../platform/secrets.ts';
import type { ConnectionOAuthHooks } from '../contracts.ts';
import type { OAuthDeps } from './deps.ts';
import { mcpOAuthRoutes } from './routes.ts';
import { createMcpOAuthService, type McpOAuthService } from './service.ts';
import { deriveStateKey } from './state.ts';
import { deleteConnectionState, deletePendingAuthorizations, deleteRegisteredClients } from './store.ts';
import { prepareMemberRevocation } from './revocation.ts';

// What the connections module (the parent) uses of OAuth; nothing else of ./oauth/ is reached from outside.
export { signingAlgorithmFor } from './client-assertion.ts';
export { resourceChallenge } from './challenge.ts';
export { fetchProtectedResourceMetadata } from './metadata-fetch.ts';
export type { FetchLike } from './errors.ts';
export type { DiscoveryPath } from './legacy-discovery.ts';
export { discoveryPaths, issuerReviewFlags } from './store.ts';
export { callbackModeFor, callbackUrl, clientMetadataUrl, sharedCallbackUrl } from './urls.ts';

/**
 * Runs inside the edit transaction that changes a connection's identity: pending authorizations
 * (their callbacks would store nothing anyway), dynamically registered clients and discovery
 * state all belong to the old identity.
 */
export async function dropOAuthFlowState(tx: Queryable, organizationId: string, connectionId: string): Promise<void> {
  await deletePendingAuthorizations(tx, organizationId, connectionId);
  await deleteRegisteredClients(tx, organizationId, connectionId);
  await deleteConnectionState(tx, organizationId, connectionId);
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The MCP OAuth service (token refresh for other modules; tests drive it directly). */
    mcpOAuth: McpOAuthService;
  }
}

/**
 * What removing a member does to their MCP OAuth tokens: in the removal's transaction it reads them
 * (and the clients that obtained them); what it returns revokes them at the authorization servers
 * once the removal has committed (RFC 7009, best effort).
 */
export function memberTokenRevocation(deps: {
  db: Database;
  secrets: SecretBox;
  outbound: OutboundClient;
  publicUrl: string;
  connections: OAuthDeps['connections'];
  logger?: OAuthDeps['logger'];
}) {
  const oauth = {
    db: deps.db,
    secrets: deps.secrets,
    publicUrl: deps.publicUrl,
    fetch: ((url, init) => deps.outbound.fetch(url, init)) as OAuthDeps['fetch'],
    connections: deps.connections,
    ...(deps.logger ? { logger: deps.logger } : {}),
  };
  return {
    beforeRemoval: (tx: Queryable, organizationId: string, memberId: string) =>
      prepareMemberRevocation(oauth, tx, organizationId, memberId),
  };
}

export interface McpOAuthModuleDeps extends Pick<OAuthDeps, 'connections' | 'members'> {
  db: Database;
  config: Config;
  secrets: SecretBox;
  outbound: OutboundClient;
}

/**
 * Builds the OAuth service, once per process: the app's routes and the background health job use the
 * same one. Returns it with the hooks the connections service is built with.
 */
export async function createMcpOAuth(
  deps: McpOAuthModuleDeps & { logger: NonNullable<OAuthDeps['logger']> },
): Promise<{ service: McpOAuthService; hooks: ConnectionOAuthHooks }> {
  // The state key is derived from the server secret (the same key ring that encrypts credentials),
  // so every process of one deployment signs and checks states alike.
  const keyRing = await loadOrCreateKeyRing(deps.config.secretKey, deps.config.dataDir);
  const service = createMcpOAuthService({
    db: deps.db,
    config: deps.config,
    secrets: deps.secrets,
    outbound: deps.outbound,
    stateKey: deriveStateKey(keyRing),
    connections: deps.connections,
    members: deps.members,
    logger: deps.logger,
  });
  return {
    service,
    hooks: {
      dropIdentityState: dropOAuthFlowState,
      // POST .../test of an OAuth connection: refresh first, classify a refused token, one step-up.
      testConnection: (row, memberId) => service.testConnection(row, memberId),
      checkCredential: (row, credential, wants) => service.checkCredential(row, credential, wants),
      prepareRevocation: (tx, connection) => service.prepareConnectionRevocation(tx, connection),
    },
  };
}

/** Registers the OAuth routes of the service createMcpOAuth built. */
export async function registerMcpOAuth(app: FastifyInstance, service: McpOAuthService): Promise<void> {
  app.decorate('mcpOAuth', service);
  await app.register(mcpOAuthRoutes, { service });
}
