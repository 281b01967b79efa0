// The organizations module's error codes.
import { defineErrorCodes } from '../../http/error-catalog.ts';

export const organizationErrors = defineErrorCodes({
  confirmation_mismatch: {
    status: 400,
    description: "The confirmation does not match the organization's name: nothing was deleted",
  },
});
