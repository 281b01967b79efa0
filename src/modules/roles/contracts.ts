// The roles module's contract: what other modules use of it (index.ts exports it) and what its files share.
import type { Queryable } from '../../db/database.ts';
import type { PermissionKey } from '../../platform/permissions.ts';

/** A custom role as stored. */
export interface RoleRow {
  organization_id: string;
  id: string;
  name: string;
  description: string;
  permissions: string[];
  created_at: Date;
  updated_at: Date;
}

/**
 * What a module that gives a role (a member's, an invitation's, an API key's, a team's, SSO's
 * provisioning) asks first, inside the transaction that writes it.
 */
export interface RoleGrants {
  /**
   * Refuses a role the grantor may not give: 404 `role_not_found` for a custom role the organization does
   * not have, 403 `permission_not_held` when the role holds a key `grantor` lacks. A custom role is
   * share-locked until `tx` ends, so it is not deleted or changed under the write that names it.
   */
  requireGrantable(
    tx: Queryable,
    organizationId: string,
    role: string,
    grantor: ReadonlySet<PermissionKey>,
  ): Promise<void>;
}
