// The composition root: the one place the shared services and the modules with background work are
// built. `orgplane start` (app.ts) registers them on its app and, with RUN_WORKERS, starts their
// workers; `orgplane worker` (cli.ts) starts the same workers without an app; the CLI's one-off
// commands (bootstrap, org set-plan) use the core services alone. A new module's jobs go in its
// AppModule's `workers` and its module in `modules` below: both commands then run them.
import type { Config } from './config.ts';
import type { Database } from './db/database.ts';
import { auditSealedColumns, createAuditModule, eraseAuditOfOrganization } from './modules/audit/index.ts';
import { createMembershipCore, eraseIdentityOfOrganization } from './modules/identity/index.ts';
import { memberInvitations } from './modules/invitations/index.ts';
import { createMemoryModule } from './modules/memory/index.ts';
import { createMcpConnectionsModule, mcpMemberRemovalHook, mcpSealedColumns } from './modules/mcp-connections/index.ts';
import {
  createMessengerModule,
  eraseMessengerOfOrganization,
  messengerSealedColumns,
} from './modules/messenger/index.ts';
import { createOrganizationDirectory, type OrganizationEraser } from './modules/organizations/index.ts';
import { createPasswordSignInPolicy, ssoSealedColumns } from './modules/sso/index.ts';
import { createRoleGrants } from './modules/roles/index.ts';
import { createTeamDirectory } from './modules/teams/index.ts';
import { createUserDirectory } from './modules/users/index.ts';
import type { AppModule, BackgroundWorker } from './platform/background.ts';
import { createMailer, type Mailer } from './platform/mailer.ts';
import type { OutboundClient } from './platform/outbound.ts';
import { createRateLimiter, forgetRateLimitsNaming } from './platform/rate-limiter.ts';
import type { SealedColumns, SecretBox } from './platform/secrets.ts';

/**
 * Every column that holds a sealed secret, as the module owning its table declares it: what
 * `orgplane secrets reseal` re-seals under the newest key. A module that seals a new column declares it
 * in its sealed-columns.ts (test/system/secrets-reseal.test.ts fails on a `_sealed` column no module declares).
 */
export const sealedColumns: readonly SealedColumns[] = [
  ...auditSealedColumns,
  ...ssoSealedColumns,
  ...mcpSealedColumns,
  ...messengerSealedColumns,
];

/**
 * Each module's part of erasing an organization, for the tables no ON DELETE CASCADE key to `organizations`
 * empties (the rest go with the organization's row): what the organizations service runs before deleting it.
 * A module whose new table names an organization without such a key adds its eraser here
 * (test/identity/organization-delete.test.ts fails on a row left behind).
 */
export const organizationErasers: readonly OrganizationEraser[] = [
  { module: 'messenger', erase: eraseMessengerOfOrganization },
  { module: 'audit', erase: eraseAuditOfOrganization },
  { module: 'identity', erase: eraseIdentityOfOrganization },
  { module: 'platform (rate limits)', erase: forgetRateLimitsNaming },
];

/** The services every process that opens the database builds the same way, once. */
export function composeCore(deps: { config: Config; db: Database }) {
  const { config, db } = deps;
  const membership = createMembershipCore({
    db,
    invitations: memberInvitations,
    sessionTtlHours: config.sessionTtlHours,
  });
  return {
    membership,
    rateLimiter: createRateLimiter(db),
    organizations: createOrganizationDirectory({ db, defaultPlan: config.defaultPlan }),
    users: createUserDirectory({ db }),
    teams: createTeamDirectory({ db, membership }),
    // Whether a role may be given: asked by every module that gives one (members, invitations, API keys, SSO).
    roleGrants: createRoleGrants(),
    // SSO's rule, handed to users narrowed: users never imports the SSO module (which uses users' accounts).
    passwordSignInPolicy: createPasswordSignInPolicy({ db, membership }),
  };
}

export type Core = ReturnType<typeof composeCore>;

export interface CompositionDeps {
  config: Config;
  db: Database;
  secrets: SecretBox;
  /** The guarded client for tenant-supplied URLs, shared by every module. */
  outbound: OutboundClient;
  log: {
    info(details: Record<string, unknown>, message: string): void;
    warn(details: Record<string, unknown>, message: string): void;
    error(details: Record<string, unknown>, message: string): void;
  };
}

export interface Composition extends Core {
  /** Removing a member (by an admin, themselves, or SCIM) revokes their MCP OAuth tokens at the providers. */
  removalHooks: ReturnType<typeof mcpMemberRemovalHook>[];
  audit: AppModule;
  mcpConnections: AppModule;
  messenger: AppModule;
  memory: AppModule;
  /** Outgoing e-mail (SMTP_URL): invitations. Closed with the app. */
  mailer: Mailer;
  /** Every module's background jobs: what a process that runs workers starts. */
  workers: BackgroundWorker[];
}

export async function compose(deps: CompositionDeps): Promise<Composition> {
  const { config, db, secrets, outbound, log } = deps;
  const core = composeCore({ config, db });
  const audit = createAuditModule({
    db,
    membership: core.membership,
    secrets,
    outbound,
    retention: { days: config.auditRetentionDays, firstRunSeconds: config.auditRetentionFirstRunSeconds },
    streamSettings: config.auditStream,
    log,
  });
  const mcpConnections = await createMcpConnectionsModule({
    db,
    config,
    secrets,
    outbound,
    members: core.membership,
    teams: core.teams,
    log,
  });
  const messenger = createMessengerModule({ db, config, secrets, outbound, membership: core.membership, log });
  const memory = createMemoryModule({ db, log });
  const modules = [audit, mcpConnections, messenger, memory];
  return {
    ...core,
    removalHooks: [mcpMemberRemovalHook({ db, secrets, outbound, config, logger: log })],
    audit,
    mcpConnections,
    messenger,
    memory,
    mailer: createMailer(config.mail),
    workers: modules.flatMap((module) => module.workers),
  };
}
