// SQL of invitations.
import type { Role } from '../../http/caller.ts';
import type { Queryable } from '../../db/database.ts';
import { tokenCondition, type TokenLookup } from '../../platform/tokens.ts';

/** How long an invitation (and a resent one, from the resend) can be accepted. */
const invitationLifetime = "interval '7 days'";

export interface InvitationRow {
  id: string;
  organization_id: string;
  email: string;
  role: Role;
  expires_at: Date;
  accepted_at: Date | null;
  created_at: Date;
}

/**
 * Stores an invitation, unless the address belongs to a member of the organization (of any status):
 * accepting would fail, so nothing is stored and the result is undefined.
 */
export async function insertInvitationUnlessMember(
  db: Queryable,
  invitation: {
    id: string;
    organizationId: string;
    email: string;
    role: Role;
    tokenHash: string;
    invitedBy: string | null;
  },
): Promise<InvitationRow | undefined> {
  const { rows } = await db.query<InvitationRow>(
    `INSERT INTO invitations (id, organization_id, email, role, token_hash, invited_by, expires_at)
     SELECT $1, $2, $3, $4, $5, $6, now() + ${invitationLifetime}
      WHERE NOT EXISTS (
        SELECT 1 FROM members m JOIN users u ON u.id = m.user_id
         WHERE m.organization_id = $2 AND lower(u.email) = lower($3))
     RETURNING id, organization_id, email, role, expires_at, accepted_at, created_at`,
    [
      invitation.id,
      invitation.organizationId,
      invitation.email,
      invitation.role,
      invitation.tokenHash,
      invitation.invitedBy,
    ],
  );
  return rows[0];
}

/** The organization of the invitation with this token hash, whatever its state (unlocked). */
export async function findInvitationOrganization(db: Queryable, lookup: TokenLookup): Promise<string | undefined> {
  const { where, params } = tokenCondition(lookup, 'token_hash', 'organization_id');
  const { rows } = await db.query<{ organization_id: string }>(
    `SELECT organization_id FROM invitations WHERE ${where}`,
    params,
  );
  return rows[0]?.organization_id;
}

/**
 * Locks the invitation row so two accepts of one invitation cannot both succeed. `expired` is read
 * against the clock, not the transaction's start (now()): an invitation ended (revoked, or its
 * sender removed) by a transaction that began after this one did carries an end later than this
 * transaction's now(), and must still count as ended once the lock is had.
 */
export async function findInvitationForUpdate(
  db: Queryable,
  lookup: TokenLookup,
): Promise<(InvitationRow & { expired: boolean }) | undefined> {
  const { where, params } = tokenCondition(lookup, 'token_hash', 'organization_id');
  const { rows } = await db.query<InvitationRow & { expired: boolean }>(
    `SELECT id, organization_id, email, role, expires_at, accepted_at, created_at, expires_at <= clock_timestamp() AS expired
       FROM invitations WHERE ${where} FOR UPDATE`,
    params,
  );
  return rows[0];
}

export async function markInvitationAccepted(db: Queryable, organizationId: string, id: string): Promise<void> {
  await db.query('UPDATE invitations SET accepted_at = now() WHERE organization_id = $1 AND id = $2', [
    organizationId,
    id,
  ]);
}

/**
 * The organization's pending invitations (not accepted, not expired, not ended: an ended one is
 * expired, see below), newest first: ids are time-ordered, so the page continues with ids below `after`.
 */
export async function listPendingInvitations(
  db: Queryable,
  organizationId: string,
  limit: number,
  after?: string,
): Promise<InvitationRow[]> {
  const { rows } = await db.query<InvitationRow>(
    `SELECT id, organization_id, email, role, expires_at, accepted_at, created_at FROM invitations
      WHERE organization_id = $1 AND accepted_at IS NULL AND expires_at > now() AND ($2::text IS NULL OR id < $2)
      ORDER BY id DESC LIMIT $3`,
    [organizationId, after ?? null, limit],
  );
  return rows;
}

/**
 * Ends one pending invitation of the organization (expired, as below). False when it is not pending
 * there. Pending is judged once the row is had, against the time of a statement begun after that: an
 * end committed meanwhile counts, so of two revocations at once only one ends the invitation and the
 * other finds nothing pending. Two statements, in the caller's transaction, because the clock of the
 * one that waited (clock_timestamp()) is a volatile function, which Citus refuses in an UPDATE's WHERE.
 */
/** The ended invitation's address, or undefined when it was not pending. */
export async function endPendingInvitation(
  tx: Queryable,
  organizationId: string,
  id: string,
): Promise<string | undefined> {
  await tx.query('SELECT 1 FROM invitations WHERE organization_id = $1 AND id = $2 FOR UPDATE', [organizationId, id]);
  const { rows } = await tx.query<{ email: string }>(
    `UPDATE invitations SET expires_at = now()
      WHERE organization_id = $1 AND id = $2 AND accepted_at IS NULL AND expires_at > statement_timestamp()
      RETURNING email`,
    [organizationId, id],
  );
  return rows[0]?.email;
}

/** Ends the pending invitations of an organization to an address (they are expired, not deleted). */
export async function expirePendingInvitations(db: Queryable, organizationId: string, email: string): Promise<void> {
  await db.query(
    `UPDATE invitations SET expires_at = now()
      WHERE organization_id = $1 AND lower(email) = lower($2) AND accepted_at IS NULL AND expires_at > now()`,
    [organizationId, email],
  );
}

/** Ends the pending invitations a user sent on behalf of an organization (expired, as above). */
export async function expireInvitationsSentBy(db: Queryable, organizationId: string, userId: string): Promise<void> {
  await db.query(
    `UPDATE invitations SET expires_at = now()
      WHERE organization_id = $1 AND invited_by = $2 AND accepted_at IS NULL AND expires_at > now()`,
    [organizationId, userId],
  );
}

/**
 * Gives a pending invitation of the organization a new token and a new lifetime: the old token stops
 * working, since only the new hash is kept. It then speaks for the one who resent it (`invited_by`), who
 * is the one the e-mail names. Undefined when it is not pending there, judged as in
 * endPendingInvitation (locked first, then against a statement begun after the lock was had).
 */
export async function renewPendingInvitation(
  tx: Queryable,
  organizationId: string,
  id: string,
  renewal: { tokenHash: string; sentBy: string | null },
): Promise<InvitationRow | undefined> {
  await tx.query('SELECT 1 FROM invitations WHERE organization_id = $1 AND id = $2 FOR UPDATE', [organizationId, id]);
  const { rows } = await tx.query<InvitationRow>(
    `UPDATE invitations SET token_hash = $3, invited_by = $4, expires_at = now() + ${invitationLifetime}
      WHERE organization_id = $1 AND id = $2 AND accepted_at IS NULL AND expires_at > statement_timestamp()
      RETURNING id, organization_id, email, role, expires_at, accepted_at, created_at`,
    [organizationId, id, renewal.tokenHash, renewal.sentBy],
  );
  return rows[0];
}
