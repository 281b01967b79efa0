// What an identity provider says of the person, and how far an SSO sign-in trusts the e-mail address in
// it. Providers differ: a certified OpenID Provider returns the scope claims from UserInfo only when an
// access token is issued (OpenID Connect Core 5.4), Microsoft Entra ID never sends `email_verified` and
// may send no `email` at all (only `preferred_username`, or `upn`). So a connection states its trust:
// - verified_claim: the provider's `email_verified` must be true for the `email` it sends;
// - verified_domain: the address (`email`, else `upn`, else `preferred_username`) stands as verified
//   because its domain is the organization's verified domain and the organization chose this provider
//   for it (as for SAML, whose assertions have no such flag).
// Under both, the connection's domain must be verified at the moment of the sign-in, the address must be
// in it, and a provider that says `email_verified: false` is never overruled.
import { emailSchema } from '../identity/index.ts';

export const emailTrustModes = ['verified_claim', 'verified_domain'] as const;
export type EmailTrust = (typeof emailTrustModes)[number];

/** The claims a sign-in reads of the person: the ID token's, with UserInfo's when the ID token lacks them (SAML's assertion gives `email`). */
export interface PersonClaims {
  sub: string;
  email?: unknown;
  email_verified?: unknown;
  upn?: unknown;
  preferred_username?: unknown;
  name?: unknown;
}

/** Why an address is not trusted: a category (the connection's lastError), what the person is told, and the address refused (for the audit event). */
export interface EmailRefusal {
  refused: 'email_missing' | 'email_not_verified' | 'email_outside_domain' | 'domain_not_verified';
  message: string;
  email: string | undefined;
}

const isAddress = (value: unknown): value is string =>
  typeof value === 'string' && emailSchema.safeParse(value).success;

/** Where the address may come from, in order of preference. */
function candidatesOf(trust: EmailTrust, claims: PersonClaims): unknown[] {
  return trust === 'verified_domain' ? [claims.email, claims.upn, claims.preferred_username] : [claims.email];
}

/** Whether these claims are enough to judge the person under `trust`; when not, a sign-in asks UserInfo. */
export function claimsSuffice(trust: EmailTrust, claims: PersonClaims): boolean {
  if (trust === 'verified_claim') return claims.email !== undefined && claims.email_verified !== undefined;
  return candidatesOf(trust, claims).some(isAddress);
}

/**
 * The ID token's claims completed by UserInfo's (whose `sub` the caller has checked). The address and
 * whether it is verified are taken from one answer, never one from each: UserInfo's when it has an
 * `email`, the ID token's otherwise.
 */
export function combineClaims(idToken: PersonClaims, userInfo: PersonClaims): PersonClaims {
  const mail = userInfo.email !== undefined ? userInfo : idToken;
  return {
    sub: idToken.sub,
    email: mail.email,
    email_verified: mail.email_verified,
    upn: idToken.upn ?? userInfo.upn,
    preferred_username: idToken.preferred_username ?? userInfo.preferred_username,
    name: idToken.name ?? userInfo.name,
  };
}

/** The address the sign-in may trust under the connection's rule, or why it may not. */
export function trustedEmail(
  // The connection's columns (store.ts SsoConnectionRow), named here: the store imports EmailTrust from this file.
  connection: { domain: string; domain_verified_at: Date | null; email_trust: EmailTrust },
  claims: PersonClaims,
): { email: string; refused?: undefined } | EmailRefusal {
  const trust = connection.email_trust;
  const email = candidatesOf(trust, claims).find(isAddress);
  if (!email) {
    const where = trust === 'verified_domain' ? 'email, upn or preferred_username' : 'email';
    return {
      refused: 'email_missing',
      message: `The identity provider sent no e-mail address (no ${where} claim holding one).`,
      email: undefined,
    };
  }
  // Some providers send the flag as a string.
  if (claims.email_verified === false || claims.email_verified === 'false') {
    return {
      refused: 'email_not_verified',
      message:
        'The identity provider did not confirm your e-mail address as verified: it says the address is not verified.',
      email,
    };
  }
  if (trust === 'verified_claim' && claims.email_verified !== true) {
    const message =
      claims.email_verified === undefined
        ? 'The identity provider did not confirm your e-mail address as verified (it sent no email_verified claim). ' +
          "An administrator can have this connection trust addresses in the organization's verified domain instead (emailTrust: verified_domain)."
        : 'The identity provider did not confirm your e-mail address as verified (its email_verified claim is not true).';
    return { refused: 'email_not_verified', message, email };
  }
  // The domain vouches for the address only while the organization's proof of it holds (a connection
  // moved to another domain during the sign-in is not verified yet).
  if (!connection.domain_verified_at) {
    return {
      refused: 'domain_not_verified',
      message: `This organization's SSO domain, ${connection.domain}, is not verified (it may have changed during your sign-in). Ask an administrator.`,
      email,
    };
  }
  if (email.slice(email.lastIndexOf('@') + 1).toLowerCase() !== connection.domain) {
    return {
      refused: 'email_outside_domain',
      message: `Your e-mail address is not in ${connection.domain}, the domain this organization signs in with.`,
      email,
    };
  }
  return { email };
}
