// The SSO module's error codes: the connection, its domain's verification, and sign-in's JSON routes.
// (Sign-in's HTML pages and the connection's `lastError` name their own categories, sign-in.ts.)
import { defineErrorCodes } from '../../http/error-catalog.ts';

export const ssoErrors = defineErrorCodes({
  sso_connection_not_found: {
    status: 404,
    description: 'The organization has no SSO connection (or no SAML connection has this id)',
  },
  enterprise_plan_required: {
    status: 403,
    description: 'SSO is available on the enterprise plan; the body names the `feature`',
  },
  domain_taken: { status: 409, description: 'Another organization has verified this domain' },
  sso_not_ready: {
    status: 409,
    description: 'SSO cannot be required before a sign-in has succeeded on the connection as configured',
  },
  sso_connection_changed: {
    status: 409,
    description: 'The SSO connection was edited during the verification; try again',
  },
  domain_verification_failed: {
    status: 422,
    description: 'The TXT record is missing or has another value (the body gives the record and what was found)',
  },
  dns_lookup_failed: {
    status: 502,
    description: 'The DNS lookup of the TXT record failed; `retryable` says whether a retry may help',
  },
  sso_not_configured: {
    status: 404,
    description: "No organization has verified the e-mail's domain with an SSO connection; sign in with a password",
  },
  sso_provider_unavailable: {
    status: 502,
    description: "The identity provider's configuration could not be read",
  },
  invalid_grant: {
    status: 400,
    description: 'The sign-in code is unknown, expired or used, or the code verifier does not match',
  },
});
