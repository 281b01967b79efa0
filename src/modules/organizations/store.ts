// SQL of organizations, and the one statement behind GET /v1/org.
import type { Database, Queryable } from '../../db/database.ts';
import type { Role } from '../../http/caller.ts';
import {
  sessionCallerSql,
  tokenBatchParams,
  type MemberRecord,
  type SessionCallerRow,
  type TokenBatch,
} from '../identity/index.ts';
import type { TeamRecord } from '../teams/index.ts';
import type { OrganizationRecord, Plan } from './contracts.ts';

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

export async function insertOrganization(
  db: Queryable,
  organization: { id: string; name: string; plan?: Plan },
): Promise<OrganizationRecord> {
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
  const { rows } = await db.query<OrganizationRecord>(
    'SELECT id, name, plan, created_at FROM organizations WHERE id = $1',
    [id],
  );
  return rows[0];
}

export async function setPlan(db: Queryable, id: string, plan: Plan): Promise<OrganizationRecord | undefined> {
  const { rows } = await db.query<OrganizationRecord>(
    'UPDATE organizations SET plan = $2, updated_at = now() WHERE id = $1 RETURNING id, name, plan, created_at',
    [id, plan],
  );
  return rows[0];
}

export async function renameOrganization(
  db: Queryable,
  id: string,
  name: string,
): Promise<(OrganizationRecord & { previous_name: string }) | undefined> {
  // The old name comes from the row the update locked, so the audit event's "from" is the one replaced.
  const { rows } = await db.query<OrganizationRecord & { previous_name: string }>(
    `UPDATE organizations o SET name = $2, updated_at = now()
       FROM (SELECT id, name FROM organizations WHERE id = $1 FOR UPDATE) previous
      WHERE o.id = previous.id
      RETURNING o.id, o.name, o.plan, o.created_at, previous.name AS previous_name`,
    [id, name],
  );
  return rows[0];
}

export async function listOrganizationsOfUser(
  db: Queryable,
  userId: string,
): Promise<(OrganizationRecord & { role: Role; member_id: string })[]> {
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
 * organization it is a member of. It reads the person's rows (the session, their copy of the
 * membership with its teams) and global ones (the organization, its owner, the people), none of
 * an organization's own tables: on a database distributed by tenant it stays on the person's node.
 */
export async function findActiveOrganizationsByTokens(
  db: Database,
  batch: TokenBatch,
): Promise<ActiveOrganizationRow[]> {
  const { rows } = await db.prepared<ActiveOrganizationRow>(
    'identity_active_organizations',
    `WITH caller AS (${sessionCallerSql})
     SELECT caller.*,
            CASE WHEN o.id IS NULL THEN NULL ELSE json_build_object(
              'id', o.id, 'name', o.name, 'plan', o.plan, 'created_at', o.created_at) END AS organization,
            CASE WHEN owner.member_id IS NULL THEN NULL ELSE json_build_object(
              'id', owner.member_id, 'organization_id', owner.organization_id, 'user_id', owner.user_id, 'role', 'owner', 'status', owner.status,
              'created_at', owner.member_since, 'name', owner_user.name, 'email', owner_user.email, 'image', owner_user.image) END AS owner,
            CASE WHEN membership.member_id IS NULL THEN NULL ELSE json_build_object(
              'id', membership.member_id, 'organization_id', membership.organization_id, 'user_id', membership.user_id, 'role', membership.role,
              'status', membership.status, 'created_at', membership.member_since, 'name', member_user.name, 'email', member_user.email,
              'image', member_user.image) END AS current_member,
            membership.teams
       FROM caller
       LEFT JOIN organizations o ON o.id = caller.active_organization_id AND caller.member_id IS NOT NULL
       LEFT JOIN organization_owners owner ON owner.organization_id = o.id
       LEFT JOIN users owner_user ON owner_user.id = owner.user_id
       LEFT JOIN user_memberships membership ON membership.user_id = caller.user_id AND membership.organization_id = o.id
       LEFT JOIN users member_user ON member_user.id = membership.user_id`,
    tokenBatchParams(batch),
  );
  return rows;
}

/** Deletes the organization's row (its ON DELETE CASCADE keys take the tables that have one); its name, or undefined when there was none. */
export async function deleteOrganization(tx: Queryable, id: string): Promise<string | undefined> {
  const { rows } = await tx.query<{ name: string }>('DELETE FROM organizations WHERE id = $1 RETURNING name', [id]);
  return rows[0]?.name;
}
