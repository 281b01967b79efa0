// SQL for the credentials stored for MCP connections (shared, or one member's own), and their health.
import type { Queryable } from '../../db/database.ts';
import type { Health, HealthReason } from './contracts.ts';

export interface CredentialRow {
  id: string;
  connectionId: string;
  memberId: string | null;
  kind: 'apikey' | 'oauth';
  identityFingerprint: string;
  secretSealed: string;
  expiresAt: Date | null;
  grantedScopes: string[];
  externalAccountId: string | null;
  tenantId: string | null;
  health: Health;
  healthReason: HealthReason | null;
  healthCheckedAt: Date | null;
  obtainedAt: Date;
}

const credentialColumns = `
  id, connection_id AS "connectionId", member_id AS "memberId", kind, identity_fingerprint AS "identityFingerprint",
  secret_sealed AS "secretSealed", expires_at AS "expiresAt", granted_scopes AS "grantedScopes",
  external_account_id AS "externalAccountId", tenant_id AS "tenantId", health, health_reason AS "healthReason",
  health_checked_at AS "healthCheckedAt", obtained_at AS "obtainedAt"`;

/** The rows of mcp_connection_credentials. */
export function createCredentialStore() {
  return {
    /** The shared credentials of the connections, the given member's own, and how many members hold one. */
    async credentialsFor(q: Queryable, organizationId: string, connectionIds: string[], memberId: string | null) {
      const shared = new Map<string, CredentialRow>();
      const mine = new Map<string, CredentialRow>();
      const memberCounts = new Map<string, { count: number; firstObtainedAt: Date }>();
      if (connectionIds.length === 0) return { shared, mine, memberCounts };
      const { rows } = await q.query<CredentialRow>(
        `SELECT ${credentialColumns} FROM mcp_connection_credentials
          WHERE organization_id = $1 AND connection_id = ANY($2) AND (member_id IS NULL OR member_id = $3)`,
        [organizationId, connectionIds, memberId ?? ''],
      );
      for (const row of rows) (row.memberId === null ? shared : mine).set(row.connectionId, row);
      const counts = await q.query<{ connectionId: string; count: number; firstObtainedAt: Date }>(
        `SELECT connection_id AS "connectionId", count(*)::int AS count, min(obtained_at) AS "firstObtainedAt"
           FROM mcp_connection_credentials WHERE organization_id = $1 AND connection_id = ANY($2) AND member_id IS NOT NULL
          GROUP BY connection_id`,
        [organizationId, connectionIds],
      );
      for (const row of counts.rows)
        memberCounts.set(row.connectionId, { count: row.count, firstObtainedAt: row.firstObtainedAt });
      return { shared, mine, memberCounts };
    },

    /** Stores the shared (memberId null) or a member's credential, replacing the previous one. */
    async upsertCredential(
      q: Queryable,
      row: {
        id: string;
        organizationId: string;
        connectionId: string;
        memberId: string | null;
        kind: 'apikey' | 'oauth';
        identityFingerprint: string;
        secretSealed: string;
        health: Health;
      },
    ): Promise<void> {
      await q.query(
        `DELETE FROM mcp_connection_credentials WHERE organization_id = $1 AND connection_id = $2 AND member_id IS NOT DISTINCT FROM $3`,
        [row.organizationId, row.connectionId, row.memberId],
      );
      await q.query(
        `INSERT INTO mcp_connection_credentials (id, organization_id, connection_id, member_id, kind, identity_fingerprint, secret_sealed,
           health, health_checked_at, validated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, CASE WHEN $8 = 'unknown' THEN NULL ELSE clock_timestamp() END,
           CASE WHEN $8 = 'ready' THEN clock_timestamp() END)`,
        [
          row.id,
          row.organizationId,
          row.connectionId,
          row.memberId,
          row.kind,
          row.identityFingerprint,
          row.secretSealed,
          row.health,
        ],
      );
    },

    async setCredentialHealth(
      q: Queryable,
      organizationId: string,
      credentialId: string,
      health: Health,
      reason: HealthReason | null,
    ): Promise<void> {
      await q.query(
        `UPDATE mcp_connection_credentials SET health = $3, health_reason = $4, health_checked_at = now(), updated_at = now(),
                health_failures = 0, validated_at = CASE WHEN $3 = 'ready' THEN now() ELSE validated_at END
          WHERE organization_id = $1 AND id = $2`,
        [organizationId, credentialId, health, reason],
      );
    },

    /** Every credential of the connection, shared and per member. */
    async deleteAllCredentials(q: Queryable, organizationId: string, connectionId: string): Promise<number> {
      const { rowCount } = await q.query(
        'DELETE FROM mcp_connection_credentials WHERE organization_id = $1 AND connection_id = $2',
        [organizationId, connectionId],
      );
      return rowCount ?? 0;
    },

    async countCredentials(q: Queryable, organizationId: string, connectionId: string): Promise<number> {
      const { rows } = await q.query<{ count: number }>(
        'SELECT count(*)::int AS count FROM mcp_connection_credentials WHERE organization_id = $1 AND connection_id = $2',
        [organizationId, connectionId],
      );
      return rows[0]!.count;
    },
  };
}
