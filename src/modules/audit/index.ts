// The audit log: how the module joins an app. It installs the one recorder of audit events into
// platform/write-context.ts (every service declares its events with `tx.audit(...)`), records refused
// privileged calls, and serves the log to owners and admins.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AuditStreamSettings } from '../../config.ts';
import type { AppModule } from '../../platform/background.ts';
import type { Database } from '../../db/database.ts';
import { writeContextOf } from '../../http/auth.ts';
import { requireDependencies } from '../../platform/dependencies.ts';
import type { OutboundClient } from '../../platform/outbound.ts';
import type { SecretBox } from '../../platform/secrets.ts';
import { installAuditRecorder, writeTransaction } from '../../platform/write-context.ts';
import type { MembershipAuthorization } from '../identity/index.ts';
import { recordAuditEvents } from './recorder.ts';
import { type RetentionSettings, retentionWorker } from './retention.ts';
import { auditRoutes } from './routes.ts';
import { createAuditService } from './service.ts';
import { auditStreamRoutes } from './stream-routes.ts';
import { createAuditStreamService } from './stream-service.ts';
import { startAuditStreamWorker } from './stream-worker.ts';

export { createInstanceAuditLog, verifyChainOf } from './service.ts';
// The instance's own log is served by the instance-administration routes, as an organization's is here.
export {
  auditExportDescription,
  auditExportQuery,
  auditListQuery,
  auditPageOf,
  auditPageSchema,
  auditQueryOf,
  auditVerificationSchema,
  checkAuditRange,
  sendAuditExport,
} from './schemas.ts';
export { eraseOrganizationLog as eraseAuditOfOrganization, listChains } from './store.ts';
export { pruneAuditEvents } from './retention.ts';

/** Installs the recorder without the routes (the CLI's writes are audited too). */
export function installAuditLog(): void {
  installAuditRecorder(recordAuditEvents);
}

export interface AuditDeps {
  db: Database;
  /** AUDIT_RETENTION_DAYS, and when a process that runs workers first prunes. */
  retention: RetentionSettings;
  membership: Pick<MembershipAuthorization, 'requireMembership' | 'getMemberByUser' | 'holdActingMember'>;
  /** Seals the streams' signing secrets. */
  secrets: SecretBox;
  /** The guarded client every stream delivery goes through. */
  outbound: OutboundClient;
  /** Delivery of the streams. */
  streamSettings: AuditStreamSettings;
  log: {
    info(details: Record<string, unknown>, message: string): void;
    warn(details: Record<string, unknown>, message: string): void;
    error(details: Record<string, unknown>, message: string): void;
  };
}

/** The organization whose log a refusal goes to: the one in the path when the caller is its member, else the caller's own. */
async function organizationOfRefusal(
  request: FastifyRequest,
  membership: AuditDeps['membership'],
): Promise<string | null> {
  const caller = request.caller!;
  const inPath = (request.params as Record<string, unknown> | undefined)?.organizationId;
  if (
    typeof inPath === 'string' &&
    inPath !== caller.organizationId &&
    caller.userId &&
    /^org_[0-9a-z]{26}$/.test(inPath)
  ) {
    if (await membership.getMemberByUser(inPath, caller.userId)) return inPath;
  }
  return caller.organizationId;
}

function errorCodeOf(payload: unknown): string | null {
  if (typeof payload !== 'string' || payload.length > 4096) return null;
  try {
    const body = JSON.parse(payload) as { error?: unknown };
    return typeof body.error === 'string' ? body.error : null;
  } catch {
    return null;
  }
}

/**
 * The audit module: `register` installs the recorder, the refusal hook and the routes; call it before
 * the other modules register theirs (the hook must apply to all of them). Its jobs: retention and
 * stream delivery.
 */
export function createAuditModule(deps: AuditDeps): AppModule {
  requireDependencies('audit', deps, ['db', 'membership', 'secrets', 'outbound', 'retention', 'streamSettings', 'log']);
  return {
    register: (app) => registerAudit(app, deps),
    workers: [
      retentionWorker(deps.db, deps.retention, deps.log),
      {
        name: 'audit-streams',
        start: () =>
          startAuditStreamWorker({
            db: deps.db,
            secrets: deps.secrets,
            outbound: deps.outbound,
            settings: deps.streamSettings,
            log: deps.log,
          }),
      },
    ],
  };
}

async function registerAudit(app: FastifyInstance, deps: AuditDeps): Promise<void> {
  installAuditLog();
  // A privileged call refused to an authenticated caller (403) is an event too, in its own transaction,
  // written before the answer leaves so a client that reads the log next finds it.
  app.addHook('onSend', async (request, reply, payload) => {
    if (reply.statusCode !== 403 || !request.caller || request.method === 'HEAD' || request.method === 'OPTIONS')
      return payload;
    try {
      const organizationId = await organizationOfRefusal(request, deps.membership);
      const route = `${request.method} ${request.routeOptions.url ?? request.url.split('?')[0]}`;
      await writeTransaction(deps.db, writeContextOf(request), async (tx) => {
        tx.audit({
          action: 'request.denied',
          outcome: 'denied',
          organizationId,
          target: { type: 'route', id: route },
          changes: { error: errorCodeOf(payload) },
        });
      });
    } catch (error) {
      request.log.error({ err: error }, 'audit: could not record a refused call');
    }
    return payload;
  });
  await app.register(auditRoutes, { audit: createAuditService(deps) });
  await app.register(auditStreamRoutes, { streams: createAuditStreamService(deps) });
}
// Its sealed columns, re-sealed under the newest key by `orgplane secrets reseal`.
export { auditSealedColumns } from './sealed-columns.ts';
