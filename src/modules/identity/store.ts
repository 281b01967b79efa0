// SQL of the membership core's members table (who a token belongs to: caller-store.ts).
import type { Queryable } from '../../db/database.ts';
import type { AuthMethod, Role } from '../../http/caller.ts';
import type { MemberRecord, MemberStatus, RemovedBy, SessionRef } from './contracts.ts';
import * as copies from './membership-copy-store.ts';

export type MemberLock = Pick<MemberRecord, 'id' | 'role' | 'status'>;

/** What a member holds beyond their built-in role: the roles of their teams, and the keys of the custom roles among theirs. */
export interface MemberGrants {
  /** Null when there is no membership to read them from. */
  team_roles: string[] | null;
  custom_permissions: string[] | null;
}

// What member `m` holds beyond a built-in role: the roles of their teams, and the keys of the custom roles
// among the member's own and their teams'. Joined and gathered (grouped by the member) in the statement
// that reads the member, so a change of a role's keys counts on the next request; a join, not a correlated
// subquery, which Citus does not run over a reference table (roles).
const memberGrantsFrom = `members m
    LEFT JOIN team_members tm ON tm.organization_id = m.organization_id AND tm.member_id = m.id
    LEFT JOIN teams t ON t.organization_id = tm.organization_id AND t.id = tm.team_id
    LEFT JOIN roles r ON r.organization_id = m.organization_id AND (r.id = m.role OR r.id = t.role_id)`;
const memberGrantColumns = `array_remove(array_agg(DISTINCT t.role_id), NULL) AS team_roles,
  string_to_array(string_agg(array_to_string(r.permissions, ','), ','), ',') AS custom_permissions`;
const memberGrantsGroup = 'GROUP BY m.organization_id, m.id, m.role, m.status';

const memberColumns = `m.id, m.organization_id, m.user_id, m.role, m.status, m.created_at, u.name, u.email, u.image`;

/** True when the member was added; false when the user is a member of the organization already. */
export async function insertMember(
  db: Queryable,
  member: { id: string; organizationId: string; userId: string; role: Role },
): Promise<boolean> {
  const { rows } = await db.query<{ status: MemberStatus; created_at: Date }>(
    `INSERT INTO members (id, organization_id, user_id, role) VALUES ($1, $2, $3, $4)
     ON CONFLICT (organization_id, user_id) DO NOTHING
     RETURNING status, created_at`,
    [member.id, member.organizationId, member.userId, member.role],
  );
  if (!rows[0]) return false;
  await copies.writeMembershipCopy(db, { ...member, status: rows[0].status, createdAt: rows[0].created_at });
  if (member.role === 'owner') await copies.copyOrganizationOwner(db, member.organizationId);
  // A member again (an invitation accepted, SCIM provisioning): an earlier removal no longer stands.
  await db.query('DELETE FROM member_removals WHERE organization_id = $1 AND user_id = $2', [
    member.organizationId,
    member.userId,
  ]);
  return true;
}

export async function recordRemoval(
  db: Queryable,
  organizationId: string,
  userId: string,
  removedBy: RemovedBy,
): Promise<void> {
  await db.query(
    `INSERT INTO member_removals (organization_id, user_id, removed_by) VALUES ($1, $2, $3)
     ON CONFLICT (organization_id, user_id) DO UPDATE SET removed_by = EXCLUDED.removed_by, removed_at = EXCLUDED.removed_at`,
    [organizationId, userId, removedBy],
  );
}

export async function findRemoval(
  db: Queryable,
  organizationId: string,
  userId: string,
): Promise<{ removedBy: RemovedBy; removedAt: Date } | undefined> {
  const { rows } = await db.query<{ removed_by: RemovedBy; removed_at: Date }>(
    'SELECT removed_by, removed_at FROM member_removals WHERE organization_id = $1 AND user_id = $2',
    [organizationId, userId],
  );
  return rows[0] && { removedBy: rows[0].removed_by, removedAt: rows[0].removed_at };
}

export async function findMember(
  db: Queryable,
  organizationId: string,
  memberId: string,
): Promise<MemberRecord | undefined> {
  const { rows } = await db.query<MemberRecord>(
    `SELECT ${memberColumns} FROM members m JOIN users u ON u.id = m.user_id
      WHERE m.organization_id = $1 AND m.id = $2`,
    [organizationId, memberId],
  );
  return rows[0];
}

export async function findMemberByUser(
  db: Queryable,
  organizationId: string,
  userId: string,
): Promise<MemberRecord | undefined> {
  const { rows } = await db.query<MemberRecord>(
    `SELECT ${memberColumns} FROM members m JOIN users u ON u.id = m.user_id
      WHERE m.organization_id = $1 AND m.user_id = $2`,
    [organizationId, userId],
  );
  return rows[0];
}

// The three changes of a member below change its copies (membership-copy-store.ts) in the same
// transaction: the member row first (its organization's), then the person's copy, then the owner's.

export async function setMemberRole(
  db: Queryable,
  organizationId: string,
  memberId: string,
  role: Role,
): Promise<void> {
  const { rows } = await db.query<{ user_id: string }>(
    'UPDATE members SET role = $3 WHERE organization_id = $1 AND id = $2 RETURNING user_id',
    [organizationId, memberId, role],
  );
  if (!rows[0]) return;
  await copies.updateMembershipCopy(db, rows[0].user_id, organizationId, { role });
  // To or from owner (a transfer demotes one and promotes the other): the owner's copy follows.
  await copies.copyOrganizationOwner(db, organizationId);
}

/** The member's user id, or undefined when there is no such member. */
export async function setMemberStatus(
  db: Queryable,
  organizationId: string,
  memberId: string,
  status: MemberStatus,
): Promise<string | undefined> {
  const { rows } = await db.query<{ user_id: string; role: Role }>(
    'UPDATE members SET status = $3 WHERE organization_id = $1 AND id = $2 RETURNING user_id, role',
    [organizationId, memberId, status],
  );
  if (!rows[0]) return undefined;
  await copies.updateMembershipCopy(db, rows[0].user_id, organizationId, { status });
  if (rows[0].role === 'owner') await copies.copyOrganizationOwner(db, organizationId);
  return rows[0].user_id;
}

/** The removed member's user id and e-mail, or undefined when there was no such member. */
export async function deleteMember(
  db: Queryable,
  organizationId: string,
  memberId: string,
): Promise<{ userId: string; email: string } | undefined> {
  const { rows } = await db.query<{ user_id: string; email: string; role: Role }>(
    `DELETE FROM members m USING users u
      WHERE m.organization_id = $1 AND m.id = $2 AND u.id = m.user_id
      RETURNING m.user_id, u.email, m.role`,
    [organizationId, memberId],
  );
  if (!rows[0]) return undefined;
  await copies.deleteMembershipCopy(db, rows[0].user_id, organizationId);
  if (rows[0].role === 'owner') await copies.copyOrganizationOwner(db, organizationId);
  return { userId: rows[0].user_id, email: rows[0].email };
}

/**
 * The member, share-locked until the transaction ends: a change of their role or status, or their
 * removal, waits for it, and one in progress is waited for and then seen (undefined once removed).
 */
export async function findMemberForShare(
  db: Queryable,
  organizationId: string,
  memberId: string,
): Promise<(MemberLock & MemberGrants) | undefined> {
  const { rows } = await db.query<MemberLock>(
    'SELECT id, role, status FROM members WHERE organization_id = $1 AND id = $2 FOR SHARE',
    [organizationId, memberId],
  );
  if (!rows[0]) return undefined;
  // What it holds, read once it is locked (a row lock and an aggregate do not go in one statement).
  return findMembershipById(db, organizationId, memberId);
}

/** The user's member record in the organization with what it holds (requireMembership's read). */
export async function findMembershipByUser(
  db: Queryable,
  organizationId: string,
  userId: string,
): Promise<(MemberLock & MemberGrants) | undefined> {
  const { rows } = await db.query<MemberLock & MemberGrants>(
    `SELECT m.id, m.role, m.status, ${memberGrantColumns}
       FROM ${memberGrantsFrom} WHERE m.organization_id = $1 AND m.user_id = $2 ${memberGrantsGroup}`,
    [organizationId, userId],
  );
  return rows[0];
}

/** The member's record with what it holds. */
export async function findMembershipById(
  db: Queryable,
  organizationId: string,
  memberId: string,
): Promise<(MemberLock & MemberGrants) | undefined> {
  const { rows } = await db.query<MemberLock & MemberGrants>(
    `SELECT m.id, m.role, m.status, ${memberGrantColumns}
       FROM ${memberGrantsFrom} WHERE m.organization_id = $1 AND m.id = $2 ${memberGrantsGroup}`,
    [organizationId, memberId],
  );
  return rows[0];
}

/** Of the given ids, those that are members of the organization. */
export async function existingMemberIds(db: Queryable, organizationId: string, ids: string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const { rows } = await db.query<{ id: string }>(
    'SELECT id FROM members WHERE organization_id = $1 AND id = ANY($2::text[])',
    [organizationId, ids],
  );
  return rows.map((row) => row.id);
}

/** Of the given ids, those that are members of the organization, share-locked (in id order) until the transaction ends. */
export async function lockExistingMembers(db: Queryable, organizationId: string, ids: string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const { rows } = await db.query<{ id: string }>(
    'SELECT id FROM members WHERE organization_id = $1 AND id = ANY($2::text[]) ORDER BY id FOR SHARE',
    [organizationId, ids],
  );
  return rows.map((row) => row.id);
}

export async function listMembers(
  db: Queryable,
  organizationId: string,
  limit: number,
  after?: string,
): Promise<MemberRecord[]> {
  const { rows } = await db.query<MemberRecord>(
    `SELECT ${memberColumns} FROM members m JOIN users u ON u.id = m.user_id
      WHERE m.organization_id = $1 AND ($2::text IS NULL OR m.id > $2)
      ORDER BY m.id LIMIT $3`,
    [organizationId, after ?? null, limit],
  );
  return rows;
}

export async function insertSession(
  db: Queryable,
  session: {
    id: string;
    userId: string;
    tokenHash: string;
    activeOrganizationId: string | null;
    ttlHours: number;
    authMethod: AuthMethod;
    authenticatedAt?: Date;
  },
): Promise<void> {
  const params = [
    session.id,
    session.userId,
    session.tokenHash,
    session.activeOrganizationId,
    session.ttlHours,
    session.authMethod,
  ];
  // The database's clock unless a time is handed on; not COALESCE($7, now()): Citus refuses now() inside
  // COALESCE (docs/scaling.md).
  const authenticatedAt = session.authenticatedAt === undefined ? 'now()' : '$7';
  await db.query(
    `INSERT INTO sessions (id, user_id, token_hash, active_organization_id, expires_at, authenticated_at, auth_method)
     VALUES ($1, $2, $3, $4, now() + make_interval(secs => $5 * 3600), ${authenticatedAt}, $6)`,
    session.authenticatedAt === undefined ? params : [...params, session.authenticatedAt],
  );
}

/** Records that the session's person has just authenticated again; the new time, or undefined when the session is no longer valid. */
export async function markSessionAuthenticated(
  db: Queryable,
  session: SessionRef,
  method: AuthMethod,
): Promise<Date | undefined> {
  const { rows } = await db.query<{ authenticated_at: Date }>(
    `UPDATE sessions SET authenticated_at = now(), auth_method = $2
      WHERE user_id = $3 AND id = $1 AND revoked_at IS NULL AND expires_at > now()
      RETURNING authenticated_at`,
    [session.id, method, session.userId],
  );
  return rows[0]?.authenticated_at;
}

export async function revokeSession(db: Queryable, session: SessionRef): Promise<void> {
  await db.query('UPDATE sessions SET revoked_at = now() WHERE user_id = $2 AND id = $1 AND revoked_at IS NULL', [
    session.id,
    session.userId,
  ]);
}

export async function revokeUserSessions(db: Queryable, userId: string): Promise<number> {
  const { rowCount } = await db.query(
    'UPDATE sessions SET revoked_at = now() WHERE user_id = $1 AND revoked_at IS NULL',
    [userId],
  );
  return rowCount ?? 0;
}

/**
 * Ends the password sessions of the organization's members, other than its owner, whose e-mail is in
 * `domain` (the part after the last @, compared in lower case); the number ended.
 */
export async function revokePasswordSessionsInDomain(
  db: Queryable,
  organizationId: string,
  domain: string,
): Promise<number> {
  // The people first, then their sessions: sessions are a person's (distributed by user), members an
  // organization's, so the two are not joined row by row.
  const { rowCount } = await db.query(
    `UPDATE sessions SET revoked_at = now()
      WHERE user_id IN (SELECT m.user_id FROM members m JOIN users u ON u.id = m.user_id
                         WHERE m.organization_id = $1 AND m.role <> 'owner' AND lower(substring(u.email from '[^@]*$')) = $2)
        AND auth_method = 'password' AND revoked_at IS NULL AND expires_at > now()`,
    [organizationId, domain],
  );
  return rowCount ?? 0;
}

export async function setSessionOrganization(
  db: Queryable,
  session: SessionRef,
  organizationId: string,
): Promise<void> {
  await db.query('UPDATE sessions SET active_organization_id = $2 WHERE user_id = $3 AND id = $1', [
    session.id,
    organizationId,
    session.userId,
  ]);
}

/**
 * Makes the organization the session's active one unless the session already has a usable one
 * (an organization its user is an active member of). True when it changed.
 */
export async function setSessionOrganizationIfUnusable(
  db: Queryable,
  session: SessionRef,
  organizationId: string,
): Promise<boolean> {
  // The person by the parameter, not by the session row: correlated, the planner may read the
  // memberships of everyone once and hash them (a "hashed SubPlan"), which on a distributed database
  // reads every node.
  const { rowCount } = await db.query(
    `UPDATE sessions s SET active_organization_id = $2
      WHERE s.user_id = $3 AND s.id = $1
        AND (s.active_organization_id IS NULL OR NOT EXISTS (
          SELECT 1 FROM user_memberships m
           WHERE m.user_id = $3 AND m.organization_id = s.active_organization_id AND m.status = 'active'))`,
    [session.id, organizationId, session.userId],
  );
  return rowCount === 1;
}
