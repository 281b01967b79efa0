// The memory module's error codes.
import { defineErrorCodes } from '../../http/error-catalog.ts';

export const memoryErrors = defineErrorCodes({
  memory_not_found: { status: 404, description: "No such memory in the caller's memory bank" },
});
