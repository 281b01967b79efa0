// Which account the IdP's person is in the connection's organization: the linked subject's, an
// existing account of the e-mail only on a ground (account-linking.ts), or one provisioned just in time.
import type { WriteTransaction } from '../../platform/write-context.ts';
import type { UserRecord } from '../users/index.ts';
import {
  accountAppearedMessage,
  accountNotLinkableMessage,
  type AccountLinking,
  type LinkGround,
} from './account-linking.ts';
import type { SignInServiceDeps } from './sign-in-deps.ts';
import { SignInRefused } from './sign-in-refusals.ts';
import type { SignInStore } from './sign-in-store.ts';
import type { SsoConnectionRow } from './store.ts';

export function createAccountResolver(
  deps: Pick<SignInServiceDeps, 'users' | 'membership' | 'teams'>,
  store: SignInStore,
  linking: AccountLinking,
) {
  /**
   * The account the IdP's person is, in the connection's organization, or a refusal. Inside the sign-in's
   * transaction. An account the subject is not linked to yet is taken only on a ground (account-linking.ts);
   * a step-up (`reauthenticate`) re-authenticates the session that asked for it, so it links nothing and
   * ends no session: the account is linked at its next sign-in.
   */
  async function resolveAccount(
    tx: WriteTransaction,
    connection: SsoConnectionRow,
    claims: { sub: string; email: string; name?: string },
    byEmail: UserRecord | undefined,
    reauthenticate: boolean,
  ): Promise<{ user: UserRecord; memberId: string }> {
    const organizationId = connection.organization_id;
    const linked = await store.findLinkedUser(tx, connection.organization_id, connection.id, claims.sub);
    let user = linked ? await deps.users.getUser(linked, tx) : byEmail;
    let member = user ? await deps.membership.getMemberByUser(organizationId, user.id, tx) : undefined;
    if (member?.status === 'suspended')
      throw new SignInRefused(
        403,
        'member_suspended',
        'Your membership of this organization is suspended. Ask an administrator.',
        user!.id,
      );
    if (!member) {
      // A removal stands until the organization makes the person a member again (an invitation, SCIM):
      // just-in-time provisioning adds people who were never members, never ones who were taken out.
      const removal = user ? await deps.membership.getMemberRemoval(organizationId, user.id, tx) : undefined;
      if (removal) {
        const by = removal.removedBy === 'scim' ? "by your organization's directory (SCIM)" : 'by an administrator';
        throw new SignInRefused(
          403,
          'member_removed',
          `You were removed from this organization ${by}. Ask an administrator to invite you again.`,
          user!.id,
        );
      }
    }
    let firstLink: { ground: LinkGround } | undefined;
    if (user && !linked) {
      // Not named as the refusal's actor: whoever holds that account is not the person signing in.
      const judged = await linking.judge(tx, organizationId, user, member !== undefined);
      if (!judged.ground) throw new SignInRefused(403, 'account_not_linkable', accountNotLinkableMessage(user.email));
      if (!judged.linkedBefore) firstLink = { ground: judged.ground };
    }
    if (!member) {
      if (!connection.jit_enabled) {
        throw new SignInRefused(
          403,
          'not_a_member',
          'You are not a member of this organization, and it does not add people at their first sign-in. Ask an administrator to invite you.',
          user?.id,
        );
      }
      if (!user) {
        user = await deps.users.createUserWithoutPassword(tx, {
          email: claims.email,
          name: claims.name?.trim() || claims.email,
        });
        if (!user) throw new SignInRefused(403, 'account_not_linkable', accountAppearedMessage(claims.email));
        firstLink = { ground: 'just_in_time' };
      }
      await deps.membership.addMember(tx, organizationId, user.id, connection.jit_default_role);
      member = (await deps.membership.getMemberByUser(organizationId, user.id, tx))!;
      await deps.teams.addMemberToTeams(tx, organizationId, member.id, connection.jit_default_team_ids);
      tx.audit({
        action: 'member.provisioned',
        organizationId,
        actorUserId: user.id,
        target: { type: 'member', id: member.id, name: user.email },
        changes: {
          via: 'sso_just_in_time',
          protocol: connection.protocol,
          role: connection.jit_default_role,
          teamIds: connection.jit_default_team_ids,
        },
      });
    }
    if (!reauthenticate && !linked && !(await linking.link(tx, connection, claims.sub, user!, firstLink))) {
      throw new SignInRefused(
        409,
        'subject_conflict',
        'This identity is linked to another account here. Ask an administrator.',
        user!.id,
      );
    }
    return { user: user!, memberId: member.id };
  }
  return resolveAccount;
}
