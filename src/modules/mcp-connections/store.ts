// SQL for MCP connections, their access lists, credentials and plugin links. Every query names
// the organization; nothing here decides rules (that is service.ts).// The access lists, credentials and plugins each have their own file (access-store.ts,
// credential-store.ts, plugin-store.ts); this store is all of them together.

import type { Queryable } from '../../db/database.ts';
import { createAccessStore } from './access-store.ts';
import type { ConnectionFields, ConnectionRow, Health, HealthReason } from './contracts.ts';
import { createCredentialStore } from './credential-store.ts';
import { createPluginStore } from './plugin-store.ts';

const connectionColumns = `
  c.id, c.organization_id AS "organizationId", c.name, c.url, c.normalized_url AS "normalizedUrl",
  c.auth_type AS "authType", c.credential_mode AS "credentialMode", c.identity_fingerprint AS "identityFingerprint",
  c.org_wide AS "orgWide", c.oauth_client_id AS "oauthClientId", c.oauth_client_secret_sealed AS "oauthClientSecretSealed",
  CASE WHEN c.oauth_client_signing_alg IS NOT NULL THEN 'private_key_jwt' ELSE c.oauth_token_endpoint_auth_method END AS "oauthTokenEndpointAuthMethod",
  c.oauth_client_private_key_sealed AS "oauthClientPrivateKeySealed", c.oauth_client_signing_alg AS "oauthClientSigningAlgorithm",
  c.oauth_grant_type AS "oauthGrantType", c.oauth_registration_source AS "oauthRegistrationSource",
  c.oauth_client_required AS "oauthClientRequired", c.authorization_server_issuer AS "authorizationServerIssuer",
  c.requested_scopes AS "requestedScopes", c.health, c.health_reason AS "healthReason", c.health_checked_at AS "healthCheckedAt",
  c.created_by AS "createdBy", u.name AS "createdByName", c.created_at AS "createdAt",
  c.identity_updated_at AS "identityUpdatedAt", c.updated_at AS "updatedAt"`;

// private_key_jwt is stored as its signing algorithm (migration 0204), the method column left NULL.
const storedAuthMethod = (fields: ConnectionFields) =>
  fields.oauthTokenEndpointAuthMethod === 'private_key_jwt' ? null : fields.oauthTokenEndpointAuthMethod;

// A new concurrency token: now, at millisecond precision, and always later than the previous one
// (`previous`: the parameter holding the token the row has, which the statement's WHERE or the caller's
// lock makes sure of), so two writes within one millisecond still give different tokens. now() (the
// transaction's start), not clock_timestamp(), and the previous token as a parameter, not the column:
// Citus refuses in an UPDATE of a distributed table a volatile function, and a stable one (timestamptz +
// interval is) applied to a column (tried on Citus 13.2).
const nextUpdatedAt = (previous: string) =>
  `GREATEST(date_trunc('milliseconds', now()), ${previous}::timestamptz + interval '1 millisecond')`;

export function createConnectionStore() {
  return {
    async insertConnection(
      q: Queryable,
      row: ConnectionFields & { id: string; organizationId: string; createdBy: string | null },
    ): Promise<void> {
      await q.query(
        `INSERT INTO mcp_connections (id, organization_id, name, url, normalized_url, auth_type, credential_mode, identity_fingerprint,
           org_wide, oauth_client_id, oauth_client_secret_sealed, oauth_token_endpoint_auth_method, oauth_registration_source,
           authorization_server_issuer, requested_scopes, health, health_reason, health_checked_at, created_by,
           oauth_client_private_key_sealed, oauth_client_signing_alg, oauth_grant_type, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22,
           date_trunc('milliseconds', clock_timestamp()))`,
        [
          row.id,
          row.organizationId,
          row.name,
          row.url,
          row.normalizedUrl,
          row.authType,
          row.credentialMode,
          row.identityFingerprint,
          row.orgWide,
          row.oauthClientId,
          row.oauthClientSecretSealed,
          storedAuthMethod(row),
          row.oauthRegistrationSource,
          row.authorizationServerIssuer,
          JSON.stringify(row.requestedScopes),
          row.health,
          row.healthReason,
          row.healthCheckedAt,
          row.createdBy,
          row.oauthClientPrivateKeySealed,
          row.oauthClientSigningAlgorithm,
          row.oauthGrantType,
        ],
      );
    },

    async findConnection(
      q: Queryable,
      organizationId: string,
      id: string,
      lock = false,
    ): Promise<ConnectionRow | undefined> {
      const { rows } = await q.query<ConnectionRow>(
        `SELECT ${connectionColumns} FROM mcp_connections c LEFT JOIN users u ON u.id = c.created_by
          WHERE c.organization_id = $1 AND c.id = $2 ${lock ? 'FOR UPDATE OF c' : ''}`,
        [organizationId, id],
      );
      return rows[0];
    },

    /**
     * Whether the connection exists, key-share locked until the transaction ends: a DELETE waits for
     * it (so rows written for the connection meanwhile cannot lose it), an edit does not.
     */
    async holdConnection(q: Queryable, organizationId: string, id: string): Promise<boolean> {
      const { rows } = await q.query(
        'SELECT 1 FROM mcp_connections WHERE organization_id = $1 AND id = $2 FOR KEY SHARE',
        [organizationId, id],
      );
      return rows.length > 0;
    },

    /**
     * A page of connections ordered by id. With `member`, only those the member may use: org-wide,
     * granted to them, or granted to one of their teams. The grants' subqueries name the organization
     * as a parameter, not as c's column: correlated on the column, PostgreSQL planned them as hashed
     * SubPlans that read every organization's grants (and Citus accepts such a subquery only when it
     * is routed to one shard).
     */
    async listConnections(
      q: Queryable,
      organizationId: string,
      page: { limit: number; after?: string | undefined },
      member?: { memberId: string },
    ): Promise<ConnectionRow[]> {
      const params: unknown[] = [organizationId, page.after ?? '', page.limit + 1];
      let filter = '';
      if (member) {
        params.push(member.memberId);
        filter = `AND (c.org_wide
          OR EXISTS (SELECT 1 FROM mcp_connection_members m
                      WHERE m.organization_id = $1 AND m.connection_id = c.id AND m.member_id = $4)
          OR EXISTS (SELECT 1 FROM mcp_connection_teams t
                       JOIN team_members tm ON tm.organization_id = t.organization_id AND tm.team_id = t.team_id
                      WHERE t.organization_id = $1 AND t.connection_id = c.id AND tm.member_id = $4))`;
      }
      const { rows } = await q.query<ConnectionRow>(
        `SELECT ${connectionColumns} FROM mcp_connections c LEFT JOIN users u ON u.id = c.created_by
          WHERE c.organization_id = $1 AND c.id > $2 ${filter} ORDER BY c.id LIMIT $3`,
        params,
      );
      return rows;
    },

    async memberMayUse(q: Queryable, organizationId: string, connectionId: string, memberId: string): Promise<boolean> {
      const { rows } = await q.query(
        `SELECT 1 FROM mcp_connections c WHERE c.organization_id = $1 AND c.id = $2 AND (c.org_wide
           OR EXISTS (SELECT 1 FROM mcp_connection_members m
                       WHERE m.organization_id = $1 AND m.connection_id = c.id AND m.member_id = $3)
           OR EXISTS (SELECT 1 FROM mcp_connection_teams t
                        JOIN team_members tm ON tm.organization_id = t.organization_id AND tm.team_id = t.team_id
                       WHERE t.organization_id = $1 AND t.connection_id = c.id AND tm.member_id = $3))`,
        [organizationId, connectionId, memberId],
      );
      return rows.length > 0;
    },

    /** Writes `fields` only if the row still carries `expectedUpdatedAt`; undefined when it did not. */
    async updateConnection(
      q: Queryable,
      organizationId: string,
      id: string,
      expectedUpdatedAt: Date,
      fields: ConnectionFields,
      identityChanged: boolean,
    ) {
      const { rows } = await q.query<{ updatedAt: Date }>(
        `UPDATE mcp_connections c SET name = $4, url = $5, normalized_url = $6, auth_type = $7, credential_mode = $8,
           identity_fingerprint = $9, org_wide = $10, oauth_client_id = $11, oauth_client_secret_sealed = $12,
           oauth_token_endpoint_auth_method = $13, oauth_registration_source = $14, authorization_server_issuer = $15,
           requested_scopes = $16, health = $17, health_reason = $18, health_checked_at = $19,
           oauth_client_private_key_sealed = $21, oauth_client_signing_alg = $22, oauth_grant_type = $23,
           identity_updated_at = COALESCE($20::timestamptz, c.identity_updated_at),
           updated_at = ${nextUpdatedAt('$3')}
         WHERE c.organization_id = $1 AND c.id = $2 AND c.updated_at = $3
         RETURNING c.updated_at AS "updatedAt"`,
        [
          organizationId,
          id,
          expectedUpdatedAt,
          fields.name,
          fields.url,
          fields.normalizedUrl,
          fields.authType,
          fields.credentialMode,
          fields.identityFingerprint,
          fields.orgWide,
          fields.oauthClientId,
          fields.oauthClientSecretSealed,
          storedAuthMethod(fields),
          fields.oauthRegistrationSource,
          fields.authorizationServerIssuer,
          JSON.stringify(fields.requestedScopes),
          fields.health,
          fields.healthReason,
          fields.healthCheckedAt,
          // This process's clock: Citus refuses now() inside CASE or COALESCE in an UPDATE.
          identityChanged ? new Date() : null,
          fields.oauthClientPrivateKeySealed,
          fields.oauthClientSigningAlgorithm,
          fields.oauthGrantType,
        ],
      );
      return rows[0];
    },

    /**
     * Bumps the concurrency token (access replace changes the connection without other columns), past
     * `lockedUpdatedAt`: the token of the row the caller holds locked.
     */
    async touchConnection(
      q: Queryable,
      organizationId: string,
      id: string,
      orgWide: boolean,
      lockedUpdatedAt: Date,
    ): Promise<void> {
      await q.query(
        `UPDATE mcp_connections c SET org_wide = $3, updated_at = ${nextUpdatedAt('$4')} WHERE c.organization_id = $1 AND c.id = $2`,
        [organizationId, id, orgWide, lockedUpdatedAt],
      );
    },

    async setConnectionHealth(
      q: Queryable,
      organizationId: string,
      id: string,
      health: Health,
      reason: HealthReason | null,
    ): Promise<void> {
      await q.query(
        `UPDATE mcp_connections SET health = $3, health_reason = $4, health_checked_at = now() WHERE organization_id = $1 AND id = $2`,
        [organizationId, id, health, reason],
      );
    },

    async deleteConnection(q: Queryable, organizationId: string, id: string): Promise<boolean> {
      const { rowCount } = await q.query('DELETE FROM mcp_connections WHERE organization_id = $1 AND id = $2', [
        organizationId,
        id,
      ]);
      return (rowCount ?? 0) > 0;
    },
    ...createAccessStore(),
    ...createCredentialStore(),
    ...createPluginStore(),
  };
}

export type ConnectionStore = ReturnType<typeof createConnectionStore>;
