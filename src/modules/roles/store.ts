// SQL of custom roles, and the reads that say who holds a role (members, invitations, API keys, teams
// and SSO provisioning name it; reading them is allowed, writing them is their modules').
import type { Queryable } from '../../db/database.ts';
import type { RoleRow } from './contracts.ts';

const roleColumns = 'organization_id, id, name, description, permissions, created_at, updated_at';

export async function listRoles(db: Queryable, organizationId: string): Promise<RoleRow[]> {
  const { rows } = await db.query<RoleRow>(
    `SELECT ${roleColumns} FROM roles WHERE organization_id = $1 ORDER BY lower(name), id`,
    [organizationId],
  );
  return rows;
}

export async function findRoles(db: Queryable, organizationId: string, ids: string[]): Promise<RoleRow[]> {
  if (ids.length === 0) return [];
  const { rows } = await db.query<RoleRow>(
    `SELECT ${roleColumns} FROM roles WHERE organization_id = $1 AND id = ANY($2::text[])`,
    [organizationId, ids],
  );
  return rows;
}

/** The role locked until the transaction ends: `share` for a write that names it, else for its change or deletion. */
export async function lockRole(
  db: Queryable,
  organizationId: string,
  id: string,
  mode: 'share' | 'update',
): Promise<RoleRow | undefined> {
  const { rows } = await db.query<RoleRow>(
    `SELECT ${roleColumns} FROM roles WHERE organization_id = $1 AND id = $2 ${mode === 'share' ? 'FOR SHARE' : 'FOR UPDATE'}`,
    [organizationId, id],
  );
  return rows[0];
}

/** The new role, or undefined when the name is taken. */
export async function insertRole(
  db: Queryable,
  role: { organizationId: string; id: string; name: string; description: string; permissions: string[] },
): Promise<RoleRow | undefined> {
  const { rows } = await db.query<RoleRow>(
    `INSERT INTO roles (organization_id, id, name, description, permissions) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT DO NOTHING RETURNING ${roleColumns}`,
    [role.organizationId, role.id, role.name, role.description, role.permissions],
  );
  return rows[0];
}

/** Whether another role of the organization has the name, ignoring case. */
export async function nameTaken(
  db: Queryable,
  organizationId: string,
  name: string,
  exceptId?: string,
): Promise<boolean> {
  const { rows } = await db.query(
    'SELECT 1 FROM roles WHERE organization_id = $1 AND lower(name) = lower($2) AND ($3::text IS NULL OR id <> $3)',
    [organizationId, name, exceptId ?? null],
  );
  return rows.length > 0;
}

export async function updateRole(
  db: Queryable,
  organizationId: string,
  id: string,
  change: { name: string; description: string; permissions: string[] },
): Promise<RoleRow> {
  const { rows } = await db.query<RoleRow>(
    `UPDATE roles SET name = $3, description = $4, permissions = $5, updated_at = now()
      WHERE organization_id = $1 AND id = $2 RETURNING ${roleColumns}`,
    [organizationId, id, change.name, change.description, change.permissions],
  );
  return rows[0]!;
}

export async function deleteRole(db: Queryable, organizationId: string, id: string): Promise<void> {
  await db.query('DELETE FROM roles WHERE organization_id = $1 AND id = $2', [organizationId, id]);
}

/** How many members hold each role of the organization (built-in ones included). */
export async function memberCounts(db: Queryable, organizationId: string): Promise<Map<string, number>> {
  const { rows } = await db.query<{ role: string; count: string }>(
    'SELECT role, count(*) AS count FROM members WHERE organization_id = $1 GROUP BY role',
    [organizationId],
  );
  return new Map(rows.map((row) => [row.role, Number(row.count)]));
}

/** What gives the role: how many members, pending invitations, API keys, teams, and whether SSO provisioning does. */
export interface RoleUses {
  members: number;
  invitations: number;
  apiKeys: number;
  teams: number;
  ssoProvisioning: boolean;
}

export async function roleUses(db: Queryable, organizationId: string, id: string): Promise<RoleUses> {
  const { rows } = await db.query<{
    members: string;
    invitations: string;
    api_keys: string;
    teams: string;
    sso: boolean;
  }>(
    `SELECT (SELECT count(*) FROM members WHERE organization_id = $1 AND role = $2) AS members,
            (SELECT count(*) FROM invitations WHERE organization_id = $1 AND role = $2
                AND accepted_at IS NULL AND expires_at > now()) AS invitations,
            (SELECT count(*) FROM api_keys WHERE organization_id = $1 AND role = $2 AND revoked_at IS NULL) AS api_keys,
            (SELECT count(*) FROM teams WHERE organization_id = $1 AND role_id = $2) AS teams,
            EXISTS (SELECT 1 FROM sso_connections WHERE organization_id = $1 AND jit_default_role = $2) AS sso`,
    [organizationId, id],
  );
  const row = rows[0]!;
  return {
    members: Number(row.members),
    invitations: Number(row.invitations),
    apiKeys: Number(row.api_keys),
    teams: Number(row.teams),
    ssoProvisioning: row.sso,
  };
}

/** An active member's role and the teams of theirs that carry a role, for "where does each key come from". */
export async function memberSources(
  db: Queryable,
  organizationId: string,
  memberId: string,
): Promise<{ role: string; teams: { id: string; name: string; role_id: string }[] } | undefined> {
  const { rows } = await db.query<{ role: string; teams: { id: string; name: string; role_id: string }[] }>(
    `SELECT m.role,
            coalesce((SELECT json_agg(json_build_object('id', t.id, 'name', t.name, 'role_id', t.role_id) ORDER BY t.name, t.id)
                        FROM team_members tm JOIN teams t ON t.organization_id = tm.organization_id AND t.id = tm.team_id
                       WHERE tm.organization_id = m.organization_id AND tm.member_id = m.id AND t.role_id IS NOT NULL),
                     '[]') AS teams
       FROM members m WHERE m.organization_id = $1 AND m.id = $2 AND m.status = 'active'`,
    [organizationId, memberId],
  );
  return rows[0];
}
