// What a test does to an app's organizations and members outside the API, the way the operator (the
// CLI) or a directory (SCIM) does it: through the same modules, on the app's database.
import type { Database } from '../../src/db/database.ts';
import { systemContext } from '../../src/platform/write-context.ts';
import { createMembershipCore, type MembershipCoreService } from '../../src/modules/identity/index.ts';
import { memberInvitations } from '../../src/modules/invitations/index.ts';
import {
  createOrganizationService,
  type OrganizationRecord,
  type Plan,
} from '../../src/modules/organizations/index.ts';
import { createUserDirectory } from '../../src/modules/users/index.ts';

/** The membership core on the app's database: member changes as SCIM makes them (setMemberStatus, deleteMember, ensureMember). */
export function membershipOf(app: { db: Database }): MembershipCoreService {
  return createMembershipCore({ db: app.db, invitations: memberInvitations, sessionTtlHours: 1 });
}

/** Users on the app's database, as other modules use them (ensureUser). */
export function usersOf(app: { db: Database }) {
  return createUserDirectory({ db: app.db });
}

/** Sets an organization's plan as the operator does with `orgplane org set-plan`. */
export function setPlanAsOperator(
  app: { db: Database },
  organizationId: string,
  plan: Plan,
): Promise<OrganizationRecord> {
  const organizations = createOrganizationService({ db: app.db, membership: membershipOf(app), erasers: [] });
  return organizations.setPlan(systemContext('cli'), organizationId, plan);
}
