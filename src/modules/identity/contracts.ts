// The membership core's contract: what other modules use of identity (index.ts exports it) and what
// identity's own files share. In its own file, so that index.ts and the service both import it and
// neither imports the other.
import type { Queryable } from '../../db/database.ts';
import type { AuthMethod, Caller, Membership, Role } from '../../http/caller.ts';
import type { PermissionKey } from '../../platform/permissions.ts';
import type { MemberRefusals } from './refusals.ts';
import type { WriteContext, WriteTransaction } from '../../platform/write-context.ts';

export type MemberStatus = 'active' | 'suspended';

/** Who took a membership away: the organization's directory (SCIM) or an owner or admin. */
export type RemovedBy = 'scim' | 'administrator';

/** A member as other modules see it. */
export interface MemberRecord {
  id: string;
  organization_id: string;
  user_id: string;
  role: Role;
  status: MemberStatus;
  created_at: Date;
  name: string;
  email: string;
  image: string;
}

/** The acting member as holdActingMember found them, with the keys they hold. */
export interface ActingMember extends Pick<MemberRecord, 'id' | 'role' | 'status'> {
  permissions: ReadonlySet<PermissionKey>;
}

/**
 * What ends with a member's right to invite, or with their membership: their invitations (the
 * invitations module implements it; the core calls it inside the change's own transaction).
 */
export interface MemberInvitations {
  /** The key that lets a member invite: a member changed to a role without it stops inviting. */
  readonly invitePermission: PermissionKey;
  /** Ends the pending invitations the user sent on behalf of the organization. */
  endInvitationsSentBy(tx: Queryable, organizationId: string, userId: string): Promise<void>;
  /** Ends the organization's pending invitations to the address. */
  endInvitationsTo(tx: Queryable, organizationId: string, email: string): Promise<void>;
}

/**
 * The membership core, as the one half its consumers use for authorization: a caller's standing in an
 * organization, the one re-check of an acting member, the member-change lock, and member reads and changes.
 */
export interface MembershipAuthorization {
  /** The caller's active membership in `organizationId`: 404 organization_not_found when none, 403 when it lacks `permission`. */
  requireMembership(caller: Caller, organizationId: string, permission?: PermissionKey): Promise<Membership>;
  /**
   * The one re-check of an acting member inside a write's transaction: share-locks the member until
   * `tx` ends and refuses, with the route's own answers, one no longer active or no longer holding `permission`.
   * memberId null (an API key) holds nothing and returns null.
   */
  holdActingMember(
    tx: Queryable,
    organizationId: string,
    memberId: string | null,
    rule: { permission?: PermissionKey; refuse: MemberRefusals },
  ): Promise<ActingMember | null>;
  /** The keys the member holds, or null when they are not an active member of the organization. */
  activeMemberPermissions(
    organizationId: string,
    memberId: string,
    tx?: Queryable,
  ): Promise<ReadonlySet<PermissionKey> | null>;
  /** The member share-locked until `tx` ends (undefined once removed), without judging it. */
  lockMember(
    tx: Queryable,
    organizationId: string,
    memberId: string,
  ): Promise<Pick<MemberRecord, 'id' | 'role' | 'status'> | undefined>;
  /** Of `ids`, the members of the organization, share-locked like lockMember (in id order: no deadlock between two callers). */
  lockMemberIds(tx: Queryable, organizationId: string, ids: string[]): Promise<string[]>;
  /** Waits for the organization's member changes in progress and holds off new ones until `tx` ends. */
  lockMemberChanges(tx: Queryable, organizationId: string): Promise<void>;
  /**
   * Runs `change` in a write transaction that first waits for the organization's other member changes
   * and holds off new ones until it ends (lockMemberChanges).
   */
  changeMembers<T>(
    context: WriteContext,
    organizationId: string,
    change: (tx: WriteTransaction) => Promise<T>,
  ): Promise<T>;
  /** The organization's members in id order, `limit` of them after the id `after`. */
  listMembers(organizationId: string, page: { limit: number; after?: string | undefined }): Promise<MemberRecord[]>;
  /** Of `ids`, the ones that are members of the organization. */
  listMemberIds(organizationId: string, ids: string[], tx?: Queryable): Promise<string[]>;
  getMember(organizationId: string, memberId: string, tx?: Queryable): Promise<MemberRecord | undefined>;
  getMemberByUser(organizationId: string, userId: string, tx?: Queryable): Promise<MemberRecord | undefined>;
  /** Adds the user as a member; the new member's id, or undefined when they are a member already. */
  addMember(tx: Queryable, organizationId: string, userId: string, role: Role): Promise<string | undefined>;
  /** Adds the user as a member (or returns the existing membership). */
  ensureMember(tx: Queryable, organizationId: string, userId: string, role?: Role): Promise<MemberRecord>;
  /** Suspending a member also ends the invitations they sent (in the caller's transaction). */
  setMemberStatus(tx: Queryable, organizationId: string, memberId: string, status: MemberStatus): Promise<void>;
  /** Changing a role to one that may not invite also ends the invitations the member sent (in the caller's transaction). */
  setMemberRole(
    tx: Queryable,
    organizationId: string,
    member: Pick<MemberRecord, 'id' | 'user_id'>,
    role: Role,
  ): Promise<void>;
  /**
   * Removing a member also ends the invitations they sent and those sent to them (in the caller's
   * transaction). `removedBy` records who took the membership away (not given when a member leaves on
   * their own) until the person is a member again: SSO's just-in-time provisioning does not undo it.
   */
  deleteMember(tx: Queryable, organizationId: string, memberId: string, removedBy?: RemovedBy): Promise<void>;
  /**
   * After a change of the member's teams (in the caller's transaction): the person's copy of them, which
   * GET /v1/org shows, is replaced by what `readTeams` reads once the copy is locked.
   */
  setMemberTeams(
    tx: Queryable,
    organizationId: string,
    memberId: string,
    readTeams: () => Promise<unknown[]>,
  ): Promise<void>;
  /** Who removed the user from the organization and when, while they have not become a member again. */
  getMemberRemoval(
    organizationId: string,
    userId: string,
    tx?: Queryable,
  ): Promise<{ removedBy: RemovedBy; removedAt: Date } | undefined>;
}

/**
 * The membership core, as the other half: sessions (who a session token or API key speaks for, issuing and
 * ending sessions, a session's re-authentication and its active organization).
 */
export interface MembershipSessions {
  /** Resolves a session token (one round trip); null when unknown, expired or revoked. */
  resolveSession(token: string): Promise<Caller | null>;
  /** Resolves an organization API key; null when unknown or revoked. */
  resolveApiKey(key: string): Promise<Caller | null>;
  /**
   * Issues a session for the user with `activeOrganizationId` active, authenticated now by `authMethod` (default password); its token,
   * to be shown once. `authenticatedAt`: a session handed on from another (the desktop app's) keeps that one's authentication time.
   */
  issueSession(
    tx: Queryable,
    userId: string,
    activeOrganizationId: string | null,
    authMethod?: AuthMethod,
    authenticatedAt?: Date,
  ): Promise<string>;
  /** Records that the session's person has just authenticated again (step-up); the new time, or undefined when the session is no longer valid. */
  markSessionAuthenticated(tx: Queryable, session: SessionRef, method: AuthMethod): Promise<Date | undefined>;
  revokeSession(tx: Queryable, session: SessionRef): Promise<void>;
  /** Ends every session of the user; the number ended. */
  revokeUserSessions(tx: Queryable, userId: string): Promise<number>;
  /** Ends the password sessions of the organization's members but its owner whose e-mail is in `domain` (SSO became required); the number ended. */
  revokePasswordSessionsInDomain(tx: Queryable, organizationId: string, domain: string): Promise<number>;
  /** Makes the organization the session's active one. */
  setSessionOrganization(tx: Queryable, session: SessionRef, organizationId: string): Promise<void>;
  /** Makes the organization the session's active one unless it has a usable one (an organization its user is an active member of); true when it changed. */
  setSessionOrganizationIfUnusable(tx: Queryable, session: SessionRef, organizationId: string): Promise<boolean>;
}

/** The whole core (createMembershipCore builds one object with both); a consumer takes the half it uses, narrowed with Pick. */
export type MembershipCore = MembershipAuthorization & MembershipSessions;

/** A session, by its user (the column sessions are distributed by) and its id. */
export interface SessionRef {
  userId: string;
  id: string;
}

/** The session a session caller speaks through (the routes that use it take session callers only). */
export const sessionOf = (caller: Pick<Caller, 'userId' | 'sessionId'>): SessionRef => ({
  userId: caller.userId!,
  id: caller.sessionId!,
});
