// What other modules use of organizations (index.ts exports it) and what the module's own files share: in
// its own file, so that index.ts and the service both import it and neither imports the other.
import type { Queryable } from '../../db/database.ts';
import type { Role } from '../../http/caller.ts';

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
  /** Stores a new organization (on the instance's DEFAULT_PLAN) in `tx`; its members are the caller's to add. */
  addOrganization(tx: Queryable, name: string): Promise<OrganizationRecord>;
  /** Sets an organization's plan in `tx` (instance administration: the caller judged who may); undefined when it does not exist. */
  setPlan(tx: Queryable, organizationId: string, plan: Plan): Promise<OrganizationRecord | undefined>;
  /** The organizations the user is an active member of, oldest first, with their role and member id there. */
  listOrganizationsOfUser(userId: string): Promise<(OrganizationRecord & { role: Role; member_id: string })[]>;
}

/**
 * One module's part of erasing an organization: deletes, in `tx`, every row of its tables that belongs to the
 * organization and that no foreign key to `organizations` deletes with it. Each module owns its tables, so it
 * hands in its own eraser (its index.ts exports it); the organizations service calls them all in one
 * transaction, before deleting the organization's row (whose ON DELETE CASCADE keys take the rest).
 */
export interface OrganizationEraser {
  /** The module, for a reader of the composition and of an error. */
  module: string;
  erase(tx: Queryable, organizationId: string): Promise<void>;
}
