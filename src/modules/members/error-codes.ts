// The members module's error codes (`member_not_found` is identity's: teams answer it too).
import { defineErrorCodes } from '../../http/error-catalog.ts';

export const memberErrors = defineErrorCodes({
  owner_role_fixed: { status: 409, description: "The owner's role changes only by transferring ownership" },
  owner_cannot_be_removed: { status: 409, description: 'The owner is removed only after transferring ownership' },
});
