// The refusals the SSO connection's routes document: no active organization, the plan, a role the caller may not give.
import { httpErrors } from '../../http/error-codes.ts';
import { errorResponse } from '../../http/schemas.ts';
import { roleErrors } from '../roles/index.ts';
import { ssoErrors } from './error-codes.ts';

export const organizationNotFound = errorResponse(
  [httpErrors.organization_not_found, roleErrors.role_not_found],
  "the session has no active organization; or `jitProvisioning.defaultRole` is not one of the organization's roles",
);
export const enterpriseOrRoleRefused = errorResponse(
  [httpErrors.forbidden, ssoErrors.enterprise_plan_required, roleErrors.permission_not_held],
  undefined,
  {
    description:
      'forbidden: not an owner or admin; enterprise_plan_required: the plan; or permission_not_held: `jitProvisioning.defaultRole` holds keys you lack',
  },
);
export const enterpriseRequired = errorResponse([httpErrors.forbidden, ssoErrors.enterprise_plan_required], undefined, {
  description:
    'forbidden: not an owner or admin; or enterprise_plan_required (with `feature` and `message`): the organization is not on the enterprise plan',
});
