// User accounts (sign-up, sign-in, sign-out, GET /v1/me, bootstrap): what other modules may use of
// them, and how the module joins an app. Sessions themselves are the membership core's.
import type { FastifyInstance } from 'fastify';
import type { Queryable } from '../../db/database.ts';
import { createDesktopSignIn, type DesktopSignInDeps } from './desktop-sign-in.ts';
import { desktopSignInRoutes } from './desktop-sign-in-routes.ts';
import { userRoutes } from './routes.ts';
import { createUserService, type UserService, type UserServiceDeps } from './service.ts';
import { requireDependencies } from '../../platform/dependencies.ts';

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
}

/**
 * Whether the account may use its password (sign-in, re-authentication): an organization may require
 * SSO of its members. The app hands in the SSO module's rule; users never imports SSO.
 */
export type PasswordSignInPolicy = (user: { id: string; email: string }) => Promise<PasswordSignInVerdict>;
export type PasswordSignInVerdict =
  /** `breakGlassOrganizationId`: an organization that requires SSO lets its owner in with the password, and its log flags the sign-in. */
  { allowed: true; breakGlassOrganizationId?: string } | { allowed: false; organizationId: string; domain: string };

export { createUserDirectory, createUserService, type UserService, type UserServiceDeps } from './service.ts';
export { bootstrapBodySchema, meSchema, passwordSchema, toUser, userSchema } from './schemas.ts';

/** Registers bootstrap, sign-up/in/out, the desktop app's sign-in and GET /v1/me; the service is returned for the CLI. */
export async function registerUsers(
  app: FastifyInstance,
  deps: UserServiceDeps & Pick<DesktopSignInDeps, 'redirectUriAllowed'>,
): Promise<UserService> {
  requireDependencies('users', deps, [
    'db',
    'rateLimiter',
    'signUpEnabled',
    'signUpAttemptsPerAddress',
    'membership',
    'organizations',
    'passwordSignInPolicy',
    'redirectUriAllowed',
  ]);
  const users = createUserService(deps);
  await app.register(userRoutes, { users });
  await app.register(desktopSignInRoutes, { desktopSignIn: createDesktopSignIn(deps) });
  return users;
}
