// What other modules use of user accounts (index.ts exports it) and what the module's own files share: in
// its own file, so that index.ts and the service both import it and neither imports the other.
import type { Queryable } from '../../db/database.ts';

export interface UserRecord {
  id: string;
  email: string;
  name: string;
  image: string;
  /** Null for an account without a password (it signs in through SSO). */
  password_hash: string | null;
  is_instance_admin: boolean;
  /**
   * When orgplane verified that the holder receives mail at `email`; null when it never did (nothing
   * sets it yet: orgplane sends no mail). SSO sign-in may take a verified account as the person's.
   */
  email_verified_at: Date | null;
  created_at: Date;
}

export interface UserDirectory {
  getUser(userId: string, tx?: Queryable): Promise<UserRecord | undefined>;
  findUserByEmail(email: string): Promise<UserRecord | undefined>;
  /** Creates a user without a password (they sign in through SSO) unless one with the email exists. */
  ensureUser(tx: Queryable, input: { email: string; name: string }): Promise<UserRecord>;
  /**
   * Creates a user without a password (they sign in through SSO); undefined when an account has the
   * e-mail already (one made since the caller looked, say), which the caller must judge before using it.
   */
  createUserWithoutPassword(tx: Queryable, input: { email: string; name: string }): Promise<UserRecord | undefined>;
  /** Sets a user's name and e-mail for a directory authoritative for the account; 409 email_taken when another account has it. */
  updateUserNameAndEmail(tx: Queryable, userId: string, input: { name: string; email: string }): Promise<void>;
  /** The instance administrators' ids, their rows locked until `tx` ends (who administers changes one at a time). */
  lockInstanceAdmins(tx: Queryable): Promise<string[]>;
  /** Makes the person an instance administrator or not; false when there is no such person. */
  setInstanceAdmin(tx: Queryable, userId: string, isAdmin: boolean): Promise<boolean>;
}

/**
 * Whether the account may use its password (sign-in, re-authentication): an organization may require
 * SSO of its members. The app hands in the SSO module's rule; users never imports SSO.
 */
export type PasswordSignInPolicy = (user: { id: string; email: string }) => Promise<PasswordSignInVerdict>;
export type PasswordSignInVerdict =
  /** `breakGlassOrganizationId`: an organization that requires SSO lets its owner in with the password, and its log flags the sign-in. */
  { allowed: true; breakGlassOrganizationId?: string } | { allowed: false; organizationId: string; domain: string };
