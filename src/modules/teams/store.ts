// SQL of teams and their members.
import type { Queryable } from '../../db/database.ts';
import type { TeamRecord } from './contracts.ts';

export async function existingTeamIds(db: Queryable, organizationId: string, ids: string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const { rows } = await db.query<{ id: string }>(
    'SELECT id FROM teams WHERE organization_id = $1 AND id = ANY($2::text[])',
    [organizationId, ids],
  );
  return rows.map((row) => row.id);
}

export async function insertTeam(
  db: Queryable,
  team: { id: string; organizationId: string; name: string },
): Promise<TeamRecord | undefined> {
  const { rows } = await db.query<TeamRecord>(
    `INSERT INTO teams (id, organization_id, name) VALUES ($1, $2, $3)
     ON CONFLICT (organization_id, name) DO NOTHING RETURNING id, organization_id, name, role_id, created_at`,
    [team.id, team.organizationId, team.name],
  );
  return rows[0];
}

export async function findTeam(db: Queryable, organizationId: string, teamId: string): Promise<TeamRecord | undefined> {
  const { rows } = await db.query<TeamRecord>(
    'SELECT id, organization_id, name, role_id, created_at FROM teams WHERE organization_id = $1 AND id = $2',
    [organizationId, teamId],
  );
  return rows[0];
}

export async function listTeams(
  db: Queryable,
  organizationId: string,
  limit: number,
  after?: string,
): Promise<(TeamRecord & { member_ids: string[] })[]> {
  const { rows } = await db.query<TeamRecord & { member_ids: string[] }>(
    `SELECT t.id, t.organization_id, t.name, t.role_id, t.created_at,
            coalesce(array_agg(tm.member_id ORDER BY tm.member_id) FILTER (WHERE tm.member_id IS NOT NULL), '{}') AS member_ids
       FROM teams t LEFT JOIN team_members tm ON tm.organization_id = t.organization_id AND tm.team_id = t.id
      WHERE t.organization_id = $1 AND ($2::text IS NULL OR t.id > $2)
      GROUP BY t.organization_id, t.id ORDER BY t.id LIMIT $3`,
    [organizationId, after ?? null, limit],
  );
  return rows;
}

export async function addTeamMember(
  db: Queryable,
  organizationId: string,
  teamId: string,
  memberId: string,
): Promise<void> {
  await db.query(
    `INSERT INTO team_members (team_id, member_id, organization_id) VALUES ($1, $2, $3)
     ON CONFLICT DO NOTHING`,
    [teamId, memberId, organizationId],
  );
}

export async function removeTeamMember(
  db: Queryable,
  organizationId: string,
  teamId: string,
  memberId: string,
): Promise<boolean> {
  const { rowCount } = await db.query(
    'DELETE FROM team_members WHERE organization_id = $1 AND team_id = $2 AND member_id = $3',
    [organizationId, teamId, memberId],
  );
  return rowCount === 1;
}

/**
 * The member's teams as GET /v1/org shows them (by name), built here so that the copy the membership
 * core keeps of them (user_memberships.teams) has the shape and timestamps of the table.
 */
export async function memberTeams(db: Queryable, organizationId: string, memberId: string): Promise<unknown[]> {
  const { rows } = await db.query<{ teams: unknown[] }>(
    `SELECT coalesce(jsonb_agg(jsonb_build_object('id', t.id, 'organization_id', t.organization_id, 'name', t.name, 'role_id', t.role_id, 'created_at', t.created_at)
                               ORDER BY t.name, t.id), '[]') AS teams
       FROM team_members tm JOIN teams t ON t.organization_id = tm.organization_id AND t.id = tm.team_id
      WHERE tm.organization_id = $1 AND tm.member_id = $2`,
    [organizationId, memberId],
  );
  return rows[0]!.teams;
}

/** The team locked until the transaction ends, for its change or deletion. */
export async function lockTeam(db: Queryable, organizationId: string, teamId: string): Promise<TeamRecord | undefined> {
  const { rows } = await db.query<TeamRecord>(
    'SELECT id, organization_id, name, role_id, created_at FROM teams WHERE organization_id = $1 AND id = $2 FOR UPDATE',
    [organizationId, teamId],
  );
  return rows[0];
}

export async function teamMemberIds(db: Queryable, organizationId: string, teamId: string): Promise<string[]> {
  const { rows } = await db.query<{ member_id: string }>(
    'SELECT member_id FROM team_members WHERE organization_id = $1 AND team_id = $2 ORDER BY member_id',
    [organizationId, teamId],
  );
  return rows.map((row) => row.member_id);
}

/** The team renamed or given a role; undefined when another team of the organization has the name. */
export async function updateTeam(
  db: Queryable,
  organizationId: string,
  teamId: string,
  change: { name: string; roleId: string | null },
): Promise<TeamRecord | undefined> {
  const { rows } = await db.query<TeamRecord>(
    `UPDATE teams SET name = $3, role_id = $4 WHERE organization_id = $1 AND id = $2
       AND NOT EXISTS (SELECT 1 FROM teams o WHERE o.organization_id = $1 AND o.name = $3 AND o.id <> $2)
     RETURNING id, organization_id, name, role_id, created_at`,
    [organizationId, teamId, change.name, change.roleId],
  );
  return rows[0];
}

export async function deleteTeam(db: Queryable, organizationId: string, teamId: string): Promise<void> {
  await db.query('DELETE FROM teams WHERE organization_id = $1 AND id = $2', [organizationId, teamId]);
}
