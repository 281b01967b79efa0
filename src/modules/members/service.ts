// An organization's members: listing them, their roles, removals and the transfer of ownership. Every
// change runs under the organization's member-change lock (the membership core's changeMembers).
import type { RoleGrants } from '../roles/index.ts';
import type { Role } from '../../http/caller.ts';
import type { Queryable } from '../../db/database.ts';
import type { FreshAuthenticationCheck } from '../../http/auth.ts';
import type { Caller } from '../../http/caller.ts';
import { forbidden, missingPermission } from '../../http/errors.ts';
import type { CallerContext } from '../../platform/write-context.ts';
import type { MemberRecord, MembershipAuthorization } from '../identity/index.ts';
import { identityErrors } from '../identity/index.ts';
import { memberErrors } from './error-codes.ts';

/**
 * What another module does when a member is removed, for what it keeps of theirs that the removal's
 * cascade deletes (the MCP connections' OAuth tokens, revoked at their providers): called in the
 * removal's transaction before the member's rows go, it returns what runs once the removal commits.
 */
export interface MemberRemovalHook {
  beforeRemoval(tx: Queryable, organizationId: string, memberId: string): Promise<() => Promise<void>>;
}

export interface MemberServiceDeps {
  membership: Pick<
    MembershipAuthorization,
    'requireMembership' | 'changeMembers' | 'listMembers' | 'getMember' | 'setMemberRole' | 'deleteMember'
  >;
  removalHooks?: MemberRemovalHook[];
  /** Whether the caller may give the new role (and take the old one away). */
  roleGrants: RoleGrants;
}

export function createMemberService(deps: MemberServiceDeps) {
  const { membership } = deps;

  async function requireOrganizationMember(
    organizationId: string,
    memberId: string,
    tx: Queryable,
  ): Promise<MemberRecord> {
    const member = await membership.getMember(organizationId, memberId, tx);
    if (!member) throw identityErrors.member_not_found('No such member in this organization');
    return member;
  }

  return {
    async listMembers(caller: Caller, organizationId: string, page: { limit: number; after?: string | undefined }) {
      await membership.requireMembership(caller, organizationId);
      return membership.listMembers(organizationId, page);
    },

    async changeMemberRole(
      ctx: CallerContext,
      organizationId: string,
      memberId: string,
      role: Role,
      requireFresh: FreshAuthenticationCheck,
    ) {
      const acting = await membership.requireMembership(ctx.actor, organizationId, 'members.update_role');
      requireFresh();
      return membership.changeMembers(ctx, organizationId, async (tx) => {
        const member = await requireOrganizationMember(organizationId, memberId, tx);
        if (member.role === 'owner')
          throw memberErrors.owner_role_fixed("The owner's role changes only by transferring ownership");
        // Nobody gives a key they lack, nor takes away a role they could not have given.
        await deps.roleGrants.requireGrantable(tx, organizationId, role, acting.permissions);
        await deps.roleGrants.requireGrantable(tx, organizationId, member.role, acting.permissions);
        await membership.setMemberRole(tx, organizationId, member, role);
        tx.audit({
          action: 'member.role_changed',
          organizationId,
          target: { type: 'member', id: member.id, name: member.email },
          changes: { role: { from: member.role, to: role } },
        });
        return { ...member, role };
      });
    },

    /** Anyone leaves; owners and admins remove others, which is privileged (`requireFresh`: a recent authentication). */
    async removeMember(
      ctx: CallerContext,
      organizationId: string,
      memberId: string,
      requireFresh: FreshAuthenticationCheck,
    ): Promise<void> {
      const acting = await membership.requireMembership(ctx.actor, organizationId);
      const leavingThemselves = acting.memberId === memberId;
      if (!leavingThemselves && !acting.permissions.has('members.remove')) throw missingPermission('members.remove');
      if (!leavingThemselves) requireFresh();
      const afterwards = await membership.changeMembers(ctx, organizationId, async (tx) => {
        const member = await requireOrganizationMember(organizationId, memberId, tx);
        if (member.role === 'owner')
          throw memberErrors.owner_cannot_be_removed('Transfer ownership before removing the owner');
        const pending: Array<() => Promise<void>> = [];
        for (const hook of deps.removalHooks ?? [])
          pending.push(await hook.beforeRemoval(tx, organizationId, memberId));
        // Leaving is the person's own choice; a removal stands against SSO's just-in-time provisioning.
        await membership.deleteMember(tx, organizationId, memberId, leavingThemselves ? undefined : 'administrator');
        tx.audit({
          action: leavingThemselves ? 'member.left' : 'member.removed',
          organizationId,
          target: { type: 'member', id: member.id, name: member.email },
          changes: { role: member.role },
        });
        return pending;
      });
      // Committed: the hooks' follow-ups (best effort by contract) cannot undo the removal.
      for (const run of afterwards) await run();
    },

    async transferOwnership(
      ctx: CallerContext,
      organizationId: string,
      memberId: string,
      requireFresh: FreshAuthenticationCheck,
    ) {
      const acting = await membership.requireMembership(ctx.actor, organizationId);
      if (acting.role !== 'owner') throw forbidden('This needs the role owner');
      requireFresh();
      return membership.changeMembers(ctx, organizationId, async (tx) => {
        // Still the owner: an earlier transfer may have made the caller an admin meanwhile.
        const self = await membership.getMember(organizationId, acting.memberId!, tx);
        if (self?.role !== 'owner') throw forbidden('This needs the role owner');
        const member = await membership.getMember(organizationId, memberId, tx);
        if (member?.status !== 'active')
          throw identityErrors.member_not_found('No such active member in this organization');
        tx.audit({
          action: 'organization.ownership_transferred',
          organizationId,
          target: { type: 'member', id: member.id, name: member.email },
          changes: { owner: { from: self.id, to: member.id } },
        });
        if (member.id === acting.memberId) return member;
        // Demote first: the one-owner index would refuse two owners even inside the transaction.
        await membership.setMemberRole(tx, organizationId, self, 'admin');
        await membership.setMemberRole(tx, organizationId, member, 'owner');
        return { ...member, role: 'owner' as const };
      });
    },
  };
}

export type MemberService = ReturnType<typeof createMemberService>;
