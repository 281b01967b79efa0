import type { Queryable } from '../../db/database.ts';

export interface SsoConnectionRow {
  id: string;
  organization_id: string;
  domain: string;
  issuer: string;
  client_id: string;
  client_secret_sealed: string | null;
  verification_token: string;
  domain_verified_at: Date | null;
  protocol: 'oidc' | 'saml';
  jit_enabled: boolean;
  jit_default_role: 'member' | 'admin';
  jit_default_team_ids: string[];
  sso_required: boolean;
  last_sign_in_at: Date | null;
  last_error_at: Date | null;
  last_error_category: string | null;
  last_error_message: string | null;
  created_at: Date;
  updated_at: Date;
}

/** The sign-in settings of a connection (PUT /v1/sso/connection). */
export interface SignInSettings {
  jitEnabled: boolean;
  jitDefaultRole: 'member' | 'admin';
  jitDefaultTeamIds: string[];
  ssoRequired: boolean;
}

const columns = `id, organization_id, domain, issuer, client_id, client_secret_sealed, verification_token,
  domain_verified_at, protocol, jit_enabled, jit_default_role, jit_default_team_ids, sso_required,
  last_sign_in_at, last_error_at, last_error_category, last_error_message, created_at, updated_at`;

/** SQL for SSO connections; every statement is scoped by organization. */
export function createSsoStore() {
  return {
    async findByOrganization(db: Queryable, organizationId: string, forUpdate = false): Promise<SsoConnectionRow | undefined> {
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
      row: { id: string; organizationId: string; domain: string; issuer: string; clientId: string; clientSecretSealed: string | null; verificationToken: string } & SignInSettings,
    ): Promise<SsoConnectionRow> {
      const { rows } = await db.query<SsoConnectionRow>(
        `INSERT INTO sso_connections (id, organization_id, domain, issuer, client_id, client_secret_sealed, verification_token,
                                      jit_enabled, jit_default_role, jit_default_team_ids, sso_required)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING ${columns}`,
        [row.id, row.organizationId, row.domain, row.issuer, row.clientId, row.clientSecretSealed, row.verificationToken,
          row.jitEnabled, row.jitDefaultRole, row.jitDefaultTeamIds, row.ssoRequired],
      );
      return rows[0]!;
    },

    async update(
      db: Queryable,
      organizationId: string,
      changes: {
        domain: string;
        issuer: string;
        clientId: string;
        clientSecretSealed: string | null;
        verificationToken: string;
        domainVerifiedAt: Date | null;
        /** The IdP or domain changed: earlier sign-ins say nothing of it (SSO is not ready until one succeeds again). */
        resetSignIns: boolean;
      } & SignInSettings,
    ): Promise<SsoConnectionRow> {
      const { rows } = await db.query<SsoConnectionRow>(
        `UPDATE sso_connections
            SET domain = $2, issuer = $3, client_id = $4, client_secret_sealed = $5, verification_token = $6,
                domain_verified_at = $7, jit_enabled = $8, jit_default_role = $9, jit_default_team_ids = $10,
                sso_required = $11, updated_at = now(),
                last_sign_in_at = CASE WHEN $12 THEN NULL ELSE last_sign_in_at END
          WHERE organization_id = $1
          RETURNING ${columns}`,
        [organizationId, changes.domain, changes.issuer, changes.clientId, changes.clientSecretSealed, changes.verificationToken, changes.domainVerifiedAt,
          changes.jitEnabled, changes.jitDefaultRole, changes.jitDefaultTeamIds, changes.ssoRequired, changes.resetSignIns],
      );
      return rows[0]!;
    },

    /** Marks the domain verified, unless the connection changed domain since it was read. */
    async markVerified(db: Queryable, organizationId: string, domain: string, verificationToken: string): Promise<SsoConnectionRow | undefined> {
      const { rows } = await db.query<SsoConnectionRow>(
        `UPDATE sso_connections
            SET domain_verified_at = COALESCE(domain_verified_at, now()), updated_at = now()
          WHERE organization_id = $1 AND domain = $2 AND verification_token = $3
          RETURNING ${columns}`,
        [organizationId, domain, verificationToken],
      );
      return rows[0];
    },
  };
}
