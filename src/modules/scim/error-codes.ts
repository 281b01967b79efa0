// The SCIM module's error codes, for its management routes under /v1 (the SCIM 2.0 server under
// /scim/v2 answers in SCIM's own error dialect, errors.ts).
import { defineErrorCodes } from '../../http/error-catalog.ts';

export const scimErrors = defineErrorCodes({
  scim_connection_not_found: { status: 404, description: 'The organization has no SCIM token yet' },
  sso_required: {
    status: 409,
    description: 'SCIM provisioning needs an SSO connection with a verified domain first',
  },
});
