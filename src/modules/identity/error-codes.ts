// Identity's error codes: the members every other module refers to. (`organization_not_found`, which
// authenticate() answers too, is in the shared catalog, http/error-codes.ts.)
import { defineErrorCodes } from '../../http/error-catalog.ts';

export const identityErrors = defineErrorCodes({
  member_not_found: {
    status: 404,
    description: 'No such member in the organization (or in the team, or no longer active)',
  },
});
