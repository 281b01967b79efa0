// SQL of who a bearer secret speaks for: a session's person and their active membership, or an
// organization API key, each with the keys they hold. Read on every authenticated request.
import type { Database } from '../../db/database.ts';
import type { AuthMethod, Role } from '../../http/caller.ts';
import type { MemberGrants } from './store.ts';
import type { TokenBatch } from './tokens.ts';

/** What a bearer token resolves to, read in one round trip on every authenticated request. */
export interface SessionCallerRow extends MemberGrants {
  token_hash: string;
  session_id: string;
  user_id: string;
  is_instance_admin: boolean;
  active_organization_id: string | null;
  member_id: string | null;
  role: Role | null;
  authenticated_at: Date;
  auth_method: AuthMethod;
  name: string;
  email: string;
}

export interface ApiKeyCallerRow {
  token_hash: string;
  id: string;
  organization_id: string;
  name: string;
  role: Role;
  custom_permissions: string[] | null;
}

/**
 * Valid (unexpired, unrevoked) sessions and each caller's active membership, by token hashes: every
 * authenticated request needs this, so concurrent requests share one statement (see the service). The
 * membership is read from the person's copy (user_memberships), which sits with their sessions on a
 * distributed database, not from members, which sits with the organization. The keys of the custom roles
 * among the member's own and their teams' (the copy names each team's role) are joined and gathered here
 * too: a join and an aggregate grouped by the person, not a correlated subquery, which a distributed
 * database does not run over a reference table (roles) across shards.
 */
export const sessionCallerSql = `
  SELECT s.token_hash, s.id AS session_id, s.user_id, u.is_instance_admin, s.active_organization_id,
         m.member_id, m.role, s.authenticated_at, s.auth_method, u.name, u.email,
         jsonb_path_query_array(m.teams, '$[*].role_id ? (@ != null)') AS team_roles,
         string_to_array(string_agg(array_to_string(r.permissions, ','), ','), ',') AS custom_permissions
    FROM sessions s
    JOIN users u ON u.id = s.user_id
    LEFT JOIN user_memberships m
      ON m.user_id = s.user_id AND m.organization_id = s.active_organization_id AND m.status = 'active'
    LEFT JOIN roles r
      ON r.organization_id = m.organization_id
     AND (r.id = m.role OR m.teams @> jsonb_build_array(jsonb_build_object('role_id', r.id)))
   WHERE s.token_hash = ANY($1::text[]) AND ($3::boolean OR s.user_id = ANY($2::text[]))
     AND s.revoked_at IS NULL AND s.expires_at > now()
   GROUP BY s.user_id, s.id, s.token_hash, u.is_instance_admin, s.active_organization_id, m.member_id, m.role,
            s.authenticated_at, s.auth_method, u.name, u.email, m.teams`;

/** The parameters of a statement that finds rows by a batch of tokens ($1 hashes, $2 tenants, $3 any without one). */
export const tokenBatchParams = (batch: TokenBatch) => [batch.hashes, batch.tenants, batch.someWithoutTenant];

// The lookups that authenticate requests run on every call, so they are prepared statements.
export async function findSessionCallers(db: Database, batch: TokenBatch): Promise<SessionCallerRow[]> {
  const { rows } = await db.prepared<SessionCallerRow>(
    'identity_session_callers',
    sessionCallerSql,
    tokenBatchParams(batch),
  );
  return rows;
}

export async function findApiKeys(db: Database, batch: TokenBatch): Promise<ApiKeyCallerRow[]> {
  const { rows } = await db.prepared<ApiKeyCallerRow>(
    'identity_api_keys',
    `SELECT k.key_hash AS token_hash, k.id, k.organization_id, k.name, k.role, k.created_at,
            r.permissions AS custom_permissions
       FROM api_keys k LEFT JOIN roles r ON r.organization_id = k.organization_id AND r.id = k.role
      WHERE k.key_hash = ANY($1::text[]) AND ($3::boolean OR k.organization_id = ANY($2::text[])) AND k.revoked_at IS NULL`,
    tokenBatchParams(batch),
  );
  return rows;
}
