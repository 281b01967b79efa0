// SQL of users and their sessions.
import type { Queryable } from '../../db/database.ts';
import type { UserRecord } from './index.ts';

export async function insertUser(
  db: Queryable,
  user: { id: string; email: string; name: string; passwordHash: string | null; isInstanceAdmin?: boolean; image?: string },
): Promise<UserRecord | undefined> {
  const { rows } = await db.query<UserRecord>(
    `INSERT INTO users (id, email, name, image, password_hash, is_instance_admin)
     VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT DO NOTHING
     RETURNING *`,
    [user.id, user.email, user.name, user.image ?? '', user.passwordHash, user.isInstanceAdmin ?? false],
  );
  return rows[0];
}

export async function findUserByEmail(db: Queryable, email: string): Promise<UserRecord | undefined> {
  const { rows } = await db.query<UserRecord>('SELECT * FROM users WHERE lower(email) = lower($1)', [email]);
  return rows[0];
}

/** Sets a user's name and e-mail (a no-op when both are as given); an e-mail another user has is a unique violation. */
export async function updateUserNameAndEmail(db: Queryable, id: string, input: { name: string; email: string }): Promise<void> {
  await db.query(
    `UPDATE users SET name = $2, email = $3, updated_at = now()
      WHERE id = $1 AND (name IS DISTINCT FROM $2 OR email IS DISTINCT FROM $3)`,
    [id, input.name, input.email],
  );
}

export async function findUserById(db: Queryable, id: string): Promise<UserRecord | undefined> {
  const { rows } = await db.query<UserRecord>('SELECT * FROM users WHERE id = $1', [id]);
  return rows[0];
}

export async function insertSession(
  db: Queryable,
  session: { id: string; userId: string; tokenHash: string; activeOrganizationId: string | null; ttlHours: number },
): Promise<void> {
  await db.query(
    `INSERT INTO sessions (id, user_id, token_hash, active_organization_id, expires_at)
     VALUES ($1, $2, $3, $4, now() + make_interval(secs => $5 * 3600))`,
    [session.id, session.userId, session.tokenHash, session.activeOrganizationId, session.ttlHours],
  );
}

export async function revokeSession(db: Queryable, sessionId: string): Promise<void> {
  await db.query('UPDATE sessions SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL', [sessionId]);
}

export async function revokeUserSessions(db: Queryable, userId: string): Promise<number> {
  const { rowCount } = await db.query('UPDATE sessions SET revoked_at = now() WHERE user_id = $1 AND revoked_at IS NULL', [userId]);
  return rowCount ?? 0;
}

export async function setSessionOrganization(db: Queryable, sessionId: string, organizationId: string): Promise<void> {
  await db.query('UPDATE sessions SET active_organization_id = $2 WHERE id = $1', [sessionId, organizationId]);
}

/**
 * Makes the organization the session's active one unless the session already has a usable one
 * (an organization its user is an active member of). True when it changed.
 */
export async function setSessionOrganizationIfUnusable(db: Queryable, sessionId: string, organizationId: string): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE sessions s SET active_organization_id = $2
      WHERE s.id = $1
        AND (s.active_organization_id IS NULL OR NOT EXISTS (
          SELECT 1 FROM members m
           WHERE m.organization_id = s.active_organization_id AND m.user_id = s.user_id AND m.status = 'active'))`,
    [sessionId, organizationId],
  );
  return rowCount === 1;
}
