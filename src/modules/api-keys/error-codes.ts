// The API keys module's error codes.
import { defineErrorCodes } from '../../http/error-catalog.ts';

export const apiKeyErrors = defineErrorCodes({
  api_key_not_found: { status: 404, description: 'No such API key in the organization (or it is revoked already)' },
});
