import type { Database, Queryable } from '../../db/database.ts';
import { isUniqueViolation } from '../../db/errors.ts';
import { lockUntilCommit } from '../../db/locks.ts';
import { ApiError, conflict, forbidden, notFound, rateLimited, unauthorized, type MemberRefusals } from '../../http/errors.ts';
import { batchesInFlight, createBatcher } from '../../platform/batcher.ts';
import { idPrefixes, newId } from '../../platform/ids.ts';
import { decoyPasswordHash, hashPassword, verifyPassword } from '../../platform/passwords.ts';
import type { RateLimiter } from '../../platform/rate-limiter.ts';
import { hashToken, randomToken } from '../../platform/tokens.ts';
import type { Caller, Membership, Role } from '../../http/caller.ts';
import { createIdentityStore, type MemberRow, type OrganizationRow, type Plan, type TeamRow, type UserRow } from './store.ts';

export type { Plan } from './store.ts';
export type { Caller, Membership, Role } from '../../http/caller.ts';

export interface IdentityServiceDeps {
  db: Database;
  rateLimiter: RateLimiter;
  sessionTtlHours: number;
  signUpEnabled: boolean;
}

// Password guessing is limited across all processes, in three counters (see signIn): one client
// address guessing one account, one address guessing many accounts, and every address together
// guessing one account. The first is the tight one, so that a stranger's ten wrong guesses lock out
// the stranger, not the account's owner signing in from elsewhere; only guessing spread over many
// addresses reaches the account's own, higher limit. Failed attempts count; successful sign-ins,
// and attempts already refused by a limit, do not.
const signInLimits = { perAccountFromAddress: 10, perAddress: 50, perAccount: 100, windowSeconds: 15 * 60 };

const sessionTokenPrefix = 'ops_';
const apiKeyPrefix = 'opk_';
const invitationTokenPrefix = 'opi_';

// Every change of an organization's members takes this lock first, so they happen one at a time.
const memberChangesLock = (organizationId: string) => `organization-members:${organizationId}`;

// An invitation speaks for the member who sent it, so it holds only while they still have one of
// these roles in an active membership: a removed admin's accomplice must not be let in afterwards.
const inviterRoles: readonly Role[] = ['owner', 'admin'];

// Session lookups of concurrent requests share one statement. Batches run side by side only when
// enough lookups wait, so under load the database answers few large statements, not many small ones.
const LOOKUP_BATCH_MAX = 256;
const LOOKUP_OVERLAP_THRESHOLD = 16;

export function createIdentityService(deps: IdentityServiceDeps) {
  const { db } = deps;
  const store = createIdentityStore();
  const lookupsInFlight = batchesInFlight(db.maxConnections);

  /** Looks rows up by token hash in batches; each caller gets the row of its own hash, or undefined. */
  function batchedByTokenHash<Row extends { token_hash: string }>(find: (hashes: string[]) => Promise<Row[]>) {
    return createBatcher<string, Row | undefined>({
      async run(hashes) {
        const rows = await find([...new Set(hashes)]);
        const byHash = new Map(rows.map((row) => [row.token_hash, row]));
        return hashes.map((hash) => byHash.get(hash));
      },
      maxBatch: LOOKUP_BATCH_MAX,
      maxInFlight: lookupsInFlight,
      overlapThreshold: LOOKUP_OVERLAP_THRESHOLD,
    });
  }
  const findSessionCaller = batchedByTokenHash((hashes) => store.findSessionCallers(db, hashes));
  const findActiveOrganization = batchedByTokenHash((hashes) => store.findActiveOrganizationsByTokens(db, hashes));
  const findApiKey = batchedByTokenHash((hashes) => store.findApiKeysByHashes(db, hashes));

  async function issueSession(tx: Queryable, userId: string, activeOrganizationId: string | null): Promise<string> {
    const token = sessionTokenPrefix + randomToken();
    await store.insertSession(tx, {
      id: newId(idPrefixes.session),
      userId,
      tokenHash: hashToken(token),
      activeOrganizationId,
      ttlHours: deps.sessionTtlHours,
    });
    return token;
  }

  async function createUser(tx: Queryable, input: { email: string; password: string; name: string; isInstanceAdmin?: boolean }) {
    const user = await store.insertUser(tx, {
      id: newId(idPrefixes.user),
      email: input.email,
      name: input.name,
      passwordHash: await hashPassword(input.password),
      isInstanceAdmin: input.isInstanceAdmin ?? false,
    });
    if (!user) throw conflict('email_taken', 'An account with this email already exists');
    return user;
  }

  function requireUser(caller: Caller): string {
    if (caller.kind !== 'session' || !caller.userId) throw forbidden('This action needs a signed-in user, not an API key');
    return caller.userId;
  }

  /**
   * The caller's membership in `organizationId`, which need not be the active one. Someone who is not
   * a member learns nothing about the organization: it is simply not found.
   */
  async function requireMembership(caller: Caller, organizationId: string, roles?: readonly Role[]): Promise<Membership> {
    let membership: Membership | undefined;
    if (caller.kind === 'api_key') {
      if (caller.organizationId === organizationId && caller.role) membership = { organizationId, memberId: null, role: caller.role };
    } else if (caller.userId) {
      const member = caller.organizationId === organizationId && caller.memberId
        ? { id: caller.memberId, role: caller.role!, status: 'active' as const }
        : await store.findMemberByUser(db, organizationId, caller.userId);
      if (member && member.status === 'active') membership = { organizationId, memberId: member.id, role: member.role };
    }
    return granted(membership, roles);
  }

  /**
   * The caller's membership held for a write: inside `tx`, the member row (if they act as a member) is
   * share-locked and its role checked again. A removal, suspension or demotion not yet committed when
   * the role was first read then either finishes first and is refused here, or waits until the write
   * has committed (and, for an invitation, ends it with the others).
   */
  async function holdMembership(tx: Queryable, membership: Membership, roles: readonly Role[]): Promise<void> {
    if (!membership.memberId) return;
    const member = await store.findMemberForShare(tx, membership.organizationId, membership.memberId);
    granted(member?.status === 'active' ? { organizationId: membership.organizationId, memberId: member.id, role: member.role } : undefined, roles);
  }

  /**
   * The one re-check of an acting member inside a write's transaction. The route judged the caller as
   * the request began; a removal, suspension or demotion committed since must not let the write through.
   * The member row is share-locked until `tx` ends, so one in progress either commits first and is seen
   * here, or waits until this write has committed. `memberId` null (an API key) acts with the key's own
   * role, which the route checked: nothing to hold. Answers with the route's own refusals.
   */
  async function holdActingMember(
    tx: Queryable,
    organizationId: string,
    memberId: string | null,
    rule: { roles?: readonly Role[]; refuse: MemberRefusals },
  ): Promise<Pick<MemberRow, 'id' | 'role' | 'status'> | null> {
    if (!memberId) return null;
    const member = await store.findMemberForShare(tx, organizationId, memberId);
    if (member?.status !== 'active') throw rule.refuse.inactive();
    if (rule.roles && !rule.roles.includes(member.role)) throw rule.refuse.lacksRole();
    return member;
  }

  function granted(membership: Membership | undefined, roles?: readonly Role[]): Membership {
    if (!membership) throw notFound('organization_not_found', 'No such organization');
    if (roles && !roles.includes(membership.role)) throw forbidden(`This needs the role ${roles.join(' or ')}`);
    return membership;
  }

  async function requireOrganizationMember(organizationId: string, memberId: string, tx: Queryable = db): Promise<MemberRow> {
    const member = await store.findMember(tx, organizationId, memberId);
    if (!member) throw notFound('member_not_found', 'No such member in this organization');
    return member;
  }

  // Every change of a membership's status or role goes through these three, which end the
  // invitations its member sent once they may no longer invite (and a removal, those sent to them). The member row is changed first: an
  // invitation being created holds that row (see createInvitation), so by the time the invitations
  // are ended here it is committed, or it waits and then sees this change and is refused.
  async function setMembershipStatus(tx: Queryable, organizationId: string, memberId: string, status: 'active' | 'suspended'): Promise<void> {
    const userId = await store.setMemberStatus(tx, organizationId, memberId, status);
    if (userId && status !== 'active') await store.expireInvitationsSentBy(tx, organizationId, userId);
  }

  async function deleteMembership(tx: Queryable, organizationId: string, memberId: string): Promise<void> {
    const removed = await store.deleteMember(tx, organizationId, memberId);
    if (!removed) return;
    await store.expireInvitationsSentBy(tx, organizationId, removed.userId);
    // A removal is not undone by an invitation sent before it (one sent to a member SCIM linked, say).
    await store.expirePendingInvitations(tx, organizationId, removed.email);
  }

  async function setMembershipRole(tx: Queryable, organizationId: string, member: MemberRow, role: Role): Promise<void> {
    await store.setMemberRole(tx, organizationId, member.id, role);
    if (!inviterRoles.includes(role)) await store.expireInvitationsSentBy(tx, organizationId, member.user_id);
  }

  /**
   * Runs a change of an organization's roles or members with every other such change of that
   * organization held off, so that each sees the roles the others left: a transfer of ownership and
   * a demotion or removal of its new owner must not both pass their checks (no owner left), nor two
   * transfers by one owner (two owners, refused by the index as a 500).
   */
  function changeMembers<T>(organizationId: string, change: (tx: Queryable) => Promise<T>): Promise<T> {
    return db.transaction(async (tx) => {
      await lockUntilCommit(tx, memberChangesLock(organizationId));
      return change(tx);
    });
  }

  return {
    requireMembership,
    holdActingMember,

    async resolveSession(token: string): Promise<Caller | null> {
      if (!token.startsWith(sessionTokenPrefix) || token.length > 200) return null;
      const row = await findSessionCaller(hashToken(token));
      if (!row) return null;
      return {
        kind: 'session',
        userId: row.user_id,
        sessionId: row.session_id,
        apiKeyId: null,
        isInstanceAdmin: row.is_instance_admin,
        organizationId: row.active_organization_id,
        memberId: row.member_id,
        role: row.role,
      };
    },

    async resolveApiKey(key: string): Promise<Caller | null> {
      if (!key.startsWith(apiKeyPrefix) || key.length > 200) return null;
      const row = await findApiKey(hashToken(key));
      if (!row) return null;
      return {
        kind: 'api_key',
        userId: null,
        sessionId: null,
        apiKeyId: row.id,
        isInstanceAdmin: false,
        organizationId: row.organization_id,
        memberId: null,
        role: row.role,
      };
    },

    /** First run only: the first user, an instance administrator, owning the first organization. */
    async bootstrap(input: { email: string; password: string; name: string; organizationName: string }) {
      return db.transaction(async (tx) => {
        // Serializes concurrent bootstraps so that exactly one wins.
        await lockUntilCommit(tx, 'identity-bootstrap');
        if ((await store.countOrganizations(tx)) > 0) throw conflict('already_bootstrapped', 'This instance already has an organization');
        const user = await createUser(tx, { ...input, isInstanceAdmin: true });
        const organization = await store.insertOrganization(tx, { id: newId(idPrefixes.organization), name: input.organizationName });
        await store.insertMember(tx, { id: newId(idPrefixes.member), organizationId: organization.id, userId: user.id, role: 'owner' });
        const sessionToken = await issueSession(tx, user.id, organization.id);
        return { user, organization, sessionToken };
      });
    },

    async signUp(input: { email: string; password: string; name: string }) {
      if (!deps.signUpEnabled) throw new ApiError(403, 'sign_up_disabled', 'Sign-up is disabled on this instance');
      return db.transaction(async (tx) => {
        const user = await createUser(tx, input);
        const sessionToken = await issueSession(tx, user.id, null);
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
    async signIn(input: { email: string; password: string }, clientAddress: string) {
      const account = input.email.toLowerCase();
      // A space separates the two: neither an address nor an accepted email holds one.
      const buckets = [
        { bucket: `sign-in:account-from-address:${clientAddress} ${account}`, limit: signInLimits.perAccountFromAddress },
        { bucket: `sign-in:address:${clientAddress}`, limit: signInLimits.perAddress },
        { bucket: `sign-in:account:${account}`, limit: signInLimits.perAccount },
      ];
      const results = [];
      for (const { bucket, limit } of buckets) results.push(await deps.rateLimiter.hit(bucket, limit, signInLimits.windowSeconds));
      const refused = results.find((result) => !result.allowed);
      if (refused) {
        for (const result of results) if (result.allowed) await result.release();
        throw rateLimited(refused, 'Too many sign-in attempts; try again later');
      }
      const user = await store.findUserByEmail(db, input.email);
      // Verify against a decoy when the account does not exist, so timing does not reveal which emails exist.
      const valid = await verifyPassword(input.password, user?.password_hash ?? decoyPasswordHash);
      if (!user || !user.password_hash || !valid) throw new ApiError(401, 'invalid_credentials', 'Email or password is wrong');
      for (const result of results) await result.release();
      const organizations = await store.listOrganizationsOfUser(db, user.id);
      const sessionToken = await issueSession(db, user.id, organizations[0]?.id ?? null);
      return { user, sessionToken };
    },

    async signOut(caller: Caller): Promise<void> {
      if (caller.sessionId) await store.revokeSession(db, caller.sessionId);
    },

    async me(caller: Caller) {
      const userId = requireUser(caller);
      const user = (await store.findUserById(db, userId))!;
      const organizations = await store.listOrganizationsOfUser(db, userId);
      // Like GET /v1/org: an organization the user is no longer an active member of (removed, left,
      // suspended) is not the session's active one, whatever the session row still points at.
      return { user, organizations, activeOrganizationId: caller.memberId ? caller.organizationId : null };
    },

    async createOrganization(caller: Caller, name: string): Promise<OrganizationRow> {
      const userId = requireUser(caller);
      return db.transaction(async (tx) => {
        const organization = await store.insertOrganization(tx, { id: newId(idPrefixes.organization), name });
        await store.insertMember(tx, { id: newId(idPrefixes.member), organizationId: organization.id, userId, role: 'owner' });
        await store.setSessionOrganization(tx, caller.sessionId!, organization.id);
        return organization;
      });
    },

    async setActiveOrganization(caller: Caller, organizationId: string): Promise<OrganizationRow> {
      requireUser(caller);
      await requireMembership(caller, organizationId);
      await store.setSessionOrganization(db, caller.sessionId!, organizationId);
      return (await store.findOrganization(db, organizationId))!;
    },

    /**
     * Spec operation 7: the active organization, its owner, and the caller's member record and teams,
     * resolved together with the session in one database round trip.
     */
    async getActiveOrganization(sessionToken: string | undefined) {
      const row = sessionToken?.startsWith(sessionTokenPrefix)
        ? await findActiveOrganization(hashToken(sessionToken))
        : undefined;
      if (!row) throw unauthorized();
      if (!row.organization || !row.owner || !row.current_member) {
        throw notFound('organization_not_found', row.active_organization_id
          ? 'You are no longer a member of the active organization; choose another with PUT /v1/session/active-organization'
          : 'This session has no active organization; create one or choose one with PUT /v1/session/active-organization');
      }
      const withDate = <T extends { created_at: string }>(value: T) => ({ ...value, created_at: new Date(value.created_at) });
      return {
        organization: withDate(row.organization) as OrganizationRow,
        owner: withDate(row.owner) as MemberRow,
        currentMember: withDate(row.current_member) as MemberRow,
        teams: (row.teams ?? []).map(withDate) as TeamRow[],
      };
    },

    async createInvitation(caller: Caller, organizationId: string, input: { email: string; role: 'admin' | 'member' }) {
      const membership = await requireMembership(caller, organizationId, inviterRoles);
      const token = invitationTokenPrefix + randomToken();
      const invitation = await db.transaction(async (tx) => {
        // A removal, suspension or demotion of the sender not committed yet would end their other
        // invitations but miss this one.
        await holdMembership(tx, membership, inviterRoles);
        return store.insertInvitationUnlessMember(tx, {
          id: newId(idPrefixes.invitation),
          organizationId,
          email: input.email,
          role: input.role,
          tokenHash: hashToken(token),
          invitedBy: caller.userId,
        });
      });
      // Accepting would be refused (already_member), so the invitation is refused now, and not stored.
      if (!invitation) throw conflict('already_member', 'This address belongs to a member of this organization already');
      return { invitation, token };
    },

    async acceptInvitation(caller: Caller, token: string): Promise<MemberRow> {
      const userId = requireUser(caller);
      const tokenHash = hashToken(token);
      const invitationNotFound = () => notFound('invitation_not_found', 'This invitation does not exist, was already used, or has expired');
      const organizationId = await store.findInvitationOrganization(db, tokenHash);
      if (!organizationId) throw invitationNotFound();
      // Accepting adds a member, so it waits for the organization's other member changes before it
      // locks anything: two accepts of one person's invitations (each ending the other's) then run one
      // after the other, and the second finds its invitation ended, instead of deadlocking.
      return changeMembers(organizationId, async (tx) => {
        const invitation = await store.findInvitationForUpdate(tx, tokenHash);
        if (!invitation || invitation.accepted_at || invitation.expired) throw invitationNotFound();
        const user = (await store.findUserById(tx, userId))!;
        if (user.email.toLowerCase() !== invitation.email.toLowerCase()) {
          throw forbidden('This invitation was sent to another email address');
        }
        const memberId = newId(idPrefixes.member);
        const inserted = await store.insertMember(tx, { id: memberId, organizationId: invitation.organization_id, userId, role: invitation.role });
        if (!inserted) throw conflict('already_member', 'You are already a member of this organization');
        await store.markInvitationAccepted(tx, invitation.id);
        // A session with no usable active organization (none, or one the user is no longer an active
        // member of) gets the one just joined; a usable one is left alone.
        await store.setSessionOrganizationIfUnusable(tx, caller.sessionId!, invitation.organization_id);
        // Other invitations of this person to this organization have done their work; left pending,
        // one would let them back in after an administrator removed them.
        await store.expirePendingInvitations(tx, invitation.organization_id, invitation.email);
        return (await store.findMember(tx, invitation.organization_id, memberId))!;
      });
    },

    /** Pending invitations only (not accepted, expired or ended), newest first; never their tokens. */
    async listInvitations(caller: Caller, organizationId: string, page: { limit: number; after?: string | undefined }) {
      await requireMembership(caller, organizationId, inviterRoles);
      return store.listPendingInvitations(db, organizationId, page.limit, page.after);
    },

    /**
     * Ends a pending invitation, as a removal of its sender would: accepting it is then refused like an
     * unknown token. Whoever sent it; one of another organization, or one no longer pending, is not found.
     */
    async revokeInvitation(caller: Caller, organizationId: string, invitationId: string): Promise<void> {
      await requireMembership(caller, organizationId, inviterRoles);
      if (!(await store.endPendingInvitation(db, organizationId, invitationId))) {
        throw notFound('invitation_not_found', 'No such pending invitation in this organization');
      }
    },

    async listMembers(caller: Caller, organizationId: string, page: { limit: number; after?: string | undefined }) {
      await requireMembership(caller, organizationId);
      return store.listMembers(db, organizationId, page.limit, page.after);
    },

    async changeMemberRole(caller: Caller, organizationId: string, memberId: string, role: 'admin' | 'member') {
      await requireMembership(caller, organizationId, ['owner', 'admin']);
      return changeMembers(organizationId, async (tx) => {
        const member = await requireOrganizationMember(organizationId, memberId, tx);
        if (member.role === 'owner') throw conflict('owner_role_fixed', 'The owner\'s role changes only by transferring ownership');
        await setMembershipRole(tx, organizationId, member, role);
        return { ...member, role };
      });
    },

    async removeMember(caller: Caller, organizationId: string, memberId: string): Promise<void> {
      const membership = await requireMembership(caller, organizationId);
      const leavingThemselves = membership.memberId === memberId;
      if (!leavingThemselves && membership.role === 'member') throw forbidden('Only owners and admins remove other members');
      await changeMembers(organizationId, async (tx) => {
        const member = await requireOrganizationMember(organizationId, memberId, tx);
        if (member.role === 'owner') throw conflict('owner_cannot_be_removed', 'Transfer ownership before removing the owner');
        await deleteMembership(tx, organizationId, memberId);
      });
    },

    async transferOwnership(caller: Caller, organizationId: string, memberId: string) {
      const membership = await requireMembership(caller, organizationId, ['owner']);
      return changeMembers(organizationId, async (tx) => {
        // Still the owner: an earlier transfer may have made the caller an admin meanwhile.
        const self = await store.findMember(tx, organizationId, membership.memberId!);
        if (self?.role !== 'owner') throw forbidden('This needs the role owner');
        const member = await store.findMember(tx, organizationId, memberId);
        if (!member || member.status !== 'active') throw notFound('member_not_found', 'No such active member in this organization');
        if (member.id === membership.memberId) return member;
        // Demote first: the one-owner index would refuse two owners even inside the transaction.
        await setMembershipRole(tx, organizationId, self, 'admin');
        await setMembershipRole(tx, organizationId, member, 'owner');
        return { ...member, role: 'owner' as const };
      });
    },

    async createTeam(caller: Caller, organizationId: string, name: string): Promise<TeamRow> {
      const creatorRoles: readonly Role[] = ['owner', 'admin'];
      const membership = await requireMembership(caller, organizationId, creatorRoles);
      const team = await db.transaction(async (tx) => {
        await holdMembership(tx, membership, creatorRoles);
        return store.insertTeam(tx, { id: newId(idPrefixes.team), organizationId, name });
      });
      if (!team) throw conflict('team_exists', 'A team with this name already exists');
      return team;
    },

    async listTeams(caller: Caller, organizationId: string, page: { limit: number; after?: string | undefined }) {
      await requireMembership(caller, organizationId);
      return store.listTeams(db, organizationId, page.limit, page.after);
    },

    async addTeamMember(caller: Caller, organizationId: string, teamId: string, memberId: string): Promise<void> {
      await requireMembership(caller, organizationId, ['owner', 'admin']);
      if (!(await store.findTeam(db, organizationId, teamId))) throw notFound('team_not_found', 'No such team in this organization');
      await db.transaction(async (tx) => {
        // Held until the row is added: a removal committing meanwhile is waited for and seen here
        // (404), rather than met by the foreign key (a 500); one starting later waits and removes both.
        if (!(await store.findMemberForShare(tx, organizationId, memberId))) throw notFound('member_not_found', 'No such member in this organization');
        await store.addTeamMember(tx, organizationId, teamId, memberId);
      });
    },

    async removeTeamMember(caller: Caller, organizationId: string, teamId: string, memberId: string): Promise<void> {
      await requireMembership(caller, organizationId, ['owner', 'admin']);
      if (!(await store.findTeam(db, organizationId, teamId))) throw notFound('team_not_found', 'No such team in this organization');
      if (!(await store.removeTeamMember(db, organizationId, teamId, memberId))) {
        throw notFound('member_not_found', 'That member is not in this team');
      }
    },

    async createApiKey(caller: Caller, organizationId: string, input: { name: string; role: 'admin' | 'member' }) {
      const creatorRoles: readonly Role[] = ['owner', 'admin'];
      const membership = await requireMembership(caller, organizationId, creatorRoles);
      const key = apiKeyPrefix + randomToken();
      const apiKey = await db.transaction(async (tx) => {
        // A removal, suspension or demotion not committed yet must not leave a working key behind.
        await holdMembership(tx, membership, creatorRoles);
        return store.insertApiKey(tx, {
          id: newId(idPrefixes.apiKey),
          organizationId,
          name: input.name,
          role: input.role,
          keyHash: hashToken(key),
          createdBy: caller.userId,
        });
      });
      return { apiKey, key };
    },

    async listApiKeys(caller: Caller, organizationId: string, page: { limit: number; after?: string | undefined }) {
      await requireMembership(caller, organizationId, ['owner', 'admin']);
      return store.listApiKeys(db, organizationId, page.limit, page.after);
    },

    async revokeApiKey(caller: Caller, organizationId: string, apiKeyId: string): Promise<void> {
      await requireMembership(caller, organizationId, ['owner', 'admin']);
      if (!(await store.revokeApiKey(db, organizationId, apiKeyId))) throw notFound('api_key_not_found', 'No such API key');
    },

    /** Instance administrators only (checked here so the route and the CLI share the rule). */
    async setPlan(caller: Caller | 'cli', organizationId: string, plan: Plan): Promise<OrganizationRow> {
      if (caller !== 'cli' && !caller.isInstanceAdmin) throw forbidden('Only instance administrators set plans');
      const organization = await store.setPlan(db, organizationId, plan);
      if (!organization) throw notFound('organization_not_found', 'No such organization');
      return organization;
    },

    // Lookups and changes other modules make through this service.
    getOrganization: (organizationId: string) => store.findOrganization(db, organizationId),
    lockOrganization: (tx: Queryable, organizationId: string) => store.lockOrganization(tx, organizationId),
    getMember: (organizationId: string, memberId: string, tx: Queryable = db) => store.findMember(tx, organizationId, memberId),
    getMemberByUser: (organizationId: string, userId: string, tx: Queryable = db) => store.findMemberByUser(tx, organizationId, userId),
    /**
     * The member, share-locked until `tx` ends: a removal, suspension or role change in progress is
     * waited for and then seen (undefined once removed). Called inside the transaction that writes a row
     * for the member, so that the row cannot outlive the membership that allowed it.
     */
    lockMember: (tx: Queryable, organizationId: string, memberId: string) => store.findMemberForShare(tx, organizationId, memberId),
    /** Of `ids`, the members of the organization, share-locked like lockMember (in id order, so two callers cannot deadlock). */
    lockMemberIds: (tx: Queryable, organizationId: string, ids: string[]) => store.lockExistingMembers(tx, organizationId, ids),
    /**
     * Waits for the organization's member changes in progress (removal, role, status, ownership, an
     * accepted invitation) and holds off new ones until `tx` ends: for another module's transaction that
     * changes members itself (SCIM), so that both take their locks in one order.
     */
    lockMemberChanges: (tx: Queryable, organizationId: string) => lockUntilCommit(tx, memberChangesLock(organizationId)),
    getUser: (userId: string): Promise<UserRow | undefined> => store.findUserById(db, userId),
    findUserByEmail: (email: string): Promise<UserRow | undefined> => store.findUserByEmail(db, email),
    /** Of `ids`, the ones that are members of the organization. */
    listMemberIds: (organizationId: string, ids: string[], tx: Queryable = db) => store.existingMemberIds(tx, organizationId, ids),
    /** Of `ids`, the ones that are teams of the organization. */
    listTeamIds: (organizationId: string, ids: string[], tx: Queryable = db) => store.existingTeamIds(tx, organizationId, ids),
    listTeamsOfMember: (organizationId: string, memberId: string) => store.listTeamsOfMember(db, organizationId, memberId),
    /** Creates a user without a password (they sign in through SSO) unless one with the email exists. */
    async ensureUser(tx: Queryable, input: { email: string; name: string }): Promise<UserRow> {
      const existing = await store.findUserByEmail(tx, input.email);
      if (existing) return existing;
      const created = await store.insertUser(tx, { id: newId(idPrefixes.user), email: input.email, name: input.name, passwordHash: null });
      return created ?? (await store.findUserByEmail(tx, input.email))!;
    },
    /**
     * Sets a user's name and e-mail, for a directory that is authoritative for the account. 409
     * email_taken when another account has the e-mail; the caller's transaction is then aborted.
     */
    async updateUserNameAndEmail(tx: Queryable, userId: string, input: { name: string; email: string }): Promise<void> {
      try {
        await store.updateUserNameAndEmail(tx, userId, input);
      } catch (error) {
        if (isUniqueViolation(error)) throw conflict('email_taken', 'An account with this email already exists');
        throw error;
      }
    },
    /** Adds the user as a member (or returns the existing membership). */
    async ensureMember(tx: Queryable, organizationId: string, userId: string, role: Role = 'member'): Promise<MemberRow> {
      await store.insertMember(tx, { id: newId(idPrefixes.member), organizationId, userId, role });
      return (await store.findMemberByUser(tx, organizationId, userId))!;
    },
    /** Suspending a member also ends the invitations they sent (in the caller's transaction). */
    setMemberStatus: setMembershipStatus,
    revokeUserSessions: (tx: Queryable, userId: string) => store.revokeUserSessions(tx, userId),
    /** Removing a member also ends the invitations they sent (in the caller's transaction). */
    deleteMember: deleteMembership,
  };
}

export type IdentityService = ReturnType<typeof createIdentityService>;
