// Roles: the permission catalog's routes, custom roles, and whether a role may be given (RoleGrants,
// which the modules that give roles ask: members, invitations, API keys, teams, SSO provisioning).
import type { FastifyInstance } from 'fastify';
import { requireDependencies } from '../../platform/dependencies.ts';
import { roleRoutes } from './routes.ts';
import { createRoleService, type RoleServiceDeps } from './service.ts';

export type { RoleGrants } from './contracts.ts';
export { roleErrors } from './error-codes.ts';
export { createRoleGrants } from './service.ts';

export async function registerRoles(app: FastifyInstance, deps: RoleServiceDeps): Promise<void> {
  requireDependencies('roles', deps, ['db', 'membership']);
  await app.register(roleRoutes, { roles: createRoleService(deps) });
}
