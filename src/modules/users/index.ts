// Users and their sessions: what other modules may use of them.
import type { Queryable } from '../../db/database.ts';

export interface UserRecord {
  id: string;
  email: string;
  name: string;
  is_instance_admin: boolean;
  created_at: Date;
}

export interface UserDirectory {
  getUser(userId: string): Promise<UserRecord | undefined>;
  findUserByEmail(email: string): Promise<UserRecord | undefined>;
  /** Creates a user without a password (they sign in through SSO) unless one with the email exists. */
  ensureUser(tx: Queryable, input: { email: string; name: string }): Promise<UserRecord>;
  /** Sets a user's name and e-mail for a directory authoritative for the account; 409 email_taken when another account has it. */
  updateUserNameAndEmail(tx: Queryable, userId: string, input: { name: string; email: string }): Promise<void>;
  /** Ends every session of the user; the number ended. */
  revokeUserSessions(tx: Queryable, userId: string): Promise<number>;
}
