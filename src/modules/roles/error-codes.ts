// The roles module's error codes.
import { defineErrorCodes } from '../../http/error-catalog.ts';

export const roleErrors = defineErrorCodes({
  role_not_found: { status: 404, description: 'No such role in the organization' },
  unknown_permission: {
    status: 400,
    description: 'A key that is not in the permission catalog (`GET /v1/permissions`); `details` names it',
  },
  permission_not_held: {
    status: 403,
    description:
      'Giving a key the caller does not hold (a role with it, or a role to a member, an invitation, an API key or a team); `missingPermissions` lists them',
  },
  role_name_taken: {
    status: 409,
    description: 'Another role of the organization has this name (the built-in names included), ignoring case',
  },
  role_protected: { status: 409, description: 'A built-in role (owner, admin, member) cannot be changed or deleted' },
  role_in_use: {
    status: 409,
    description:
      'The role is still given to members, pending invitations, API keys, teams or SSO provisioning; `usedBy` counts each (and `details` names those in use)',
  },
});
