// Invitations: sent by owners and admins, listed, revoked, and accepted by the invitee.
import type { RoleGrants } from '../roles/index.ts';
import type { Role } from '../../http/caller.ts';
import type { Database } from '../../db/database.ts';
import type { FreshAuthenticationCheck } from '../../http/auth.ts';
import type { Caller } from '../../http/caller.ts';
import type { PermissionKey } from '../../platform/permissions.ts';
import { forbidden } from '../../http/errors.ts';
import { idPrefixes, newId } from '../../platform/ids.ts';
import { hashToken, tenantToken, tokenLookup } from '../../platform/tokens.ts';
import { redacted, writeTransaction, type CallerContext } from '../../platform/write-context.ts';
import {
  membershipRefusals,
  requireSignedInUser,
  sessionOf,
  type MemberRecord,
  type MembershipAuthorization,
  type MembershipSessions,
} from '../identity/index.ts';
import type { UserDirectory } from '../users/index.ts';
import type { OrganizationDirectory } from '../organizations/index.ts';
import type { Mailer, MailOutcome } from '../../platform/mailer.ts';
import * as store from './store.ts';
import { invitationErrors } from './error-codes.ts';
import { invitationAcceptUrl, invitationMail } from './email.ts';

const invitationTokenPrefix = 'opi_';

// An invitation speaks for the member who sent it, so it holds only while they still have one of
// these roles in an active membership: a removed admin's accomplice must not be let in afterwards.
export const invitePermission: PermissionKey = 'members.invite';

export interface InvitationServiceDeps {
  db: Database;
  membership: Pick<
    MembershipAuthorization,
    'requireMembership' | 'holdActingMember' | 'changeMembers' | 'addMember' | 'getMember'
  > &
    Pick<MembershipSessions, 'setSessionOrganizationIfUnusable'>;
  users: Pick<UserDirectory, 'getUser'>;
  organizations: Pick<OrganizationDirectory, 'getOrganization'>;
  mailer: Pick<Mailer, 'send'>;
  /** Whether the inviter may give the invitation's role. */
  roleGrants: RoleGrants;
  /** Where the console is reached: the accept link is PUBLIC_URL's console page. */
  publicUrl: string;
}

/** An invitation as sent (created or resent): its token and accept link, shown once, and what became of its e-mail. */
export interface SentInvitation {
  invitation: store.InvitationRow;
  token: string;
  acceptUrl: string;
  mail: MailOutcome;
}

export function createInvitationService(deps: InvitationServiceDeps) {
  const { db, membership, users, organizations, mailer, publicUrl } = deps;

  /**
   * E-mails an invitation whose transaction has committed: a mail server that refuses or is down costs
   * the e-mail, never the invitation, and the caller still gets the link to pass on by hand.
   */
  async function send(
    invitation: store.InvitationRow,
    token: string,
    inviterId: string | null,
  ): Promise<SentInvitation> {
    const acceptUrl = invitationAcceptUrl(publicUrl, token, invitation.email);
    const [organization, inviter] = await Promise.all([
      organizations.getOrganization(invitation.organization_id),
      inviterId ? users.getUser(inviterId) : undefined,
    ]);
    const organizationName = organization?.name ?? 'an organization';
    const mail = await mailer.send(
      invitationMail({
        publicUrl,
        to: invitation.email,
        organizationName,
        inviterName: inviter?.name || inviter?.email || `An administrator of ${organizationName}`,
        role: invitation.role,
        token,
        expiresAt: invitation.expires_at,
      }),
    );
    return { invitation, token, acceptUrl, mail };
  }

  return {
    async createInvitation(
      ctx: CallerContext,
      organizationId: string,
      input: { email: string; role: Role },
      requireFresh: FreshAuthenticationCheck,
    ) {
      const acting = await membership.requireMembership(ctx.actor, organizationId, invitePermission);
      requireFresh();
      const token = tenantToken(invitationTokenPrefix, organizationId);
      const invitation = await writeTransaction(db, ctx, async (tx) => {
        // A removal, suspension or demotion of the sender not committed yet would end their other
        // invitations but miss this one.
        await membership.holdActingMember(tx, organizationId, acting.memberId, {
          permission: invitePermission,
          refuse: membershipRefusals(),
        });
        await deps.roleGrants.requireGrantable(tx, organizationId, input.role, acting.permissions);
        const created = await store.insertInvitationUnlessMember(tx, {
          id: newId(idPrefixes.invitation),
          organizationId,
          email: input.email,
          role: input.role,
          tokenHash: hashToken(token),
          invitedBy: ctx.actor.userId,
        });
        if (created)
          tx.audit({
            action: 'invitation.created',
            organizationId,
            target: { type: 'invitation', id: created.id, name: input.email },
            changes: { email: input.email, role: input.role, token: redacted },
          });
        return created;
      });
      // Accepting would be refused (already_member), so the invitation is refused now, and not stored.
      if (!invitation)
        throw invitationErrors.already_member('This address belongs to a member of this organization already');
      return send(invitation, token, ctx.actor.userId);
    },

    /**
     * Sends a pending invitation again with a new token and a new lifetime: the link sent before stops
     * working. Whoever sent it first; one of another organization, or one no longer pending, is not found.
     */
    async resendInvitation(
      ctx: CallerContext,
      organizationId: string,
      invitationId: string,
      requireFresh: FreshAuthenticationCheck,
    ): Promise<SentInvitation> {
      const acting = await membership.requireMembership(ctx.actor, organizationId, invitePermission);
      requireFresh();
      const token = tenantToken(invitationTokenPrefix, organizationId);
      const invitation = await writeTransaction(db, ctx, async (tx) => {
        // Like creating: a sender losing the right to invite meanwhile must not send it anew.
        await membership.holdActingMember(tx, organizationId, acting.memberId, {
          permission: invitePermission,
          refuse: membershipRefusals(),
        });
        const renewed = await store.renewPendingInvitation(tx, organizationId, invitationId, {
          tokenHash: hashToken(token),
          sentBy: ctx.actor.userId,
        });
        if (renewed)
          tx.audit({
            action: 'invitation.resent',
            organizationId,
            target: { type: 'invitation', id: renewed.id, name: renewed.email },
            changes: { token: redacted },
          });
        return renewed;
      });
      if (!invitation) throw invitationErrors.invitation_not_found('No such pending invitation in this organization');
      return send(invitation, token, ctx.actor.userId);
    },

    async acceptInvitation(ctx: CallerContext, token: string): Promise<MemberRecord> {
      const userId = requireSignedInUser(ctx.actor);
      const lookup = tokenLookup(token, invitationTokenPrefix);
      const invitationNotFound = () =>
        invitationErrors.invitation_not_found('This invitation does not exist, was already used, or has expired');
      const organizationId = await store.findInvitationOrganization(db, lookup);
      if (!organizationId) throw invitationNotFound();
      // Accepting adds a member, so it waits for the organization's other member changes before it
      // locks anything: two accepts of one person's invitations (each ending the other's) then run one
      // after the other, and the second finds its invitation ended, instead of deadlocking.
      return membership.changeMembers(ctx, organizationId, async (tx) => {
        const invitation = await store.findInvitationForUpdate(tx, { hash: lookup.hash, tenant: organizationId });
        if (!invitation || invitation.accepted_at || invitation.expired) throw invitationNotFound();
        const user = (await users.getUser(userId, tx))!;
        if (user.email.toLowerCase() !== invitation.email.toLowerCase()) {
          throw forbidden('This invitation was sent to another email address');
        }
        const memberId = await membership.addMember(tx, invitation.organization_id, userId, invitation.role);
        if (!memberId) throw invitationErrors.already_member('You are already a member of this organization');
        await store.markInvitationAccepted(tx, invitation.organization_id, invitation.id);
        // A session with no usable active organization (none, or one the user is no longer an active
        // member of) gets the one just joined; a usable one is left alone.
        await membership.setSessionOrganizationIfUnusable(tx, sessionOf(ctx.actor), invitation.organization_id);
        // Other invitations of this person to this organization have done their work; left pending,
        // one would let them back in after an administrator removed them.
        await store.expirePendingInvitations(tx, invitation.organization_id, invitation.email);
        tx.audit({
          action: 'invitation.accepted',
          organizationId: invitation.organization_id,
          target: { type: 'invitation', id: invitation.id, name: invitation.email },
          changes: { memberId, role: invitation.role },
        });
        return (await membership.getMember(invitation.organization_id, memberId, tx))!;
      });
    },

    /** Pending invitations only (not accepted, expired or ended), newest first; never their tokens. */
    async listInvitations(caller: Caller, organizationId: string, page: { limit: number; after?: string | undefined }) {
      await membership.requireMembership(caller, organizationId, invitePermission);
      return store.listPendingInvitations(db, organizationId, page.limit, page.after);
    },

    /**
     * Ends a pending invitation, as a removal of its sender would: accepting it is then refused like an
     * unknown token. Whoever sent it; one of another organization, or one no longer pending, is not found.
     */
    async revokeInvitation(
      ctx: CallerContext,
      organizationId: string,
      invitationId: string,
      requireFresh: FreshAuthenticationCheck,
    ): Promise<void> {
      await membership.requireMembership(ctx.actor, organizationId, invitePermission);
      requireFresh();
      const ended = await writeTransaction(db, ctx, async (tx) => {
        const email = await store.endPendingInvitation(tx, organizationId, invitationId);
        if (email !== undefined)
          tx.audit({
            action: 'invitation.revoked',
            organizationId,
            target: { type: 'invitation', id: invitationId, name: email },
          });
        return email !== undefined;
      });
      if (!ended) {
        throw invitationErrors.invitation_not_found('No such pending invitation in this organization');
      }
    },
  };
}

export type InvitationService = ReturnType<typeof createInvitationService>;
