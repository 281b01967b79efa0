// Organizations: what other modules may use of them.
import type { Queryable } from '../../db/database.ts';

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
}
