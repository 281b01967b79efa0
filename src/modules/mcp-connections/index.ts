// The MCP connections module: external MCP servers, their access, credentials and plugins, and
// connecting them through OAuth (./oauth/). What other code uses of it is exported here.

import type { FastifyInstance } from 'fastify';
import type { Config } from '../../config.ts';
import type { Database } from '../../db/database.ts';
import type { OutboundClient } from '../../platform/outbound.ts';
import type { SecretBox } from '../../platform/secrets.ts';
import type { ConnectionDeps, TeamDirectory } from './deps.ts';
import { createMcpOAuthService } from './oauth/service.ts';
import { deriveStateKey } from './oauth/state.ts';
import { loadOrCreateKeyRing } from '../../platform/secrets.ts';
import { memberTokenRevocation, registerMcpOAuth } from './oauth/index.ts';
import { connectionRecords } from './records.ts';
import { mcpConnectionRoutes } from './routes.ts';
import { mcpToolRoutes } from './tool-routes.ts';
import { createMcpConnectionService } from './service.ts';
import { requireDependencies } from '../../platform/dependencies.ts';
import { createMcpHealthJob, type McpHealthJob } from './health-job.ts';
import { createConnectionStore } from './store.ts';

export type { TeamDirectory } from './deps.ts';
export { probeLimits } from './probing.ts';
export { authorizeLimits } from './oauth/service.ts';
export type { HealthRunSummary, McpHealthJob } from './health-job.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** The background credential health job of this process; null when it does not run (MCP_HEALTH_INTERVAL_SECONDS=0, RUN_WORKERS=false). */
    mcpHealth: McpHealthJob | null;
  }
}

/**
 * For the members module: removing a member revokes their MCP OAuth tokens at the authorization
 * servers (RFC 7009, best effort, after the removal commits). Given to it as a removal hook.
 */
export function mcpMemberRemovalHook(deps: {
  db: Database;
  secrets: SecretBox;
  outbound: OutboundClient;
  config: Pick<Config, 'publicUrl'>;
  logger?: { warn(details: Record<string, unknown>, message: string): void };
}) {
  return memberTokenRevocation({
    db: deps.db,
    secrets: deps.secrets,
    outbound: deps.outbound,
    publicUrl: deps.config.publicUrl,
    connections: connectionRecords(),
    ...(deps.logger ? { logger: deps.logger } : {}),
  });
}

export interface McpConnectionsModuleDeps {
  db: Database;
  config: Config;
  secrets: SecretBox;
  outbound: OutboundClient;
  /** The membership core: the acting member re-checked, access sets' members (and OAuth's member as they are now). */
  members: ConnectionDeps['members'] & Parameters<typeof registerMcpOAuth>[1]['members'];
  teams: TeamDirectory;
}

/**
 * Registers the connections and plugins routes and the OAuth module. OAuth is built first: the
 * connections service is built with its hooks (a missing one fails here, at boot). In a process that
 * runs workers, the background credential health job (health-job.ts) starts too, and stops on close.
 */
export async function registerMcpConnections(app: FastifyInstance, deps: McpConnectionsModuleDeps): Promise<void> {
  requireDependencies('mcp-connections', deps, ['db', 'config', 'secrets', 'outbound', 'members', 'teams']);
  const oauth = await registerMcpOAuth(app, {
    db: deps.db,
    config: deps.config,
    secrets: deps.secrets,
    outbound: deps.outbound,
    connections: connectionRecords(),
    members: deps.members,
  });
  const service = createMcpConnectionService({
    db: deps.db,
    secrets: deps.secrets,
    outbound: deps.outbound,
    members: deps.members,
    teams: deps.teams,
    publicUrl: deps.config.publicUrl,
    oauth,
    logger: app.log,
  });
  await app.register(mcpConnectionRoutes, { service });
  await app.register(mcpToolRoutes, { service });

  const settings = deps.config.mcpHealth;
  if (settings.intervalSeconds > 0 && deps.config.runWorkers) {
    const job = createMcpHealthJob({
      db: deps.db,
      store: createConnectionStore(),
      secrets: deps.secrets,
      outbound: deps.outbound,
      oauth,
      settings,
      log: app.log,
    });
    job.start();
    app.decorate('mcpHealth', job);
    app.addHook('onClose', async () => job.stop());
  } else {
    app.decorate('mcpHealth', null);
  }
}

/**
 * The background credential health job outside an HTTP app (`orgplane worker`); null when
 * MCP_HEALTH_INTERVAL_SECONDS is 0. The OAuth service it refreshes tokens with is built as the app
 * builds it (its state key from the same key ring), without routes.
 */
export async function startMcpHealthWorker(
  deps: Omit<McpConnectionsModuleDeps, 'teams'> & { log: Parameters<typeof createMcpHealthJob>[0]['log'] },
): Promise<McpHealthJob | null> {
  const settings = deps.config.mcpHealth;
  if (settings.intervalSeconds === 0) return null;
  const keyRing = await loadOrCreateKeyRing(deps.config.secretKey, deps.config.dataDir);
  const oauth = createMcpOAuthService({
    db: deps.db,
    config: deps.config,
    secrets: deps.secrets,
    outbound: deps.outbound,
    stateKey: deriveStateKey(keyRing),
    connections: connectionRecords(),
    members: deps.members,
    logger: deps.log,
  });
  const job = createMcpHealthJob({
    db: deps.db,
    store: createConnectionStore(),
    secrets: deps.secrets,
    outbound: deps.outbound,
    oauth,
    settings,
    log: deps.log,
  });
  job.start();
  return job;
}
