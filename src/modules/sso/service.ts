import { randomBytes } from 'node:crypto';
import type { RoleGrants } from '../roles/index.ts';
import type { Database } from '../../db/database.ts';
import { isUniqueViolation } from '../../db/errors.ts';
import { lockUntilCommit } from '../../db/locks.ts';
import { type ApiError, invalidRequest, organizationNotFound } from '../../http/errors.ts';
import { newId } from '../../platform/ids.ts';
import type { OutboundClient } from '../../platform/outbound.ts';
import type { SecretBox } from '../../platform/secrets.ts';
import { redacted, writeTransaction, type CallerContext } from '../../platform/write-context.ts';
import type { Caller, MembershipSessions } from '../identity/index.ts';
import type { OrganizationDirectory } from '../organizations/index.ts';
import type { TeamDirectory } from '../teams/index.ts';
import { identityProviderOf, type SamlIdpInput } from './saml-config.ts';
import { describeDnsFailure, isPublicSuffix, MAX_DNS_NAME_LENGTH, normalizeDomain, type TxtResolver } from './dns.ts';
import type { EmailTrust } from './email-trust.ts';
import { createSsoStore, type SsoConnectionRow } from './store.ts';
import { ssoErrors } from './error-codes.ts';

export interface SsoServiceDeps {
  db: Database;
  organizations: Pick<OrganizationDirectory, 'getOrganization'>;
  secrets: SecretBox;
  resolver: TxtResolver;
  teams: Pick<TeamDirectory, 'listTeamIds'>;
  /** SAML metadata URLs are fetched through the guarded client. */
  outbound: Pick<OutboundClient, 'fetch'>;
  /** Requiring SSO ends the password sessions it covers. */
  membership: Pick<MembershipSessions, 'revokePasswordSessionsInDomain'>;
  /** Whether the caller may give the role SSO's provisioning gives. */
  roleGrants: RoleGrants;
}

/** Where the TXT record lives and what it must say. */
export const recordNameFor = (domain: string) => `_orgplane-verification.${domain}`;
export const recordValueFor = (token: string) => `orgplane-domain-verification=${token}`;
/** The longest domain whose record name still fits in DNS (230 characters). */
export const MAX_DOMAIN_LENGTH = MAX_DNS_NAME_LENGTH - recordNameFor('').length;

/** Seconds a client should wait before retrying a verification that failed on DNS itself. */
export const dnsRetryAfterSeconds = 30;

export interface SsoConnectionInput extends SamlIdpInput {
  domain: string;
  protocol: 'oidc' | 'saml';
  /** OIDC only. */
  issuer?: string | undefined;
  clientId?: string | undefined;
  clientSecret?: string | undefined;
  jitProvisioning?: { enabled: boolean; defaultRole: string; defaultTeamIds: string[] } | undefined;
  ssoRequired?: boolean | undefined;
  /** OIDC only. */
  emailTrust?: EmailTrust | undefined;
}

function enterprisePlanRequired(): ApiError {
  return ssoErrors.enterprise_plan_required('SSO is available on the enterprise plan', { feature: 'sso' });
}

function ssoNotReady(): ApiError {
  return ssoErrors.sso_not_ready(
    'SSO can be required only once someone has signed in through this connection (with its current domain, issuer, client and e-mail trust); sign in with SSO first',
  );
}

function domainTaken(domain: string): ApiError {
  return ssoErrors.domain_taken(`The domain ${domain} is already verified by another organization`);
}

// What a TXT value may contribute to an error message: bounded, printable.
function shown(values: string[]): string[] {
  return values.slice(0, 10).map((value) => (value.length > 255 ? `${value.slice(0, 255)}…` : value));
}

export function createSsoService(deps: SsoServiceDeps) {
  const { db } = deps;
  const store = createSsoStore();

  async function requireEnterprise(organizationId: string) {
    const organization = await deps.organizations.getOrganization(organizationId);
    if (!organization) throw organizationNotFound();
    if (organization.plan !== 'enterprise') throw enterprisePlanRequired();
    return organization;
  }

  function requireOrganization(caller: Caller): string {
    // authenticate({ requires }) guarantees this; the check keeps the types honest.
    if (!caller.organizationId) throw organizationNotFound();
    return caller.organizationId;
  }

  return {
    /** Creates or replaces the organization's SSO connection. A new domain starts unverified with a new token. */
    async putConnection(ctx: CallerContext, input: SsoConnectionInput): Promise<SsoConnectionRow> {
      const organizationId = requireOrganization(ctx.actor);
      await requireEnterprise(organizationId);
      const domain = normalizeDomain(input.domain);
      if (!domain) {
        const message =
          'Must be a bare domain name such as example.com: no scheme, path, query, user, port or IP address';
        throw invalidRequest([{ message, path: ['domain'] }], 'The domain is not valid');
      }
      if (isPublicSuffix(domain)) {
        const message = `${domain} is a public suffix, under which unrelated parties register names; use your organization's own domain under it, such as example.${domain}`;
        throw invalidRequest([{ message, path: ['domain'] }], 'The domain is a public suffix');
      }
      if (domain.length > MAX_DOMAIN_LENGTH) {
        const message = `Must be at most ${MAX_DOMAIN_LENGTH} characters: its verification record, ${recordNameFor('<domain>')}, must fit in DNS's ${MAX_DNS_NAME_LENGTH}`;
        throw invalidRequest([{ message, path: ['domain'] }], 'The domain is too long');
      }
      if (await store.verifiedElsewhere(db, domain, organizationId)) throw domainTaken(domain);
      const teamIds = [...new Set(input.jitProvisioning?.defaultTeamIds ?? [])];
      const knownTeams = await deps.teams.listTeamIds(organizationId, teamIds);
      const unknownTeams = teamIds.filter((id) => !knownTeams.includes(id));
      if (unknownTeams.length > 0) {
        throw invalidRequest(
          [
            {
              message: `Not teams of this organization: ${unknownTeams.join(', ')}`,
              path: ['jitProvisioning', 'defaultTeamIds'],
            },
          ],
          'Unknown default teams',
        );
      }
      const provider = await identityProviderOf(input, deps.outbound);
      const sealed = input.clientSecret !== undefined ? deps.secrets.seal(input.clientSecret) : undefined;
      return writeTransaction(db, ctx, async (tx) => {
        // The organization's PUTs one after another, the first ones included: the row lock below
        // (which holds a concurrent verification off) has nothing to lock while no connection exists.
        await lockUntilCommit(tx, `sso-connection:${organizationId}`);
        const existing = await store.findByOrganization(tx, organizationId, true);
        if (input.jitProvisioning?.defaultRole !== undefined)
          await deps.roleGrants.requireGrantable(
            tx,
            organizationId,
            input.jitProvisioning.defaultRole,
            ctx.actor.permissions,
          );
        // Omitted settings keep their stored values (defaults for a new connection).
        const settings = {
          jitEnabled: input.jitProvisioning?.enabled ?? existing?.jit_enabled ?? false,
          jitDefaultRole: input.jitProvisioning?.defaultRole ?? existing?.jit_default_role ?? 'member',
          jitDefaultTeamIds: input.jitProvisioning ? teamIds : (existing?.jit_default_team_ids ?? []),
          ssoRequired: input.ssoRequired ?? existing?.sso_required ?? false,
          emailTrust: input.emailTrust ?? existing?.email_trust ?? 'verified_claim',
        } as const;
        const connectionId = existing?.id ?? newId('sso');
        const audit = (extra: Record<string, unknown> = {}) =>
          tx.audit({
            action: existing ? 'sso_connection.updated' : 'sso_connection.created',
            organizationId,
            target: { type: 'sso_connection', id: connectionId, name: domain },
            changes: {
              domain,
              protocol: provider.protocol,
              issuer: provider.issuer,
              clientId: provider.clientId,
              ...(input.clientSecret !== undefined ? { clientSecret: redacted } : {}),
              ...(provider.protocol === 'saml'
                ? {
                    idpSsoUrl: provider.samlIdpSsoUrl,
                    idpMetadataUrl: provider.samlIdpMetadataUrl,
                    certificateExpiresAt: provider.certificateExpiresAt?.toISOString(),
                  }
                : {}),
              ...settings,
              ...extra,
            },
          });
        if (!existing) {
          audit();
          if (settings.ssoRequired) throw ssoNotReady();
          return store.insert(tx, {
            id: connectionId,
            organizationId,
            domain,
            ...provider,
            clientSecretSealed: sealed ?? null,
            verificationToken: randomBytes(16).toString('hex'),
            ...settings,
          });
        }
        const domainChanged = existing.domain !== domain;
        // A new certificate (a rotation) is the same identity provider; another protocol, entity id or sign-on URL is not.
        const identityChanged =
          domainChanged ||
          existing.protocol !== provider.protocol ||
          existing.issuer !== provider.issuer ||
          existing.client_id !== provider.clientId ||
          existing.saml_idp_sso_url !== provider.samlIdpSsoUrl;
        // Another way of trusting e-mails may refuse the people the connection let in so far: like another
        // identity provider, it is not known to work until a sign-in succeeds with it.
        const untested =
          identityChanged || (provider.protocol === 'oidc' && existing.email_trust !== settings.emailTrust);
        // Requiring SSO is allowed only once a sign-in has succeeded on this very connection, so that
        // nobody locks the organization out with a connection that does not work.
        if (settings.ssoRequired && !existing.sso_required && (untested || !existing.last_sign_in_at))
          throw ssoNotReady();
        if (settings.ssoRequired && untested) throw ssoNotReady();
        // Turned on: from now on the members of the domain sign in with SSO only (the users module asks
        // createPasswordSignInPolicy), and the password sessions they have now end here, in the same
        // transaction, so requiring SSO takes effect at once. The owner's are kept (break-glass).
        const turnedOn = settings.ssoRequired && !existing.sso_required;
        const revoked = turnedOn
          ? await deps.membership.revokePasswordSessionsInDomain(tx, organizationId, existing.domain)
          : 0;
        audit(turnedOn ? { passwordSessionsRevoked: revoked } : {});
        return store.update(tx, organizationId, {
          domain,
          ...provider,
          // A SAML connection has no client secret; an OIDC one keeps its own when none is given.
          clientSecretSealed:
            provider.protocol === 'saml'
              ? null
              : (sealed ?? (existing.protocol === 'oidc' ? existing.client_secret_sealed : null)),
          // Proof of control is for one domain: a new domain is unverified and gets a new token.
          verificationToken: domainChanged ? randomBytes(16).toString('hex') : existing.verification_token,
          domainVerifiedAt: domainChanged ? null : existing.domain_verified_at,
          resetSignIns: untested,
          ...settings,
        });
      });
    },

    async getConnection(caller: Caller): Promise<SsoConnectionRow> {
      const connection = await store.findByOrganization(db, requireOrganization(caller));
      if (!connection)
        throw ssoErrors.sso_connection_not_found(
          'This organization has no SSO connection; create it with PUT /v1/sso/connection',
        );
      return connection;
    },

    /**
     * Looks up the TXT record and, when one of its values equals the expected value exactly, marks the
     * domain verified. Missing and wrong records say what was expected and what was found; DNS failures
     * say they may be retried.
     */
    async verifyDomain(ctx: CallerContext): Promise<SsoConnectionRow> {
      const organizationId = requireOrganization(ctx.actor);
      await requireEnterprise(organizationId);
      const connection = await store.findByOrganization(db, organizationId);
      if (!connection)
        throw ssoErrors.sso_connection_not_found(
          'This organization has no SSO connection; create it with PUT /v1/sso/connection',
        );
      const recordName = recordNameFor(connection.domain);
      const expected = recordValueFor(connection.verification_token);
      const result = await deps.resolver.resolveTxt(recordName);
      if (result.status === 'failed') {
        const error = ssoErrors.dns_lookup_failed(
          `Could not look up the TXT record at ${recordName}: ${describeDnsFailure(result.code)}.${result.retryable ? ' This may be temporary; try again.' : ''}`,
          { retryable: result.retryable, recordName },
        );
        if (result.retryable) error.headers = { 'retry-after': String(dnsRetryAfterSeconds) };
        throw error;
      }
      const found = result.status === 'found' ? result.records : [];
      if (!found.includes(expected)) {
        const what =
          found.length === 0 ? 'no TXT record was found there' : `found ${JSON.stringify(shown(found))} instead`;
        throw ssoErrors.domain_verification_failed(
          `Expected a TXT record at ${recordName} with the value "${expected}", but ${what}. Publish the record and try again (DNS changes can take a while to appear).`,
          { retryable: false, recordName, expectedValue: expected, foundValues: shown(found) },
        );
      }
      if (await store.verifiedElsewhere(db, connection.domain, organizationId)) throw domainTaken(connection.domain);
      try {
        const verified = await writeTransaction(db, ctx, async (tx) => {
          const marked = await store.markVerified(tx, organizationId, connection.domain, connection.verification_token);
          if (marked)
            tx.audit({
              action: 'sso_connection.domain_verified',
              organizationId,
              target: { type: 'sso_connection', id: connection.id, name: connection.domain },
              changes: { domain: connection.domain },
            });
          return marked;
        });
        if (!verified) {
          throw ssoErrors.sso_connection_changed('The SSO connection changed during verification; try again');
        }
        return verified;
      } catch (error) {
        if (isUniqueViolation(error)) throw domainTaken(connection.domain);
        throw error;
      }
    },

    /** Whether the organization has an SSO connection with a verified domain (SCIM needs one). */
    async verifiedConnection(organizationId: string): Promise<SsoConnectionRow | undefined> {
      const connection = await store.findByOrganization(db, organizationId);
      return connection?.domain_verified_at ? connection : undefined;
    },
  };
}

export type SsoService = ReturnType<typeof createSsoService>;
