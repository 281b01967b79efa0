// The instance-administration module's error codes.
import { defineErrorCodes } from '../../http/error-catalog.ts';

export const adminErrors = defineErrorCodes({
  last_admin: {
    status: 409,
    description: 'The person is the last instance administrator: add another before removing them',
  },
  person_not_found: { status: 404, description: 'No account has this e-mail address or id' },
  admin_not_found: { status: 404, description: 'The person is not an instance administrator (or does not exist)' },
});
