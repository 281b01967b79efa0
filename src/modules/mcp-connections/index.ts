// The MCP connections module: external MCP servers, their access, credentials and plugins, and
// connecting them through OAuth (./oauth/). What other code uses of it is exported here.

import type { FastifyInstance } from 'fastify';
import type { Config } from '../../config.ts';
import type { Database } from '../../db/database.ts';
import type { OutboundClient } from '../../platform/outbound.ts';
import type { SecretBox } from '../../platform/secrets.ts';
import type { ConnectionDeps, TeamDirectory } from './deps.ts';
import { memberTokenRevocation, registerMcpOAuth } from './oauth/index.ts';
import { connectionRecords } from './records.ts';
import { mcpConnectionRoutes } from './routes.ts';
import { mcpToolRoutes } from './tool-routes.ts';
import { createMcpConnectionService } from './service.ts';
import { requireDependencies } from '../../platform/dependencies.ts';

export type { TeamDirectory } from './deps.ts';
export { probeLimits } from './probing.ts';
export { authorizeLimits } from './oauth/service.ts';

/**
 * For the members module: removing a member revokes their MCP OAuth tokens at the authorization
 * servers (RFC 7009, best effort, after the removal commits). Given to it as a removal hook.
 */
export function mcpMemberRemovalHook(deps: { db: Database; secrets: SecretBox; outbound: OutboundClient; config: Pick<Config, 'publicUrl'>; logger?: { warn(details: Record<string, unknown>, message: string): void } }) {
  return memberTokenRevocation({ db: deps.db, secrets: deps.secrets, outbound: deps.outbound, publicUrl: deps.config.publicUrl, connections: connectionRecords(), ...(deps.logger ? { logger: deps.logger } : {}) });
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
 * connections service is built with its hooks (a missing one fails here, at boot).
 */
export async function registerMcpConnections(app: FastifyInstance, deps: McpConnectionsModuleDeps): Promise<void> {
  requireDependencies('mcp-connections', deps, ['db', 'config', 'secrets', 'outbound', 'members', 'teams']);
  const oauth = await registerMcpOAuth(app, { db: deps.db, config: deps.config, secrets: deps.secrets, outbound: deps.outbound, connections: connectionRecords(), members: deps.members });
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
}
