// SQL of the copies of memberships kept where a distributed database reads them in one step (migration
// 1000): each person's copy of their memberships (user_memberships, beside their sessions) and each
// organization's owner (organization_owners, a global table). store.ts calls these in the transaction that changes
// members; the teams module changes a member's teams through the membership core (setMemberTeams).
import type { Queryable } from '../../db/database.ts';
import type { Role } from '../../http/caller.ts';
import type { MemberStatus } from './contracts.ts';

/** The copy follows the member row just written, whatever an earlier copy said. */
export async function writeMembershipCopy(
  db: Queryable,
  member: { userId: string; organizationId: string; id: string; role: Role; status: MemberStatus; createdAt: Date },
): Promise<void> {
  await db.query(
    `INSERT INTO user_memberships (user_id, organization_id, member_id, role, status, member_since) VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (user_id, organization_id) DO UPDATE
       SET member_id = EXCLUDED.member_id, role = EXCLUDED.role, status = EXCLUDED.status, member_since = EXCLUDED.member_since, teams = '[]'`,
    [member.userId, member.organizationId, member.id, member.role, member.status, member.createdAt],
  );
}

export async function updateMembershipCopy(
  db: Queryable,
  userId: string,
  organizationId: string,
  change: { role: Role } | { status: MemberStatus },
): Promise<void> {
  const [column, value] = 'role' in change ? ['role', change.role] : ['status', change.status];
  await db.query(`UPDATE user_memberships SET ${column} = $3 WHERE user_id = $1 AND organization_id = $2`, [
    userId,
    organizationId,
    value,
  ]);
}

export async function deleteMembershipCopy(db: Queryable, userId: string, organizationId: string): Promise<void> {
  await db.query('DELETE FROM user_memberships WHERE user_id = $1 AND organization_id = $2', [userId, organizationId]);
}

/** Copies the organization's owner (none while a transfer is half done) into organization_owners. */
export async function copyOrganizationOwner(db: Queryable, organizationId: string): Promise<void> {
  const { rows } = await db.query<{ id: string; user_id: string; status: MemberStatus; created_at: Date }>(
    "SELECT id, user_id, status, created_at FROM members WHERE organization_id = $1 AND role = 'owner'",
    [organizationId],
  );
  const owner = rows[0];
  if (!owner) {
    await db.query('DELETE FROM organization_owners WHERE organization_id = $1', [organizationId]);
    return;
  }
  await db.query(
    `INSERT INTO organization_owners (organization_id, member_id, user_id, status, member_since) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (organization_id) DO UPDATE
       SET member_id = EXCLUDED.member_id, user_id = EXCLUDED.user_id, status = EXCLUDED.status, member_since = EXCLUDED.member_since`,
    [organizationId, owner.id, owner.user_id, owner.status, owner.created_at],
  );
}

/**
 * Replaces the member's copy of their teams with what `readTeams` returns, read after the copy is
 * locked: two changes of one member's teams then write one after the other, each with what the other
 * committed, instead of the second writing a list read before the first committed.
 */
export async function setMemberTeamsCopy(
  db: Queryable,
  organizationId: string,
  memberId: string,
  readTeams: () => Promise<unknown[]>,
): Promise<void> {
  const member = await db.query<{ user_id: string }>(
    'SELECT user_id FROM members WHERE organization_id = $1 AND id = $2',
    [organizationId, memberId],
  );
  const userId = member.rows[0]?.user_id;
  if (!userId) return;
  await db.query('SELECT 1 FROM user_memberships WHERE user_id = $1 AND organization_id = $2 FOR UPDATE', [
    userId,
    organizationId,
  ]);
  await db.query('UPDATE user_memberships SET teams = $3::jsonb WHERE user_id = $1 AND organization_id = $2', [
    userId,
    organizationId,
    JSON.stringify(await readTeams()),
  ]);
}

/**
 * Erasing an organization: its owner's copy (organization_owners has no foreign key, migration 1003). The
 * people's copies (user_memberships) and the sessions' active organization go with the organization's row,
 * by their foreign keys (ON DELETE CASCADE, SET NULL): a statement here would span every person.
 */
export async function eraseOrganizationCopies(db: Queryable, organizationId: string): Promise<void> {
  await db.query('DELETE FROM organization_owners WHERE organization_id = $1', [organizationId]);
}
