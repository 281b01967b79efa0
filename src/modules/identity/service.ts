// The membership core: who the caller is (session tokens, API keys), their standing in an
// organization, the one re-check of an acting member inside a write, and the member changes other
// modules make. The member routes (list, roles, removal, ownership) are the members module's.
import type { Database, Queryable } from '../../db/database.ts';
import { lockUntilCommit } from '../../db/locks.ts';
import type { AuthMethod, Caller, Membership, Role } from '../../http/caller.ts';
import { forbidden } from '../../http/errors.ts';
import { idPrefixes, newId } from '../../platform/ids.ts';
import {
  builtInRoleKeys,
  effectivePermissions,
  isBuiltInRole,
  type PermissionKey,
} from '../../platform/permissions.ts';
import { hashToken, tenantToken, tokenLookup } from '../../platform/tokens.ts';
import { writeTransaction, type WriteContext, type WriteTransaction } from '../../platform/write-context.ts';
import type {
  ActingMember,
  MemberInvitations,
  MemberRecord,
  MemberStatus,
  MembershipCore,
  RemovedBy,
  SessionRef,
} from './contracts.ts';
import { type MemberRefusals, membershipRefusals } from './refusals.ts';
import * as callers from './caller-store.ts';
import * as store from './store.ts';
import * as copies from './membership-copy-store.ts';
import { apiKeyPrefix, batchedByTokenHash, sessionTokenPrefix } from './tokens.ts';

export type { Caller, Membership, Role } from '../../http/caller.ts';

/** The keys of a member read with what it holds (none without a role: an ex-member, no active organization). */
const keysOf = (row: { role: Role | null; team_roles?: string[] | null; custom_permissions: string[] | null }) =>
  effectivePermissions({ role: row.role, teamRoles: row.team_roles ?? [], customKeys: row.custom_permissions ?? [] });

// Every change of an organization's members takes this lock first, so they happen one at a time.
const memberChangesLock = (organizationId: string) => `organization-members:${organizationId}`;

/** The caller's user; an API key is refused (403). */
export function requireSignedInUser(caller: Caller): string {
  if (caller.kind !== 'session' || !caller.userId)
    throw forbidden('This action needs a signed-in user, not an API key');
  return caller.userId;
}

export interface MembershipCoreDeps {
  db: Database;
  /** The invitations a member's change ends (the invitations module's). */
  invitations: MemberInvitations;
  /** Lifetime of a new session (SESSION_TTL_HOURS). */
  sessionTtlHours: number;
}

export function createMembershipCore(deps: MembershipCoreDeps) {
  const { db, invitations } = deps;
  const findSessionCaller = batchedByTokenHash(db, (batch) => callers.findSessionCallers(db, batch));
  const findApiKey = batchedByTokenHash(db, (batch) => callers.findApiKeys(db, batch));

  /**
   * The caller's membership in `organizationId`, which need not be the active one. Someone who is not
   * a member learns nothing about the organization: it is simply not found.
   */
  async function requireMembership(
    caller: Caller,
    organizationId: string,
    permission?: PermissionKey,
  ): Promise<Membership> {
    let membership: Membership | undefined;
    if (caller.organizationId === organizationId && caller.role && (caller.kind === 'api_key' || caller.memberId)) {
      membership = { organizationId, memberId: caller.memberId, role: caller.role, permissions: caller.permissions };
    } else if (caller.kind === 'session' && caller.userId) {
      const member = await store.findMembershipByUser(db, organizationId, caller.userId);
      if (member && member.status === 'active')
        membership = { organizationId, memberId: member.id, role: member.role, permissions: keysOf(member) };
    }
    const refuse = membershipRefusals();
    if (!membership) throw refuse.inactive();
    if (permission && !membership.permissions.has(permission)) throw refuse.lacksPermission(permission);
    return membership;
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
    rule: { permission?: PermissionKey; refuse: MemberRefusals },
  ): Promise<ActingMember | null> {
    if (!memberId) return null;
    const member = await store.findMemberForShare(tx, organizationId, memberId);
    if (member?.status !== 'active') throw rule.refuse.inactive();
    const permissions = keysOf(member);
    if (rule.permission && !permissions.has(rule.permission)) throw rule.refuse.lacksPermission(rule.permission);
    return { id: member.id, role: member.role, status: member.status, permissions };
  }

  async function activeMemberPermissions(
    organizationId: string,
    memberId: string,
    q: Queryable = db,
  ): Promise<ReadonlySet<PermissionKey> | null> {
    const member = await store.findMembershipById(q, organizationId, memberId);
    return member?.status === 'active' ? keysOf(member) : null;
  }

  // Every change of a membership's status or role goes through these three, which end the
  // invitations its member sent once they may no longer invite (and a removal, those sent to them). The member row is changed first: an
  // invitation being created holds that row (see createInvitation), so by the time the invitations
  // are ended here it is committed, or it waits and then sees this change and is refused.
  async function setMemberStatus(
    tx: Queryable,
    organizationId: string,
    memberId: string,
    status: MemberStatus,
  ): Promise<void> {
    const userId = await store.setMemberStatus(tx, organizationId, memberId, status);
    if (userId && status !== 'active') await invitations.endInvitationsSentBy(tx, organizationId, userId);
  }

  async function deleteMember(
    tx: Queryable,
    organizationId: string,
    memberId: string,
    removedBy?: RemovedBy,
  ): Promise<void> {
    const removed = await store.deleteMember(tx, organizationId, memberId);
    if (!removed) return;
    if (removedBy) await store.recordRemoval(tx, organizationId, removed.userId, removedBy);
    await invitations.endInvitationsSentBy(tx, organizationId, removed.userId);
    // A removal is not undone by an invitation sent before it (one sent to a member SCIM linked, say).
    await invitations.endInvitationsTo(tx, organizationId, removed.email);
  }

  async function setMemberRole(
    tx: Queryable,
    organizationId: string,
    member: Pick<MemberRecord, 'id' | 'user_id'>,
    role: Role,
  ): Promise<void> {
    await store.setMemberRole(tx, organizationId, member.id, role);
    // A built-in role that invites settles it; otherwise the member's teams may still give the key.
    if (isBuiltInRole(role) && builtInRoleKeys(role).has(invitations.invitePermission)) return;
    const after = await store.findMembershipById(tx, organizationId, member.id);
    if (!after || !keysOf(after).has(invitations.invitePermission))
      await invitations.endInvitationsSentBy(tx, organizationId, member.user_id);
  }

  const lockMemberChanges = (tx: Queryable, organizationId: string) =>
    lockUntilCommit(tx, memberChangesLock(organizationId));

  return {
    requireMembership,
    holdActingMember,
    activeMemberPermissions,

    async resolveSession(token: string): Promise<Caller | null> {
      if (!token.startsWith(sessionTokenPrefix) || token.length > 200) return null;
      const row = await findSessionCaller(tokenLookup(token, sessionTokenPrefix));
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
        permissions: keysOf(row),
        authenticatedAt: row.authenticated_at,
        authMethod: row.auth_method,
        name: row.name,
        email: row.email,
      };
    },

    async resolveApiKey(key: string): Promise<Caller | null> {
      if (!key.startsWith(apiKeyPrefix) || key.length > 200) return null;
      const row = await findApiKey(tokenLookup(key, apiKeyPrefix));
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
        permissions: keysOf(row),
        name: row.name,
        email: null,
      };
    },

    /**
     * The member, share-locked until `tx` ends: a removal, suspension or role change in progress is
     * waited for and then seen (undefined once removed). Called inside the transaction that writes a row
     * for the member, so that the row cannot outlive the membership that allowed it.
     */
    lockMember: (tx: Queryable, organizationId: string, memberId: string) =>
      store.findMemberForShare(tx, organizationId, memberId),
    /** Of `ids`, the members of the organization, share-locked like lockMember (in id order, so two callers cannot deadlock). */
    lockMemberIds: (tx: Queryable, organizationId: string, ids: string[]) =>
      store.lockExistingMembers(tx, organizationId, ids),
    /**
     * Waits for the organization's member changes in progress (removal, role, status, ownership, an
     * accepted invitation) and holds off new ones until `tx` ends: for another module's transaction that
     * changes members itself (SCIM), so that both take their locks in one order.
     */
    lockMemberChanges,
    /**
     * Runs a change of an organization's roles or members with every other such change of that
     * organization held off, so that each sees the roles the others left: a transfer of ownership and
     * a demotion or removal of its new owner must not both pass their checks (no owner left), nor two
     * transfers by one owner (two owners, refused by the index as a 500).
     */
    changeMembers<T>(
      context: WriteContext,
      organizationId: string,
      change: (tx: WriteTransaction) => Promise<T>,
    ): Promise<T> {
      return writeTransaction(db, context, async (tx) => {
        await lockMemberChanges(tx, organizationId);
        return change(tx);
      });
    },
    /** Of `ids`, the ones that are members of the organization. */
    listMemberIds: (organizationId: string, ids: string[], tx: Queryable = db) =>
      store.existingMemberIds(tx, organizationId, ids),
    listMembers: (organizationId: string, page: { limit: number; after?: string | undefined }) =>
      store.listMembers(db, organizationId, page.limit, page.after),
    getMember: (organizationId: string, memberId: string, tx: Queryable = db) =>
      store.findMember(tx, organizationId, memberId),
    getMemberByUser: (organizationId: string, userId: string, tx: Queryable = db) =>
      store.findMemberByUser(tx, organizationId, userId),
    getMemberRemoval: (organizationId: string, userId: string, tx: Queryable = db) =>
      store.findRemoval(tx, organizationId, userId),
    /** Adds the user as a member; the new member's id, or undefined when they are a member already. */
    async addMember(tx: Queryable, organizationId: string, userId: string, role: Role): Promise<string | undefined> {
      const memberId = newId(idPrefixes.member);
      return (await store.insertMember(tx, { id: memberId, organizationId, userId, role })) ? memberId : undefined;
    },
    /** Adds the user as a member (or returns the existing membership). */
    async ensureMember(
      tx: Queryable,
      organizationId: string,
      userId: string,
      role: Role = 'member',
    ): Promise<MemberRecord> {
      await store.insertMember(tx, { id: newId(idPrefixes.member), organizationId, userId, role });
      return (await store.findMemberByUser(tx, organizationId, userId))!;
    },
    /** Suspending a member also ends the invitations they sent (in the caller's transaction). */
    setMemberStatus,
    /** Changing a role to one that may not invite ends the invitations the member sent (in the caller's transaction). */
    setMemberRole,
    /** Removing a member also ends the invitations they sent (in the caller's transaction). */
    deleteMember,
    setMemberTeams: (tx: Queryable, organizationId: string, memberId: string, readTeams: () => Promise<unknown[]>) =>
      copies.setMemberTeamsCopy(tx, organizationId, memberId, readTeams),

    // Sessions: who a session token speaks for is this core's, so it issues, ends and re-points them.
    /** Issues a session for the user (its token, to be shown once) with `activeOrganizationId` active. */
    async issueSession(
      tx: Queryable,
      userId: string,
      activeOrganizationId: string | null,
      authMethod: AuthMethod = 'password',
      authenticatedAt?: Date,
    ): Promise<string> {
      const token = tenantToken(sessionTokenPrefix, userId);
      await store.insertSession(tx, {
        id: newId(idPrefixes.session),
        userId,
        tokenHash: hashToken(token),
        activeOrganizationId,
        ttlHours: deps.sessionTtlHours,
        authMethod,
        ...(authenticatedAt ? { authenticatedAt } : {}),
      });
      return token;
    },
    markSessionAuthenticated: (tx: Queryable, session: SessionRef, method: AuthMethod) =>
      store.markSessionAuthenticated(tx, session, method),
    revokeSession: (tx: Queryable, session: SessionRef) => store.revokeSession(tx, session),
    revokeUserSessions: (tx: Queryable, userId: string) => store.revokeUserSessions(tx, userId),
    revokePasswordSessionsInDomain: (tx: Queryable, organizationId: string, domain: string) =>
      store.revokePasswordSessionsInDomain(tx, organizationId, domain),
    setSessionOrganization: (tx: Queryable, session: SessionRef, organizationId: string) =>
      store.setSessionOrganization(tx, session, organizationId),
    setSessionOrganizationIfUnusable: (tx: Queryable, session: SessionRef, organizationId: string) =>
      store.setSessionOrganizationIfUnusable(tx, session, organizationId),
  } satisfies MembershipCore;
}

export type MembershipCoreService = ReturnType<typeof createMembershipCore>;
