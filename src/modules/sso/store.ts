import type { Queryable } from '../../db/database.ts';
import type { EmailTrust } from './email-trust.ts';

export interface SsoConnectionRow {
  id: string;
  organization_id: string;
  domain: string;
  /** OIDC: the issuer; SAML: the IdP's entity id. */
  issuer: string;
  /** OIDC only. */
  client_id: string | null;
  client_secret_sealed: string | null;
  verification_token: string;
  domain_verified_at: Date | null;
  protocol: 'oidc' | 'saml';
  jit_enabled: boolean;
  jit_default_role: string;
  jit_default_team_ids: string[];
  sso_required: boolean;
  /** OIDC: how the e-mail the IdP asserts is trusted (email-trust.ts). */
  email_trust: EmailTrust;
  last_sign_in_at: Date | null;
  last_error_at: Date | null;
  last_error_category: string | null;
  last_error_message: string | null;
  /** SAML only: the IdP's single sign-on URL (HTTP-Redirect), its signing certificates (PEM), where its metadata came from. */
  saml_idp_sso_url: string | null;
  saml_idp_certificates: string[];
  saml_idp_metadata_url: string | null;
  certificate_expires_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

/** The sign-in settings of a connection (PUT /v1/sso/connection). */
export interface SignInSettings {
  jitEnabled: boolean;
  jitDefaultRole: string;
  jitDefaultTeamIds: string[];
  ssoRequired: boolean;
  emailTrust: EmailTrust;
}

/** What the connection signs in with: OIDC's client at an issuer, or a SAML IdP (`issuer` is then its entity id). */
export interface IdentityProviderSettings {
  protocol: 'oidc' | 'saml';
  issuer: string;
  clientId: string | null;
  samlIdpSsoUrl: string | null;
  samlIdpCertificates: string[];
  samlIdpMetadataUrl: string | null;
  certificateExpiresAt: Date | null;
}

const columns = `id, organization_id, domain, issuer, client_id, client_secret_sealed, verification_token,
  domain_verified_at, protocol, jit_enabled, jit_default_role, jit_default_team_ids, sso_required, email_trust,
  last_sign_in_at, last_error_at, last_error_category, last_error_message, saml_idp_sso_url, saml_idp_certificates,
  saml_idp_metadata_url, certificate_expires_at, created_at, updated_at`;

/** SQL for SSO connections; every statement is scoped by organization. */
export function createSsoStore() {
  return {
    async findByOrganization(
      db: Queryable,
      organizationId: string,
      forUpdate = false,
    ): Promise<SsoConnectionRow | undefined> {
      const { rows } = await db.query<SsoConnectionRow>(
        `SELECT ${columns} FROM sso_connections WHERE organization_id = $1${forUpdate ? ' FOR UPDATE' : ''}`,
        [organizationId],
      );
      return rows[0];
    },

    /** Whether another organization has already verified this domain. */
    async verifiedElsewhere(db: Queryable, domain: string, organizationId: string): Promise<boolean> {
      const { rows } = await db.query(
        'SELECT 1 FROM sso_connections WHERE domain = $1 AND domain_verified_at IS NOT NULL AND organization_id <> $2',
        [domain, organizationId],
      );
      return rows.length > 0;
    },

    async insert(
      db: Queryable,
      row: {
        id: string;
        organizationId: string;
        domain: string;
        clientSecretSealed: string | null;
        verificationToken: string;
      } & IdentityProviderSettings &
        SignInSettings,
    ): Promise<SsoConnectionRow> {
      const { rows } = await db.query<SsoConnectionRow>(
        `INSERT INTO sso_connections (id, organization_id, domain, issuer, client_id, client_secret_sealed, verification_token,
                                      jit_enabled, jit_default_role, jit_default_team_ids, sso_required,
                                      protocol, saml_idp_sso_url, saml_idp_certificates, saml_idp_metadata_url, certificate_expires_at, email_trust)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17) RETURNING ${columns}`,
        [
          row.id,
          row.organizationId,
          row.domain,
          row.issuer,
          row.clientId,
          row.clientSecretSealed,
          row.verificationToken,
          row.jitEnabled,
          row.jitDefaultRole,
          row.jitDefaultTeamIds,
          row.ssoRequired,
          row.protocol,
          row.samlIdpSsoUrl,
          row.samlIdpCertificates,
          row.samlIdpMetadataUrl,
          row.certificateExpiresAt,
          row.emailTrust,
        ],
      );
      return rows[0]!;
    },

    async update(
      db: Queryable,
      organizationId: string,
      changes: {
        domain: string;
        clientSecretSealed: string | null;
        verificationToken: string;
        domainVerifiedAt: Date | null;
        /** The IdP or domain changed: earlier sign-ins say nothing of it (SSO is not ready until one succeeds again). */
        resetSignIns: boolean;
      } & IdentityProviderSettings &
        SignInSettings,
    ): Promise<SsoConnectionRow> {
      const { rows } = await db.query<SsoConnectionRow>(
        `UPDATE sso_connections
            SET domain = $2, issuer = $3, client_id = $4, client_secret_sealed = $5, verification_token = $6,
                domain_verified_at = $7, jit_enabled = $8, jit_default_role = $9, jit_default_team_ids = $10,
                sso_required = $11, updated_at = now(),
                last_sign_in_at = CASE WHEN $12 THEN NULL ELSE last_sign_in_at END,
                protocol = $13, saml_idp_sso_url = $14, saml_idp_certificates = $15, saml_idp_metadata_url = $16, certificate_expires_at = $17,
                email_trust = $18
          WHERE organization_id = $1
          RETURNING ${columns}`,
        [
          organizationId,
          changes.domain,
          changes.issuer,
          changes.clientId,
          changes.clientSecretSealed,
          changes.verificationToken,
          changes.domainVerifiedAt,
          changes.jitEnabled,
          changes.jitDefaultRole,
          changes.jitDefaultTeamIds,
          changes.ssoRequired,
          changes.resetSignIns,
          changes.protocol,
          changes.samlIdpSsoUrl,
          changes.samlIdpCertificates,
          changes.samlIdpMetadataUrl,
          changes.certificateExpiresAt,
          changes.emailTrust,
        ],
      );
      return rows[0]!;
    },

    /**
     * Marks the domain verified, unless the connection changed domain since it was read. The time inside
     * COALESCE comes from a joined one-row subquery: Citus refuses now() there in an UPDATE.
     */
    async markVerified(
      db: Queryable,
      organizationId: string,
      domain: string,
      verificationToken: string,
    ): Promise<SsoConnectionRow | undefined> {
      const { rows } = await db.query<SsoConnectionRow>(
        `UPDATE sso_connections
            SET domain_verified_at = COALESCE(domain_verified_at, clock.now), updated_at = now()
           FROM (SELECT now() AS now) clock
          WHERE organization_id = $1 AND domain = $2 AND verification_token = $3
          RETURNING ${columns}`,
        [organizationId, domain, verificationToken],
      );
      return rows[0];
    },
  };
}
