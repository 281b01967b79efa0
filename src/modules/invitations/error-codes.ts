// The invitations module's error codes.
import { defineErrorCodes } from '../../http/error-catalog.ts';

export const invitationErrors = defineErrorCodes({
  already_member: {
    status: 409,
    description: 'The address (or the accepting account) is a member of the organization already',
  },
  invitation_not_found: {
    status: 404,
    description: 'No such pending invitation: unknown, used, expired, ended or revoked',
  },
});
