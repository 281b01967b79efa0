// SQL of organizations, and the one statement behind GET /v1/org.
import type { Database, Queryable } from '../../db/database.ts';
import type { Role } from '../../http/caller.ts';
import { sessionCallerSql, tokenBatchParams, type MemberRecord, type SessionCallerRow, type TokenBatch } from '../identity/index.ts';
import type { TeamRecord } from '../teams/index.ts';
import type { OrganizationRecord, Plan } from './index.ts';

const memberJsonFields = `'id', m.id, 'organization_id', m.organization_id, 'user_id', m.user_id, 'role', m.role,
  'status', m.status, 'created_at', m.created_at, 'name', u.name, 'email', u.email, 'image', u.image`;

/** Rows built with json_build_object carry timestamps as ISO strings; callers turn them into Dates. */
export type Jsonified<T> = { [K in keyof T]: T[K] extends Date ? string : T[K] };

export interface ActiveOrganizationRow extends SessionCallerRow {
  organization: Jsonified<OrganizationRecord> | null;
  owner: Jsonified<MemberRecord> | null;
  current_member: Jsonified<MemberRecord> | null;
  teams: Jsonified<TeamRecord>[] | null;
}

export async function countOrganizations(db: Queryable): Promise<number> {
  const { rows } = await db.query<{ count: number }>('SELECT count(*) AS count FROM organizations');
  return rows[0]!.count;
}

export async function insertOrganization(db: Queryable, organization: { id: string; name: string; plan?: Plan }): Promise<OrganizationRecord> {
  const { rows } = await db.query<OrganizationRecord>(
    'INSERT INTO organizations (id, name, plan) VALUES ($1, $2, $3) RETURNING id, name, plan, created_at',
    [organization.id, organization.name, organization.plan ?? 'free'],
  );
  return rows[0]!;
}

/**
 * Takes the organization's row lock until the transaction ends, for writes of one organization that
 * must run one after another (install-link rotations; see install-links). False when it does not exist.
 */
export async function lockOrganization(db: Queryable, organizationId: string): Promise<boolean> {
  const { rows } = await db.query('SELECT id FROM organizations WHERE id = $1 FOR UPDATE', [organizationId]);
  return rows.length > 0;
}

export async function findOrganization(db: Queryable, id: string): Promise<OrganizationRecord | undefined> {
  const { rows } = await db.query<OrganizationRecord>('SELECT id, name, plan, created_at FROM organizations WHERE id = $1', [id]);
  return rows[0];
}

export async function setPlan(db: Queryable, id: string, plan: Plan): Promise<OrganizationRecord | undefined> {
  const { rows } = await db.query<OrganizationRecord>(
    'UPDATE organizations SET plan = $2, updated_at = now() WHERE id = $1 RETURNING id, name, plan, created_at',
    [id, plan],
  );
  return rows[0];
}

export async function listOrganizationsOfUser(db: Queryable, userId: string): Promise<(OrganizationRecord & { role: Role; member_id: string })[]> {
  const { rows } = await db.query<OrganizationRecord & { role: Role; member_id: string }>(
    `SELECT o.id, o.name, o.plan, o.created_at, m.role, m.member_id
       FROM user_memberships m JOIN organizations o ON o.id = m.organization_id
      WHERE m.user_id = $1 AND m.status = 'active'
      ORDER BY o.created_at, o.id`,
    [userId],
  );
  return rows;
}

/**
 * Spec operation 7 in one round trip: the session check and everything GET /v1/org shows, for
 * several sessions at once. The organization parts are null when a session has no active
 * organization it is a member of.
 */
export async function findActiveOrganizationsByTokens(db: Database, batch: TokenBatch): Promise<ActiveOrganizationRow[]> {
  const { rows } = await db.prepared<ActiveOrganizationRow>(
    'identity_active_organizations',
    `WITH caller AS (${sessionCallerSql})
     SELECT caller.*,
            CASE WHEN o.id IS NULL THEN NULL ELSE json_build_object(
              'id', o.id, 'name', o.name, 'plan', o.plan, 'created_at', o.created_at) END AS organization,
            owner.row AS owner,
            current_member.row AS current_member,
            teams.rows AS teams
       FROM caller
       LEFT JOIN organizations o ON o.id = caller.active_organization_id AND caller.member_id IS NOT NULL
       LEFT JOIN LATERAL (
         SELECT json_build_object(${memberJsonFields}) AS row
           FROM members m JOIN users u ON u.id = m.user_id
          WHERE m.organization_id = o.id AND m.role = 'owner'
       ) owner ON true
       LEFT JOIN LATERAL (
         SELECT json_build_object(${memberJsonFields}) AS row
           FROM members m JOIN users u ON u.id = m.user_id
          WHERE m.id = caller.member_id AND m.organization_id = o.id
       ) current_member ON true
       LEFT JOIN LATERAL (
         SELECT coalesce(json_agg(json_build_object(
                  'id', t.id, 'organization_id', t.organization_id, 'name', t.name, 'created_at', t.created_at)
                ORDER BY t.name, t.id), '[]'::json) AS rows
           FROM team_members tm JOIN teams t ON t.organization_id = tm.organization_id AND t.id = tm.team_id
          WHERE tm.organization_id = o.id AND tm.member_id = caller.member_id
       ) teams ON true`,
    tokenBatchParams(batch),
  );
  return rows;
}
