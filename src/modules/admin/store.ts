// SQL of instance administration: reads across every organization (counts, lists, searches). It writes
// nothing: plans are the organizations module's, administrators the users module's. Each statement
// reads the whole instance on purpose, and its comment says so to the tenant-routing check.
import type { Queryable } from '../../db/database.ts';
import type { AdminRow, OrganizationRow, Overview, PersonRow } from './contracts.ts';

/** A LIKE pattern matching what starts with `text` (its own % _ and \ taken literally), lower-cased. */
function prefixPattern(text: string): string {
  return `${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

export async function overview(db: Queryable): Promise<Overview> {
  const { rows } = await db.query<{
    people: number;
    organizations: number;
    d1: number;
    d7: number;
    d30: number;
    administrators: number;
    dead_streams: number;
  }>(
    `/* orgplane admin: overview */
     SELECT (SELECT count(*) FROM users)::int AS people,
            (SELECT count(*) FROM organizations)::int AS organizations,
            active.d1, active.d7, active.d30,
            (SELECT count(*) FROM users WHERE is_instance_admin)::int AS administrators,
            (SELECT count(*) FROM audit_streams WHERE dead_at IS NOT NULL)::int AS dead_streams
       FROM (SELECT count(DISTINCT user_id) FILTER (WHERE authenticated_at >= now() - interval '1 day')::int AS d1,
                    count(DISTINCT user_id) FILTER (WHERE authenticated_at >= now() - interval '7 days')::int AS d7,
                    count(DISTINCT user_id)::int AS d30
               FROM sessions WHERE authenticated_at >= now() - interval '30 days') active`,
  );
  const row = rows[0]!;
  return {
    people: row.people,
    organizations: row.organizations,
    activePeople: { d1: row.d1, d7: row.d7, d30: row.d30 },
    administrators: row.administrators,
    deadAuditStreams: row.dead_streams,
  };
}

/**
 * People ordered by id, after `after`: those whose e-mail or name starts with `search`. The planner picks
 * by how many match: the prefix indexes for a rare prefix, the id order (stopping at a page) for a common one.
 */
export async function listPeople(
  db: Queryable,
  search: string | undefined,
  after: string | undefined,
  limit: number,
): Promise<PersonRow[]> {
  const params: unknown[] = [after ?? '', Math.trunc(limit)];
  let matches = '';
  if (search !== undefined) {
    params.push(prefixPattern(search));
    matches = 'AND (lower(u.email) LIKE $3 OR lower(u.name) LIKE $3)';
  }
  const { rows } = await db.query<PersonRow>(
    `/* orgplane admin: people */
     SELECT u.id, u.email, u.name, u.is_instance_admin, u.created_at,
            (SELECT count(*) FROM user_memberships um WHERE um.user_id = u.id AND um.status = 'active')::int AS organizations,
            (SELECT max(s.authenticated_at) FROM sessions s WHERE s.user_id = u.id) AS last_authenticated_at
       FROM users u
      WHERE u.id > $1 ${matches}
      ORDER BY u.id LIMIT $2`,
    params,
  );
  return rows;
}

/** Organizations ordered by id, after `after`: those whose name starts with `search`, or whose id it is. */
export async function listOrganizations(
  db: Queryable,
  search: string | undefined,
  after: string | undefined,
  limit: number,
): Promise<OrganizationRow[]> {
  const params: unknown[] = [after ?? '', Math.trunc(limit)];
  let matches = '';
  if (search !== undefined) {
    params.push(prefixPattern(search), search);
    matches = 'AND (lower(o.name) LIKE $3 OR o.id = $4)';
  }
  const { rows } = await db.query<OrganizationRow>(
    `/* orgplane admin: organizations */
     SELECT o.id, o.name, o.plan, o.created_at,
            (SELECT count(*) FROM members m WHERE m.organization_id = o.id AND m.status = 'active')::int AS members
       FROM organizations o
      WHERE o.id > $1 ${matches}
      ORDER BY o.id LIMIT $2`,
    params,
  );
  return rows;
}

export async function findOrganization(db: Queryable, organizationId: string): Promise<OrganizationRow | undefined> {
  const { rows } = await db.query<OrganizationRow>(
    `SELECT o.id, o.name, o.plan, o.created_at,
            (SELECT count(*) FROM members m WHERE m.organization_id = $1 AND m.status = 'active')::int AS members
       FROM organizations o WHERE o.id = $1`,
    [organizationId],
  );
  return rows[0];
}

/** The instance administrators, oldest account first. */
export async function listAdmins(db: Queryable): Promise<AdminRow[]> {
  const { rows } = await db.query<AdminRow>(
    `/* orgplane admin: administrators */
     SELECT id, email, name, created_at FROM users WHERE is_instance_admin ORDER BY created_at, id`,
  );
  return rows;
}

export async function findAdmin(db: Queryable, userId: string): Promise<AdminRow | undefined> {
  const { rows } = await db.query<AdminRow>('SELECT id, email, name, created_at FROM users WHERE id = $1', [userId]);
  return rows[0];
}

/** The account with this e-mail (case-insensitive, as accounts are unique). */
export async function findAdminByEmail(db: Queryable, email: string): Promise<AdminRow | undefined> {
  const { rows } = await db.query<AdminRow>(
    'SELECT id, email, name, created_at FROM users WHERE lower(email) = lower($1)',
    [email],
  );
  return rows[0];
}
