// The audit module's error codes.
import { defineErrorCodes } from '../../http/error-catalog.ts';

export const auditErrors = defineErrorCodes({
  audit_stream_not_found: { status: 404, description: 'The organization has no audit-log stream' },
});
