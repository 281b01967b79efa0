// Instance administration: how the module joins an app. It reads every organization and person (counts
// and settings), and changes plans and administrators through the organizations and users modules.
import type { FastifyInstance } from 'fastify';
import { requireDependencies } from '../../platform/dependencies.ts';
import { createInstanceAuditLog } from '../audit/index.ts';
import { adminAuditRoutes } from './audit-routes.ts';
import { adminRoutes } from './routes.ts';
import { createAdminService, type AdminServiceDeps } from './service.ts';

/** Registers /v1/admin: the overview, people, organizations, administrators and the instance's audit log. */
export async function registerAdmin(app: FastifyInstance, deps: AdminServiceDeps): Promise<void> {
  requireDependencies('admin', deps, ['db', 'organizations', 'users']);
  await app.register(adminRoutes, { admin: createAdminService(deps) });
  await app.register(adminAuditRoutes, { log: createInstanceAuditLog(deps.db) });
}
