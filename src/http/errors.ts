// The errors of the HTTP layer that routes and modules throw, made from the shared catalog
// (error-codes.ts). Where they become responses: error-handler.ts; the parser's refusals before
// routing: client-errors.ts.
import type { ApiError, ValidationDetail } from './api-error.ts';
import { httpErrors } from './error-codes.ts';

export { ApiError, type ValidationDetail } from './api-error.ts';

export const invalidRequest = (details: ValidationDetail[], message = 'The request is not valid') =>
  httpErrors.invalid_request(message, { details });
/** A 400 for a request that could not be read as a whole: its one detail names no field (spec: every 400 has details). */
export const unreadableRequest = (message: string) => invalidRequest([{ message, path: [] }], message);
export const unauthorized = () => httpErrors.unauthorized();
export const forbidden = (message = 'You are not allowed to do this') => httpErrors.forbidden(message);
/**
 * What authenticate() (http/auth.ts) answers a caller who is not an active member of the active
 * organization, or who lacks a permission there. A module that checks the member again inside its write's
 * transaction (the membership may have changed since the hook ran) answers with these too, so a
 * caller refused late gets what a caller refused early gets.
 */
export const notAnActiveMember = () => forbidden('This session has no active organization you are a member of');
/** 403 `forbidden` naming the key of the permission catalog the caller lacks (`missingPermission`). */
export const missingPermission = (
  permission: string,
  message = `This needs the permission ${permission}, which your role does not grant`,
) => httpErrors.forbidden(message, { missingPermission: permission });

/**
 * The spec's 403 `reauth`: the session's person last authenticated longer ago than a privileged
 * operation allows (REAUTH_MAX_AGE_SECONDS); they authenticate again and retry.
 */
export const reauthRequired = (maxAgeSeconds: number) =>
  httpErrors.reauth(
    `This needs a recent sign-in: authenticate again (POST /v1/auth/reauthenticate with your password, or SSO with reauthenticate: true) within ${maxAgeSeconds} seconds before retrying`,
    { reason: 'authentication_too_old' },
  );

/** 404 `organization_not_found`; the SCIM token and SSO domain endpoints answer it with no other fields. */
export const organizationNotFound = (message?: string) => httpErrors.organization_not_found(message);

/** The standard RateLimit-* headers (IETF draft) for a limiter result; send them on every limited route. */
export function rateLimitHeaders(result: {
  limit: number;
  remaining: number;
  resetSeconds: number;
}): Record<string, string> {
  return {
    'ratelimit-limit': String(result.limit),
    'ratelimit-remaining': String(result.remaining),
    'ratelimit-reset': String(result.resetSeconds),
  };
}

/** 429 `rate_limited` with `message`, Retry-After and the RateLimit-* headers. */
export function rateLimited(
  result: { limit: number; remaining: number; resetSeconds: number },
  message: string,
): ApiError {
  const error = httpErrors.rate_limited(message);
  error.headers = { ...rateLimitHeaders(result), 'retry-after': String(result.resetSeconds) };
  return error;
}
