// Organizations: what other modules may use of them, and how the module joins an app.
import type { FastifyInstance } from 'fastify';
import { organizationRoutes } from './routes.ts';
import { createOrganizationService, type OrganizationService, type OrganizationServiceDeps } from './service.ts';
import { requireDependencies } from '../../platform/dependencies.ts';

export type { OrganizationDirectory, OrganizationEraser, OrganizationRecord, Plan } from './contracts.ts';
export {
  createOrganizationDirectory,
  createOrganizationService,
  type OrganizationService,
  type OrganizationServiceDeps,
} from './service.ts';
export { organizationNameSchema, organizationSchema, toOrganization } from './schemas.ts';

/** Registers the organization routes (create, active organization, plans); the service is returned for the CLI and tests. */
export async function registerOrganizations(
  app: FastifyInstance,
  deps: OrganizationServiceDeps,
): Promise<OrganizationService> {
  requireDependencies('organizations', deps, ['db', 'membership', 'erasers']);
  const organizations = createOrganizationService(deps);
  await app.register(organizationRoutes, { organizations });
  return organizations;
}
