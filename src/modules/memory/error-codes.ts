// The memory module's error codes.
import { defineErrorCodes } from '../../http/error-catalog.ts';

export const memoryErrors = defineErrorCodes({
  memory_not_found: { status: 404, description: "No such memory in the caller's memory bank" },
  memory_superseded: {
    status: 409,
    description: 'The memory named by `supersedes` is already superseded by another memory',
  },
});
