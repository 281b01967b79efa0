import { assignableRoleSchema } from '../identity/index.ts';
import { enterpriseOrRoleRefused, enterpriseRequired, organizationNotFound } from './responses.ts';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { authenticate, callerOf, writeContextOf } from '../../http/auth.ts';
import {
  commonErrorResponses,
  isoTimestamp,
  isoTimestampOrNull,
  timestampSchema,
  errorResponse,
} from '../../http/schemas.ts';
import { oidcCallbackPath } from './sign-in.ts';
import { maxMetadataBytes } from './saml-config.ts';
import type { SamlServiceProvider } from './saml.ts';
import { MAX_DOMAIN_LENGTH, recordNameFor, recordValueFor, type SsoService } from './service.ts';
import { emailTrustModes } from './email-trust.ts';
import type { SsoConnectionRow } from './store.ts';
import { httpErrors } from '../../http/error-codes.ts';
import { ssoErrors } from './error-codes.ts';

const emailTrustSchema = z.enum(emailTrustModes);

const ssoConnectionSchema = z
  .object({
    id: z.string(),
    domain: z.string().describe('Normalized: lower case, no trailing dot, internationalized names as punycode'),
    domainVerified: z.boolean(),
    domainVerifiedAt: timestampSchema.nullable(),
    issuer: z.string().describe("OIDC: the issuer; SAML: the identity provider's entity id"),
    clientId: z.string().nullable().describe("OIDC: orgplane's client id at the identity provider; null for SAML"),
    clientSecretSet: z.boolean().describe('Whether a client secret is stored; the secret itself is never returned'),
    verification: z.object({
      recordName: z.string().describe('Publish a TXT record at this name…'),
      recordValue: z.string().describe('…with exactly this value'),
    }),
    protocol: z.enum(['oidc', 'saml']),
    redirectUri: z
      .string()
      .nullable()
      .describe("OIDC: register this as the redirect URI of orgplane's client at the identity provider; null for SAML"),
    spEntityId: z
      .string()
      .nullable()
      .describe(
        "SAML: orgplane's entity id for this connection (the audience its assertions must name); null for OIDC",
      ),
    acsUrl: z
      .string()
      .nullable()
      .describe(
        'SAML: the assertion consumer service URL (HTTP-POST), the Recipient and Destination its responses must name; null for OIDC',
      ),
    spMetadataUrl: z
      .string()
      .nullable()
      .describe('SAML: the service provider metadata to give the identity provider (public); null for OIDC'),
    idpSsoUrl: z
      .string()
      .nullable()
      .describe("SAML: the identity provider's single sign-on URL (HTTP-Redirect binding); null for OIDC"),
    idpMetadataUrl: z
      .string()
      .nullable()
      .describe(
        "SAML: where the identity provider's metadata was fetched from, when it was given as a URL (fetched at each PUT, not later); null otherwise",
      ),
    jitProvisioning: z.object({
      enabled: z
        .boolean()
        .describe('Whether a person of the domain who is not a member yet becomes one at their first SSO sign-in'),
      defaultRole: assignableRoleSchema,
      defaultTeamIds: z.array(z.string()),
    }),
    emailTrust: emailTrustSchema
      .nullable()
      .describe(
        'OIDC: how the e-mail address the identity provider asserts is trusted (see the body of PUT); null for SAML, whose e-mail must be in the verified domain',
      ),
    ssoRequired: z.boolean(),
    ssoReady: z
      .boolean()
      .describe(
        'Whether an SSO sign-in has succeeded on this connection as it is configured now (needed before `ssoRequired` can be turned on)',
      ),
    lastSignInAt: timestampSchema
      .nullable()
      .describe(
        'The last successful SSO sign-in on this connection as configured (the IdP returned a person orgplane let in); null again after the domain, issuer, client or emailTrust changes',
      ),
    lastError: z
      .object({
        category: z.string(),
        message: z.string(),
        occurredAt: timestampSchema,
        at: timestampSchema.describe('The same as `occurredAt` (its first name, kept for clients that read it)'),
      })
      .nullable()
      .describe(
        'The last refused or failed sign-in, kept when later ones succeed (compare `occurredAt` with `lastSignInAt`): a category and a message, never a token, code or state. ' +
          "Categories: discovery_failed (the issuer's configuration could not be read), provider_unavailable (the IdP could not be reached to exchange the code), " +
          'token_rejected (the IdP refused the code, or the ID token or UserInfo answer failed a check: signature, iss, aud, exp/iat, nonce), ' +
          'userinfo_subject_mismatch (the UserInfo answer was about another sub than the ID token), idp_error (the IdP answered with an error), ' +
          "email_missing, email_not_verified, email_outside_domain, domain_not_verified (the connection's domain was not verified at the sign-in), " +
          'not_a_member, account_not_linkable (an account with the e-mail exists that the organization has no tie to: a member, SCIM, an earlier SSO link or an address orgplane verified), member_suspended, member_removed, subject_conflict; ' +
          'SAML: assertion_rejected, assertion_replayed, reauthentication_required; new ones may be added',
      ),
    certificateExpiresAt: timestampSchema
      .nullable()
      .describe(
        "SAML: when the first of the IdP's signing certificates expires (replace it before then); null for OIDC",
      ),
    createdAt: timestampSchema,
    updatedAt: timestampSchema,
  })
  .meta({ id: 'SsoConnection' });

function toConnection(
  row: SsoConnectionRow,
  publicUrl: string,
  saml: Pick<SamlServiceProvider, 'spEntityId' | 'acsUrl' | 'metadataUrl'>,
) {
  const isSaml = row.protocol === 'saml';
  return {
    id: row.id,
    domain: row.domain,
    domainVerified: row.domain_verified_at !== null,
    domainVerifiedAt: isoTimestampOrNull(row.domain_verified_at),
    issuer: row.issuer,
    clientId: row.client_id,
    clientSecretSet: row.client_secret_sealed !== null,
    verification: { recordName: recordNameFor(row.domain), recordValue: recordValueFor(row.verification_token) },
    protocol: row.protocol,
    redirectUri: isSaml ? null : `${publicUrl}${oidcCallbackPath}`,
    spEntityId: isSaml ? saml.spEntityId(row.id) : null,
    acsUrl: isSaml ? saml.acsUrl : null,
    spMetadataUrl: isSaml ? saml.metadataUrl(row.id) : null,
    idpSsoUrl: isSaml ? row.saml_idp_sso_url : null,
    idpMetadataUrl: isSaml ? row.saml_idp_metadata_url : null,
    jitProvisioning: {
      enabled: row.jit_enabled,
      defaultRole: row.jit_default_role,
      defaultTeamIds: row.jit_default_team_ids,
    },
    emailTrust: isSaml ? null : row.email_trust,
    ssoRequired: row.sso_required,
    ssoReady: row.last_sign_in_at !== null,
    lastSignInAt: isoTimestampOrNull(row.last_sign_in_at),
    lastError:
      row.last_error_at && row.last_error_category
        ? {
            category: row.last_error_category,
            message: row.last_error_message ?? '',
            occurredAt: isoTimestamp(row.last_error_at),
            at: isoTimestamp(row.last_error_at),
          }
        : null,
    certificateExpiresAt: isoTimestampOrNull(row.certificate_expires_at),
    createdAt: isoTimestamp(row.created_at),
    updatedAt: isoTimestamp(row.updated_at),
  };
}

const ownerOrAdmin = authenticate({ requires: 'sso.manage', withoutOrganization: 'organization_not_found' });
/** The organization's SSO connection and the verification of its domain through DNS. */
export const ssoRoutes: FastifyPluginAsyncZod<{
  sso: SsoService;
  publicUrl: string;
  saml: Pick<SamlServiceProvider, 'spEntityId' | 'acsUrl' | 'metadataUrl'>;
}> = async (app, { sso, publicUrl, saml }) => {
  const view = (row: SsoConnectionRow) => toConnection(row, publicUrl, saml);
  app.put(
    '/v1/sso/connection',
    {
      onRequest: authenticate({
        requires: 'sso.manage',
        withoutOrganization: 'organization_not_found',
        freshAuthentication: true,
      }),
      schema: {
        tags: ['SSO'],
        operationId: 'putSsoConnection',
        summary: 'Create or replace the SSO connection of the active organization',
        description:
          'Owners and admins of an enterprise organization. The response says which TXT record to publish to verify the domain. ' +
          'OIDC (`protocol: "oidc"`, the default): `issuer`, `clientId`, `clientSecret`; `clientSecret` is write-only: it is stored encrypted and kept when omitted. ' +
          'SAML (`protocol: "saml"`): the identity provider as exactly one of `idpMetadataXml`, `idpMetadataUrl` (fetched now, through the guarded outbound client: ' +
          'https, no private addresses unless ALLOWED_PRIVATE_NETWORKS), or `idpEntityId` + `idpSsoUrl` + `idpCertificates` (one PEM certificate, or two while the IdP ' +
          'rotates its key: assertions signed by either are accepted); the response then has `spEntityId`, `acsUrl` and `spMetadataUrl` to give the IdP, and ' +
          '`certificateExpiresAt`. An unreadable or expired certificate, a URL that is not https, metadata without an HTTP-Redirect SingleSignOnService or a signing ' +
          'certificate, are 400 `invalid_request` whose `details` name the field. Changing the domain resets verification ' +
          'and issues a new verification value; changing the protocol, issuer, client, IdP sign-on URL or `emailTrust` makes `ssoReady` false until a sign-in succeeds again ' +
          '(a new certificate does not). 409 `domain_taken` when another organization has verified the domain.',
        body: z
          .object({
            domain: z
              .string()
              .trim()
              .min(1)
              .max(1000)
              .describe(
                `A bare domain name such as example.com (no scheme, path, query, user, port or IP address; internationalized names are converted to punycode), ` +
                  `not itself a public suffix such as co.uk or github.io; at most ${MAX_DOMAIN_LENGTH} characters once normalized, so that its verification record name fits in DNS`,
              ),
            protocol: z.enum(['oidc', 'saml']).default('oidc').describe('oidc (the default) or saml'),
            issuer: z
              .url()
              .max(2048)
              .optional()
              .describe('OIDC (required): the issuer whose discovery document is read'),
            clientId: z.string().min(1).max(512).optional().describe('OIDC (required)'),
            clientSecret: z.string().min(1).max(4096).optional().describe('OIDC: write-only, kept when omitted'),
            emailTrust: emailTrustSchema
              .optional()
              .describe(
                'OIDC: how the e-mail address the identity provider asserts is trusted. `verified_claim` (the default): its `email` is used only when ' +
                  'its `email_verified` is true (read from the ID token, else from UserInfo). `verified_domain`: the address, taken from `email`, else `upn`, else ' +
                  "`preferred_username`, is trusted because it is in the organization's verified domain; for providers that never send `email_verified`, such " +
                  "as Microsoft Entra ID, and only for an issuer that is the organization's own directory. Under both, the domain must be verified at the " +
                  'sign-in, the address must be in it, and `email_verified: false` is always refused. Changing it makes `ssoReady` false until a sign-in ' +
                  'succeeds again (so not while `ssoRequired` is on). Per provider: docs/api/sso-providers.md. Omitted: kept as stored',
              ),
            idpMetadataXml: z
              .string()
              .min(1)
              .max(maxMetadataBytes)
              .optional()
              .describe(
                "SAML: the identity provider's metadata document (an EntityDescriptor with an IDPSSODescriptor)",
              ),
            idpMetadataUrl: z
              .string()
              .min(1)
              .max(2048)
              .optional()
              .describe("SAML: where to fetch the identity provider's metadata (https)"),
            idpEntityId: z
              .string()
              .min(1)
              .max(1024)
              .optional()
              .describe(
                "SAML, with idpSsoUrl and idpCertificates: the identity provider's entity id (the Issuer of its assertions)",
              ),
            idpSsoUrl: z
              .string()
              .min(1)
              .max(2048)
              .optional()
              .describe("SAML: the identity provider's single sign-on URL for the HTTP-Redirect binding (https)"),
            idpCertificates: z
              .array(z.string().min(1).max(16_384))
              .min(1)
              .max(2)
              .optional()
              .describe("SAML: the identity provider's signing certificate in PEM, or two while it rotates its key"),
            jitProvisioning: z
              .object({
                enabled: z.boolean(),
                defaultRole: assignableRoleSchema
                  .default('member')
                  .describe("`member` unless chosen: `admin` or a custom role's id, whose keys the caller holds"),
                defaultTeamIds: z
                  .array(z.string().max(100))
                  .max(50)
                  .default([])
                  .describe('Teams of this organization a provisioned member joins'),
              })
              .strict()
              .optional()
              .describe('Just-in-time provisioning (off unless enabled); omitted: kept as stored'),
            ssoRequired: z
              .boolean()
              .optional()
              .describe(
                "Whether the organization's members whose e-mail is in its verified domain must sign in with SSO. Turning it on needs `ssoReady` " +
                  '(else 409 sso_not_ready), so that a connection that does not work cannot lock the organization out. While it is on, their password ' +
                  "sign-in and password re-authentication are 403 `sso_required`, except the owner's (break-glass: allowed, and flagged " +
                  '`breakGlass: true` in the `user.signed_in` audit event). Turning it on also ends, at once, the password sessions those members have ' +
                  "(the owner's are kept; an admin turning it on ends their own); their SSO sessions stay. While it is on, the domain, issuer and client " +
                  'cannot change (409 sso_not_ready): turn it off first. Omitted: kept as stored',
              ),
          })
          .strict(),
        response: {
          200: z.object({ connection: ssoConnectionSchema }),
          ...commonErrorResponses,
          403: enterpriseOrRoleRefused,
          404: organizationNotFound,
          409: errorResponse([ssoErrors.domain_taken, ssoErrors.sso_not_ready], undefined, {
            description:
              'domain_taken: another organization has verified this domain; sso_not_ready: SSO cannot be required before a sign-in has succeeded on the connection as configured',
          }),
        },
      },
    },
    async (request) => ({ connection: view(await sso.putConnection(writeContextOf(request), request.body)) }),
  );

  app.get(
    '/v1/sso/connection',
    {
      onRequest: ownerOrAdmin,
      schema: {
        tags: ['SSO'],
        operationId: 'getSsoConnection',
        summary: 'The SSO connection of the active organization',
        response: {
          200: z.object({ connection: ssoConnectionSchema }),
          401: commonErrorResponses[401],
          403: commonErrorResponses[403],
          404: errorResponse([httpErrors.organization_not_found, ssoErrors.sso_connection_not_found], undefined, {
            description: 'organization_not_found, or sso_connection_not_found: no SSO connection yet',
          }),
        },
      },
    },
    async (request) => ({ connection: view(await sso.getConnection(callerOf(request))) }),
  );

  app.post(
    '/v1/sso/verify-domain',
    {
      // Verifying is what turns the connection on for the domain (sign-in through the IdP, just-in-time provisioning).
      onRequest: authenticate({
        requires: 'sso.manage',
        withoutOrganization: 'organization_not_found',
        freshAuthentication: true,
      }),
      schema: {
        tags: ['SSO'],
        operationId: 'verifySsoDomain',
        summary: 'Verify the organization SSO domain',
        description:
          'No request body. Looks up the TXT record named in the connection (`verification.recordName`) through the resolvers of ' +
          '`DNS_SERVERS` (the system resolvers by default) and, when one of its values equals `verification.recordValue` exactly ' +
          '(a record split into several strings is joined first), marks the domain verified. Verifying again is harmless. ' +
          'Failures: 422 `domain_verification_failed` when the record is missing or different (the body names `recordName`, ' +
          '`expectedValue` and `foundValues`; `retryable: false` until the record is changed); 502 `dns_lookup_failed` with ' +
          '`retryable: true` and `Retry-After` when DNS itself failed (timeout, SERVFAIL, unreachable), or with `retryable: false` ' +
          'and no `Retry-After` when the DNS server answered that it cannot do this lookup (NOTIMP, FORMERR): retrying will not help.',
        response: {
          200: z
            .object({
              verified: z.literal(true),
              domain: z.string(),
              domainVerifiedAt: timestampSchema,
              connection: ssoConnectionSchema,
            })
            .describe('The TXT record was found: the domain is verified (each call looks the record up again)'),
          400: commonErrorResponses[400],
          401: commonErrorResponses[401],
          403: enterpriseRequired,
          404: errorResponse([httpErrors.organization_not_found, ssoErrors.sso_connection_not_found], undefined, {
            description:
              'organization_not_found: no active organization; sso_connection_not_found: create the connection first',
          }),
          409: errorResponse([ssoErrors.domain_taken, ssoErrors.sso_connection_changed], undefined, {
            description:
              'domain_taken: another organization has verified this domain; sso_connection_changed: the connection was edited meanwhile, try again',
          }),
          422: errorResponse([ssoErrors.domain_verification_failed], 'the TXT record is missing or has another value', {
            extend: {
              retryable: z.literal(false),
              recordName: z.string(),
              expectedValue: z.string(),
              foundValues: z.array(z.string()),
            },
          }),
          502: errorResponse(
            [ssoErrors.dns_lookup_failed],
            'the DNS lookup failed; `retryable` says whether a retry may help',
            { extend: { retryable: z.boolean(), recordName: z.string() } },
          ),
        },
      },
    },
    async (request) => {
      const connection = await sso.verifyDomain(writeContextOf(request));
      return {
        verified: true as const,
        domain: connection.domain,
        domainVerifiedAt: isoTimestamp(connection.domain_verified_at!),
        connection: view(connection),
      };
    },
  );
};
