// The codes any route may answer with, whatever its module: the request as a whole, who is calling,
// the limits, and the server's own trouble. A module's own codes are in its error-codes.ts.
import { defineErrorCodes } from './error-catalog.ts';

export const httpErrors = defineErrorCodes({
  invalid_request: {
    status: 400,
    description:
      'The request failed validation or could not be read; `details` lists where (an unreadable body has one detail with an empty path)',
  },
  unauthorized: {
    status: 401,
    description: 'Not signed in: no, unknown, expired or revoked session token or API key',
  },
  forbidden: {
    status: 403,
    description:
      'Signed in but not allowed: `message` says what is missing (an active organization, membership, a person rather than an API key); a missing key of the permission catalog is named in `missingPermission`',
  },
  reauth: {
    status: 403,
    description:
      'A privileged operation, and the session authenticated too long ago (`reason: "authentication_too_old"`): authenticate again and retry',
  },
  organization_not_found: {
    status: 404,
    description: 'No such organization, or the caller is not an active member of it (or has no active organization)',
  },
  not_found: { status: 404, description: 'No route for this method and path' },
  request_timeout: { status: 408, description: 'The request took too long to arrive' },
  payload_too_large: { status: 413, description: 'The request body is larger than the route accepts' },
  uri_too_long: { status: 414, description: 'The request line, or a path parameter, is too long' },
  unsupported_media_type: { status: 415, description: 'The body is not sent as application/json' },
  request_header_fields_too_large: { status: 431, description: 'The request line or headers are too large' },
  rate_limited: {
    status: 429,
    description: 'Too many requests; Retry-After and the RateLimit-* headers say when to try again',
  },
  internal_error: {
    status: 500,
    description: 'Something went wrong on the server; `requestId` identifies the request in its logs',
  },
  service_unavailable: {
    status: 503,
    description: 'The database cannot be reached right now; retry after Retry-After',
  },
});
