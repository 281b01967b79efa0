// The MCP connections module: external MCP servers, their access, credentials and plugins, and
// connecting them through OAuth (./oauth/). What other code uses of it is exported here.

import type { Config } from '../../config.ts';
import type { Database } from '../../db/database.ts';
import type { OutboundClient } from '../../platform/outbound.ts';
import type { SecretBox } from '../../platform/secrets.ts';
import type { ConnectionDeps, TeamDirectory } from './deps.ts';
import { createMcpOAuth, type McpOAuthModuleDeps, memberTokenRevocation, registerMcpOAuth } from './oauth/index.ts';
import { connectionRecords } from './records.ts';
import { mcpConnectionRoutes } from './routes.ts';
import { mcpToolRoutes } from './tool-routes.ts';
import { createMcpConnectionService } from './service.ts';
import { requireDependencies } from '../../platform/dependencies.ts';
import { createMcpHealthJob, type HealthJobDeps, type McpHealthJob } from './health-job.ts';
import type { AppModule } from '../../platform/background.ts';
import { createConnectionStore } from './store.ts';

export type { TeamDirectory } from './deps.ts';
export { probeLimits } from './probing.ts';
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
  members: ConnectionDeps['members'] & McpOAuthModuleDeps['members'];
  teams: TeamDirectory;
  log: HealthJobDeps['log'];
}

/**
 * The connections module. The OAuth service is built once (its state key from the key ring), first:
 * the connections service is built with its hooks, and the background credential health job
 * (health-job.ts, when MCP_HEALTH_INTERVAL_SECONDS > 0) refreshes and checks with it. `register` adds
 * the connections, plugins and OAuth routes; `app.mcpHealth` is the job when this app runs it.
 */
export async function createMcpConnectionsModule(deps: McpConnectionsModuleDeps): Promise<AppModule> {
  requireDependencies('mcp-connections', deps, ['db', 'config', 'secrets', 'outbound', 'members', 'teams', 'log']);
  const oauth = await createMcpOAuth({
    db: deps.db,
    config: deps.config,
    secrets: deps.secrets,
    outbound: deps.outbound,
    connections: connectionRecords(),
    members: deps.members,
    logger: deps.log,
  });
  const settings = deps.config.mcpHealth;
  const job =
    settings.intervalSeconds > 0
      ? createMcpHealthJob({
          db: deps.db,
          store: createConnectionStore(),
          secrets: deps.secrets,
          outbound: deps.outbound,
          oauth: oauth.hooks,
          settings,
          log: deps.log,
        })
      : null;
  let running = false;
  return {
    async register(app) {
      await registerMcpOAuth(app, oauth.service);
      const service = createMcpConnectionService({
        db: deps.db,
        secrets: deps.secrets,
        outbound: deps.outbound,
        members: deps.members,
        teams: deps.teams,
        publicUrl: deps.config.publicUrl,
        oauth: oauth.hooks,
        logger: app.log,
      });
      await app.register(mcpConnectionRoutes, { service });
      await app.register(mcpToolRoutes, { service });
      // Read when asked: the app's workers start after its routes are registered.
      app.decorate('mcpHealth', {
        getter: () => (running ? job : null),
      });
    },
    workers: job
      ? [
          {
            name: 'mcp-health',
            start() {
              job.start();
              running = true;
              return {
                async stop() {
                  running = false;
                  await job.stop();
                },
              };
            },
          },
        ]
      : [],
  };
}
// Its sealed columns, re-sealed under the newest key by `orgplane secrets reseal`.
export { mcpSealedColumns } from './sealed-columns.ts';
