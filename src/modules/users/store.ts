// SQL of user accounts.
import type { Queryable } from '../../db/database.ts';
import type { UserRecord } from './contracts.ts';

export async function insertUser(
  db: Queryable,
  user: {
    id: string;
    email: string;
    name: string;
    passwordHash: string | null;
    isInstanceAdmin?: boolean;
    image?: string;
  },
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
export async function updateUserNameAndEmail(
  db: Queryable,
  id: string,
  input: { name: string; email: string },
): Promise<void> {
  await db.query(
    `UPDATE users SET name = $2, email = $3, updated_at = now()
      WHERE id = $1 AND (name IS DISTINCT FROM $2 OR email IS DISTINCT FROM $3)`,
    [id, input.name, input.email],
  );
}

/**
 * The instance administrators' ids, oldest account first, each row locked until `tx` ends: changes to
 * who administers the instance run one after another, so two removals cannot leave nobody.
 */
export async function lockInstanceAdmins(tx: Queryable): Promise<string[]> {
  const { rows } = await tx.query<{ id: string }>(
    'SELECT id FROM users WHERE is_instance_admin ORDER BY created_at, id FOR UPDATE',
  );
  return rows.map((row) => row.id);
}

export async function setInstanceAdmin(tx: Queryable, userId: string, isAdmin: boolean): Promise<boolean> {
  const { rowCount } = await tx.query('UPDATE users SET is_instance_admin = $2, updated_at = now() WHERE id = $1', [
    userId,
    isAdmin,
  ]);
  return (rowCount ?? 0) > 0;
}

export async function findUserById(db: Queryable, id: string): Promise<UserRecord | undefined> {
  const { rows } = await db.query<UserRecord>('SELECT * FROM users WHERE id = $1', [id]);
  return rows[0];
}
