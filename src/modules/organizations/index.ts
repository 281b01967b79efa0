// Organizations: what other modules may use of them, and how the module joins an app.
import type { FastifyInstance } from 'fastify';
import type { Queryable } from '../../db/database.ts';
import type { Role } from '../../http/caller.ts';
import { organizationRoutes } from './routes.ts';
import { createOrganizationService, type OrganizationService, type OrganizationServiceDeps } from './service.ts';
import { requireDependencies } from '../../platform/dependencies.ts';

export type Plan = 'free' | 'team' | 'enterprise';

export interface OrganizationRecord {
  id: string;
  name: string;
  plan: Plan;
  created_at: Date;
}

export interface OrganizationDirectory {
  getOrganization(organizationId: string): Promise<OrganizationRecord | undefined>;
  /** Takes the organization's row lock until `tx` ends (writes of one organization one after another); false when it does not exist. */
  lockOrganization(tx: Queryable, organizationId: string): Promise<boolean>;
  /** How many organizations the instance has (bootstrap: none yet). */
  countOrganizations(tx: Queryable): Promise<number>;
  /** Stores a new organization (on the free plan) in `tx`; its members are the caller's to add. */
  addOrganization(tx: Queryable, name: string): Promise<OrganizationRecord>;
  /** The organizations the user is an active member of, oldest first, with their role and member id there. */
  listOrganizationsOfUser(userId: string): Promise<(OrganizationRecord & { role: Role; member_id: string })[]>;
}

export {
  createOrganizationDirectory,
  createOrganizationService,
  type OrganizationService,
  type OrganizationServiceDeps,
} from './service.ts';
export { organizationNameSchema, organizationSchema, planSchema, toOrganization } from './schemas.ts';

/** Registers the organization routes (create, active organization, plans); the service is returned for the CLI and tests. */
export async function registerOrganizations(
  app: FastifyInstance,
  deps: OrganizationServiceDeps,
): Promise<OrganizationService> {
  requireDependencies('organizations', deps, ['db', 'membership']);
  const organizations = createOrganizationService(deps);
  await app.register(organizationRoutes, { organizations });
  return organizations;
}
