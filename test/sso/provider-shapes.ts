// oidc-provider shaped like the identity providers organizations connect, each sending the person's
// claims where and how that provider documents it. Each shape is the provider's own configuration of
// oidc-provider (which scopes release which claims, whether they travel in the ID token, what a person's
// record holds), so a test signs in through a real OpenID Provider answering as that provider does.
import type { IdpAccount, TestIdpOptions } from '../support/oidc-idp.ts';

export interface ProviderShape {
  idp: Omit<TestIdpOptions, 'redirectUri'>;
  /** The person `localPart@domain` as this provider holds them; `id` (a UUID) makes their subject. */
  account(person: { localPart: string; domain: string; name: string; id: string }): IdpAccount;
}

const without = (claims: Record<string, unknown>, names: string[]) =>
  Object.fromEntries(Object.entries(claims).filter(([name]) => !names.includes(name)));

/**
 * oidc-provider as it ships (a certified OpenID Provider in its default configuration): with an access
 * token issued, the ID token carries no scope claims, and `email`, `email_verified` and `name` are at
 * UserInfo only (OpenID Connect Core 5.4).
 */
export const certifiedDefault = (options: { emailVerified?: boolean } = {}): ProviderShape => ({
  idp: {},
  account: ({ localPart, domain, name, id }) => ({
    sub: id,
    email: `${localPart}@${domain}`,
    email_verified: options.emailVerified ?? true,
    name,
  }),
});

/**
 * Microsoft Entra ID (v2.0 endpoint, a single-tenant application). The ID token carries `name` and
 * `preferred_username` (the profile scope; usually the UPN, mutable), `oid` and `tid`, and a pairwise
 * `sub`; `email` only when the user has a mail attribute and the app asks for it, `upn` only as an optional
 * claim. Entra never sends `email_verified`. Its UserInfo (on Microsoft Graph) adds nothing orgplane reads.
 */
export const entra = (options: { email?: boolean; upn?: boolean } = {}): ProviderShape => ({
  idp: {
    conformIdTokenClaims: false,
    pairwiseSubjects: true,
    claims: { openid: ['sub', 'oid', 'tid', 'upn'], profile: ['name', 'preferred_username'], email: ['email'] },
  },
  account: ({ localPart, domain, name, id }) => ({
    sub: id,
    oid: id,
    tid: '72f988bf-86f1-41af-91ab-2d7cd011db47',
    name,
    preferred_username: `${localPart}@${domain}`,
    ...(options.upn ? { upn: `${localPart}@${domain}` } : {}),
    ...(options.email ? { email: `${localPart}@${domain}` } : {}),
  }),
});

/**
 * Okta (an authorization server with an access token issued): the ID token carries the base claims
 * only; `email`, `email_verified`, `name` and `preferred_username` (the Okta login) come from /userinfo.
 * That is oidc-provider's own default behaviour (conformIdTokenClaims).
 */
export const okta = (options: { emailVerified?: boolean } = {}): ProviderShape => ({
  idp: { conformIdTokenClaims: true },
  account: ({ localPart, domain, name, id }) => ({
    sub: `00u${id.replaceAll('-', '').slice(0, 17)}`,
    name,
    preferred_username: `${localPart}@${domain}`,
    email: `${localPart}@${domain}`,
    email_verified: options.emailVerified ?? true,
    zoneinfo: 'America/Los_Angeles',
    locale: 'en_US',
  }),
});

/**
 * Google (accounts.google.com, a Workspace account): the ID token carries `email`, `email_verified`
 * (a boolean), `hd` (the Workspace domain), `name`, `given_name`, `family_name` and `picture`, whatever
 * the response type. orgplane needs no UserInfo request.
 */
export const google = (): ProviderShape => ({
  idp: {
    conformIdTokenClaims: false,
    claims: {
      openid: ['sub', 'hd'],
      profile: ['name', 'given_name', 'family_name', 'picture', 'locale'],
      email: ['email', 'email_verified'],
    },
  },
  account: ({ localPart, domain, name, id }) => ({
    sub: `1${BigInt(`0x${id.replaceAll('-', '')}`)
      .toString()
      .slice(0, 20)}`,
    hd: domain,
    email: `${localPart}@${domain}`,
    email_verified: true,
    name,
    given_name: name.split(' ')[0],
    family_name: name.split(' ').slice(1).join(' '),
    picture: 'https://lh3.googleusercontent.com/a/photo',
  }),
});

/**
 * Keycloak (a realm's default `profile` and `email` client scopes): the mappers add `email`,
 * `email_verified` (the user's "Email verified" flag), `preferred_username` (the username, lower case),
 * `name`, `given_name` and `family_name` to the ID token and to UserInfo; `sub` is the user's id (a UUID).
 * `emailInIdToken: false` is the email mapper with "Add to ID token" off: the e-mail is at UserInfo only.
 */
export const keycloak = (options: { emailVerified?: boolean; emailInIdToken?: boolean } = {}): ProviderShape => ({
  idp: {
    conformIdTokenClaims: false,
    claims: {
      openid: ['sub'],
      profile: ['name', 'given_name', 'family_name', 'preferred_username'],
      email: ['email', 'email_verified'],
    },
    ...(options.emailInIdToken === false
      ? {
          claimsFor: (account, use) =>
            use === 'id_token' ? without({ ...account }, ['email', 'email_verified']) : { ...account },
        }
      : {}),
  },
  account: ({ localPart, domain, name, id }) => ({
    sub: id,
    preferred_username: localPart.toLowerCase(),
    email: `${localPart}@${domain}`,
    email_verified: options.emailVerified ?? true,
    name,
    given_name: name.split(' ')[0],
    family_name: name.split(' ').slice(1).join(' '),
  }),
});
