// Users and their sessions: bootstrap, sign-up, sign-in (with its limits), sign-out and the signed-in
// user; and what other modules use of users (UserDirectory).
import type { Database, Queryable } from '../../db/database.ts';
import { isUniqueViolation } from '../../db/errors.ts';
import { lockUntilCommit } from '../../db/locks.ts';
import type { Caller } from '../../http/caller.ts';
import { type ApiError, rateLimited, unauthorized } from '../../http/errors.ts';
import { idPrefixes, newId } from '../../platform/ids.ts';
import { decoyPasswordHash, hashPassword, verifyPassword } from '../../platform/passwords.ts';
import type { RateLimiter } from '../../platform/rate-limiter.ts';
import {
  redacted,
  systemContext,
  writeTransaction,
  type CallerContext,
  type WriteContext,
  type WriteTransaction,
} from '../../platform/write-context.ts';
import {
  requireSignedInUser,
  sessionOf,
  type MembershipAuthorization,
  type MembershipSessions,
} from '../identity/index.ts';
import type { OrganizationDirectory } from '../organizations/index.ts';
import type { PasswordSignInPolicy, UserDirectory } from './contracts.ts';
import * as store from './store.ts';
import { userErrors } from './error-codes.ts';

// Password guessing is limited across all processes, in three counters (see signIn): one client
// address guessing one account, one address guessing many accounts, and every address together
// guessing one account. The first is the tight one, so that a stranger's ten wrong guesses lock out
// the stranger, not the account's owner signing in from elsewhere; only guessing spread over many
// addresses reaches the account's own, higher limit. Failed attempts count; successful sign-ins,
// and attempts already refused by a limit, do not.
const signInLimits = { perAccountFromAddress: 10, perAddress: 50, perAccount: 100, windowSeconds: 15 * 60 };

// Sign-up answers 409 email_taken for a registered address, so every attempt, whatever its answer,
// is counted, in fixed one-hour windows: per client address (SIGN_UP_ATTEMPTS_PER_ADDRESS, so a
// launch behind one NAT can raise it) and per target address (a few tries at one address are typos and
// retries; more are probing it). See the README's "Sign-up and account enumeration".
export const signUpLimits = { perTargetAddress: 5, windowSeconds: 60 * 60 };

/** What other modules use of users and sessions (UserDirectory). */
export function createUserDirectory(deps: { db: Database }) {
  const { db } = deps;
  return {
    getUser: (userId: string, tx: Queryable = db) => store.findUserById(tx, userId),
    findUserByEmail: (email: string) => store.findUserByEmail(db, email),
    /** Creates a user without a password (they sign in through SSO) unless one with the email exists. */
    async ensureUser(tx: Queryable, input: { email: string; name: string }) {
      const existing = await store.findUserByEmail(tx, input.email);
      if (existing) return existing;
      const created = await store.insertUser(tx, {
        id: newId(idPrefixes.user),
        email: input.email,
        name: input.name,
        passwordHash: null,
      });
      return created ?? (await store.findUserByEmail(tx, input.email))!;
    },
    createUserWithoutPassword: (tx: Queryable, input: { email: string; name: string }) =>
      store.insertUser(tx, { id: newId(idPrefixes.user), email: input.email, name: input.name, passwordHash: null }),
    /**
     * Sets a user's name and e-mail, for a directory that is authoritative for the account. 409
     * email_taken when another account has the e-mail; the caller's transaction is then aborted.
     */
    async updateUserNameAndEmail(tx: Queryable, userId: string, input: { name: string; email: string }): Promise<void> {
      try {
        await store.updateUserNameAndEmail(tx, userId, input);
      } catch (error) {
        if (isUniqueViolation(error)) throw userErrors.email_taken('An account with this email already exists');
        throw error;
      }
    },
    lockInstanceAdmins: (tx: Queryable) => store.lockInstanceAdmins(tx),
    setInstanceAdmin: (tx: Queryable, userId: string, isAdmin: boolean) => store.setInstanceAdmin(tx, userId, isAdmin),
  } satisfies UserDirectory;
}

export interface UserServiceDeps {
  db: Database;
  rateLimiter: RateLimiter;
  signUpEnabled: boolean;
  /** Sign-up attempts one client address may make per hour (SIGN_UP_ATTEMPTS_PER_ADDRESS). */
  signUpAttemptsPerAddress: number;
  membership: Pick<MembershipAuthorization, 'addMember'> &
    Pick<MembershipSessions, 'issueSession' | 'revokeSession' | 'markSessionAuthenticated'>;
  organizations: Pick<OrganizationDirectory, 'countOrganizations' | 'addOrganization' | 'listOrganizationsOfUser'>;
  /** Whether an organization requires SSO of the account instead of its password (the SSO module's rule, handed in by the app). */
  passwordSignInPolicy: PasswordSignInPolicy;
}

/** 403 sso_required: the account's organization requires SSO for its domain. */
function ssoRequired(domain: string): ApiError {
  return userErrors.sso_required(
    `Your organization requires signing in with SSO for ${domain} addresses: use "Sign in with SSO" (POST /v1/auth/sso/start) instead of your password`,
  );
}

export function createUserService(deps: UserServiceDeps) {
  const { db } = deps;

  const issueSession = deps.membership.issueSession;

  async function createUser(
    tx: Queryable,
    input: { email: string; password: string; name: string; isInstanceAdmin?: boolean },
  ) {
    const user = await store.insertUser(tx, {
      id: newId(idPrefixes.user),
      email: input.email,
      name: input.name,
      passwordHash: await hashPassword(input.password),
      isInstanceAdmin: input.isInstanceAdmin ?? false,
    });
    if (!user) throw userErrors.email_taken('An account with this email already exists');
    return user;
  }

  /**
   * A sign-in concerns every organization the account is an active member of: its event goes to each
   * of their logs; an account of none (or an unknown e-mail) goes to the instance's own log.
   */
  function signInEvents(
    tx: WriteTransaction,
    action: string,
    userId: string | undefined,
    email: string,
    organizationIds: string[],
    detail: {
      outcome?: 'success' | 'failure' | 'denied';
      changes?: (organizationId: string | null) => Record<string, unknown>;
    } = {},
  ) {
    const outcome = detail.outcome ?? (action === 'user.sign_in_failed' ? ('failure' as const) : ('success' as const));
    const target = { type: 'user', id: userId ?? 'unknown', name: email };
    const base = { action, outcome, target, ...(userId ? { actorUserId: userId } : {}) };
    const changesOf = (organizationId: string | null) =>
      detail.changes ? { changes: detail.changes(organizationId) } : {};
    if (organizationIds.length === 0) tx.audit({ ...base, organizationId: null, ...changesOf(null) });
    for (const organizationId of organizationIds) tx.audit({ ...base, organizationId, ...changesOf(organizationId) });
  }

  /** A failed sign-in is recorded in its own transaction (the request fails, the record stays). */
  async function recordSignIn(
    ctx: WriteContext,
    action: string,
    userId: string | undefined,
    email: string,
    detail: Parameters<typeof signInEvents>[5] = {},
  ) {
    const organizations = userId ? await deps.organizations.listOrganizationsOfUser(userId) : [];
    await writeTransaction(db, ctx, async (tx) =>
      signInEvents(
        tx,
        action,
        userId,
        email,
        organizations.map((organization) => organization.id),
        detail,
      ),
    );
  }

  /** Takes a place in each sign-in counter (see signIn), or 429 when a limit is reached; the places, to give back on success. */
  async function hitSignInLimits(email: string, clientAddress: string) {
    const account = email.toLowerCase();
    // A space separates the two: neither an address nor an accepted email holds one.
    const buckets = [
      { bucket: `sign-in:account-from-address:${clientAddress} ${account}`, limit: signInLimits.perAccountFromAddress },
      { bucket: `sign-in:address:${clientAddress}`, limit: signInLimits.perAddress },
      { bucket: `sign-in:account:${account}`, limit: signInLimits.perAccount },
    ];
    const results = [];
    for (const { bucket, limit } of buckets)
      results.push(await deps.rateLimiter.hit(bucket, limit, signInLimits.windowSeconds));
    const refused = results.find((result) => !result.allowed);
    if (refused) {
      for (const result of results) if (result.allowed) await result.release();
      throw rateLimited(refused, 'Too many sign-in attempts; try again later');
    }
    return results;
  }

  return {
    /** Whether the instance still waits for its bootstrap: the same test bootstrap makes (no organization yet). */
    async bootstrapNeeded(): Promise<boolean> {
      return Number(await deps.organizations.countOrganizations(db)) === 0;
    },

    /** First run only: the first user, an instance administrator, owning the first organization. */
    async bootstrap(
      input: { email: string; password: string; name: string; organizationName: string },
      ctx: WriteContext = systemContext('cli'),
    ) {
      return writeTransaction(db, ctx, async (tx) => {
        // Serializes concurrent bootstraps so that exactly one wins.
        await lockUntilCommit(tx, 'identity-bootstrap');
        if ((await deps.organizations.countOrganizations(tx)) > 0)
          throw userErrors.already_bootstrapped('This instance already has an organization');
        const user = await createUser(tx, { ...input, isInstanceAdmin: true });
        const organization = await deps.organizations.addOrganization(tx, input.organizationName);
        await deps.membership.addMember(tx, organization.id, user.id, 'owner');
        const sessionToken = await issueSession(tx, user.id, organization.id);
        tx.audit({
          action: 'instance.bootstrapped',
          organizationId: organization.id,
          actorUserId: user.id,
          target: { type: 'organization', id: organization.id, name: organization.name },
          changes: { email: user.email, name: user.name, organizationName: organization.name, password: redacted },
        });
        return { user, organization, sessionToken };
      });
    },

    /**
     * Every attempt takes a place in both counters before the address is looked at, so concurrent
     * probes (on any process) cannot all get through before one is counted; an attempt one limit
     * refuses gives back its place in the other (a locked-out client must not use up the target's own).
     */
    async signUp(input: { email: string; password: string; name: string }, ctx: WriteContext) {
      if (!deps.signUpEnabled) throw userErrors.sign_up_disabled('Sign-up is disabled on this instance');
      const clientAddress = ctx.clientAddress ?? 'unknown';
      const buckets = [
        { bucket: `sign-up:address:${clientAddress}`, limit: deps.signUpAttemptsPerAddress },
        { bucket: `sign-up:target:${input.email.toLowerCase()}`, limit: signUpLimits.perTargetAddress },
      ];
      const results = [];
      for (const { bucket, limit } of buckets)
        results.push(await deps.rateLimiter.hit(bucket, limit, signUpLimits.windowSeconds));
      const refused = results.find((result) => !result.allowed);
      if (refused) {
        for (const result of results) if (result.allowed) await result.release();
        throw rateLimited(refused, 'Too many sign-up attempts; try again later');
      }
      return writeTransaction(db, ctx, async (tx) => {
        const user = await createUser(tx, input);
        const sessionToken = await issueSession(tx, user.id, null);
        // An account of no organization yet: its event is the instance's.
        tx.audit({
          action: 'user.signed_up',
          organizationId: null,
          actorUserId: user.id,
          target: { type: 'user', id: user.id, name: user.email },
          changes: { email: user.email, name: user.name, password: redacted },
        });
        return { user, sessionToken };
      });
    },

    /**
     * Every attempt takes a place in each counter before the password is checked, so that concurrent
     * guesses (on any process) cannot all get through before one is counted. An attempt a limit refuses
     * gives back its places in the other counters: a locked-out address that keeps trying must not
     * use up the account's own limit, which would lock the owner out after all. A sign-in that succeeds
     * gives its places back too, so only failed attempts use up the limits. A success does not clear
     * the failures before it: on an address's counters, an attacker signing in to an account of their
     * own would wipe their guessing against others; on the account's, each sign-in of the real user
     * would hand a guesser racing them a fresh allowance.
     */
    async signIn(input: { email: string; password: string }, ctx: WriteContext) {
      const account = input.email.toLowerCase();
      const results = await hitSignInLimits(input.email, ctx.clientAddress ?? 'unknown');
      const user = await store.findUserByEmail(db, input.email);
      // Verify against a decoy when the account does not exist, so timing does not reveal which emails exist.
      const valid = await verifyPassword(input.password, user?.password_hash ?? decoyPasswordHash);
      if (!user?.password_hash || !valid) {
        await recordSignIn(ctx, 'user.sign_in_failed', user?.id, account, { changes: () => ({ method: 'password' }) });
        throw userErrors.invalid_credentials('Email or password is wrong');
      }
      // The right password is not a guess, whatever the policy answers: its places go back.
      for (const result of results) await result.release();
      // Judged after the password, so that the answer tells nobody without it whether the account is an
      // organization's member: 401 for a wrong password either way.
      const policy = await deps.passwordSignInPolicy(user);
      if (!policy.allowed) {
        await recordSignIn(ctx, 'user.sign_in_failed', user.id, account, {
          outcome: 'denied',
          changes: () => ({ method: 'password', reason: 'sso_required' }),
        });
        throw ssoRequired(policy.domain);
      }
      const organizations = await deps.organizations.listOrganizationsOfUser(user.id);
      const sessionToken = await writeTransaction(db, ctx, async (tx) => {
        // The owner's break-glass sign-in is flagged in the log of the organization that requires SSO.
        signInEvents(
          tx,
          'user.signed_in',
          user.id,
          user.email,
          organizations.map((organization) => organization.id),
          {
            changes: (organizationId) => ({
              method: 'password',
              ...(organizationId !== null && organizationId === policy.breakGlassOrganizationId
                ? { breakGlass: true }
                : {}),
            }),
          },
        );
        return issueSession(tx, user.id, organizations[0]?.id ?? null);
      });
      return { user, sessionToken };
    },

    async signOut(ctx: CallerContext): Promise<void> {
      const { sessionId } = ctx.actor;
      if (sessionId) {
        await writeTransaction(db, ctx, async (tx) => {
          await deps.membership.revokeSession(tx, sessionOf(ctx.actor));
          tx.audit({ action: 'user.signed_out', target: { type: 'session', id: sessionId } });
        });
      }
    },

    async me(caller: Caller) {
      const userId = requireSignedInUser(caller);
      const user = (await store.findUserById(db, userId))!;
      const organizations = await deps.organizations.listOrganizationsOfUser(userId);
      // Like GET /v1/org: an organization the user is no longer an active member of (removed, left,
      // suspended) is not the session's active one, whatever the session row still points at.
      return {
        user,
        organizations,
        activeOrganizationId: caller.memberId ? caller.organizationId : null,
        session: { authenticatedAt: caller.authenticatedAt!, authMethod: caller.authMethod ?? 'password' },
      };
    },

    /**
     * Step-up re-authentication with the password: the session records that its person authenticated
     * now. Wrong guesses count against the same limits as sign-in (a stolen session must not become a
     * way around them); a refusal is 403, not 401, so that a client does not drop a session that is valid.
     */
    async reauthenticate(ctx: CallerContext, password: string): Promise<Date> {
      const caller = ctx.actor;
      const userId = requireSignedInUser(caller);
      const user = (await store.findUserById(db, userId))!;
      const results = await hitSignInLimits(user.email, ctx.clientAddress ?? 'unknown');
      if (!user.password_hash) {
        for (const result of results) await result.release();
        throw userErrors.password_not_set(
          'This account has no password: re-authenticate through SSO (POST /v1/auth/sso/start with reauthenticate: true)',
        );
      }
      if (!(await verifyPassword(password, user.password_hash)))
        throw userErrors.invalid_credentials.at(403, 'The password is wrong');
      for (const result of results) await result.release();
      // A password step-up is a password authentication: refused like sign-in where SSO is required.
      const policy = await deps.passwordSignInPolicy(user);
      if (!policy.allowed) throw ssoRequired(policy.domain);
      const authenticatedAt = await writeTransaction(db, ctx, async (tx) => {
        tx.audit({
          action: 'user.reauthenticated',
          target: { type: 'session', id: caller.sessionId! },
          // In the active organization's log, flagged when that organization requires SSO (its owner's break-glass).
          changes: {
            authMethod: 'password',
            ...(policy.breakGlassOrganizationId && policy.breakGlassOrganizationId === caller.organizationId
              ? { breakGlass: true }
              : {}),
          },
        });
        return deps.membership.markSessionAuthenticated(tx, sessionOf(caller), 'password');
      });
      // Revoked or expired between the hook and here: it is no longer a session at all.
      if (!authenticatedAt) throw unauthorized();
      return authenticatedAt;
    },
  };
}

export type UserService = ReturnType<typeof createUserService>;
