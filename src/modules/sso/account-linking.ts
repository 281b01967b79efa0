// Which existing account an SSO sign-in may take as the identity provider's person, and what taking it
// ends. The e-mail alone is not enough: anyone may sign up with a password under any address before its
// holder ever signs in through SSO, and if the person's sign-in then took that account, its sign-up
// session and its password would reach the organization (the member list, the person's memories). So an
// account the IdP's subject is not linked to yet is taken only on a ground that ties it to the
// organization, or when orgplane verified its address; SCIM refuses to link a signed-up account likewise.
import type { WriteTransaction } from '../../platform/write-context.ts';
import type { MembershipSessions } from '../identity/index.ts';
import type { UserRecord } from '../users/index.ts';
import { createSignInStore } from './sign-in-store.ts';
import type { SsoConnectionRow } from './store.ts';

/**
 * Why the sign-in may take an account: it is a member of the organization, the organization's directory
 * (SCIM) provisioned it, the organization's SSO linked it before (to another subject), orgplane verified
 * its e-mail address, or just-in-time provisioning made it in this very sign-in.
 */
export type LinkGround = 'member' | 'scim_provisioned' | 'linked_before' | 'email_verified' | 'just_in_time';

/** What the person reads when an account with their address exists that the sign-in may not take. */
export function accountNotLinkableMessage(email: string): string {
  return (
    `An orgplane account with the e-mail address ${email} already exists, and nothing shows that it is yours: ` +
    'it is not a member of this organization, and its address was never verified. Your sign-in was not linked to it, and nothing was changed. ' +
    'If you made that account, sign in with its password and ask an administrator to invite you; if you did not, tell an administrator of your organization.'
  );
}

/** An account with the address appeared while the sign-in ran (a sign-up racing it): not taken unjudged. */
export function accountAppearedMessage(email: string): string {
  return (
    `An orgplane account with the e-mail address ${email} was made while you were signing in, and your sign-in was not linked to it. ` +
    'Start the sign-in again; if this happens again, tell an administrator of your organization.'
  );
}

export interface AccountLinkingDeps {
  membership: Pick<MembershipSessions, 'revokeUserSessions'>;
}

export function createAccountLinking(deps: AccountLinkingDeps) {
  const store = createSignInStore();
  return {
    /**
     * The ground on which the organization's SSO may take this existing account (undefined: none), and
     * whether the organization's SSO linked it before (then linking another subject is not its first link).
     */
    async judge(
      tx: WriteTransaction,
      organizationId: string,
      user: UserRecord,
      isMember: boolean,
    ): Promise<{ ground: LinkGround | undefined; linkedBefore: boolean }> {
      const ties = await store.findAccountTies(tx, organizationId, user.id);
      const ground: LinkGround | undefined = isMember
        ? 'member'
        : ties.linked
          ? 'linked_before'
          : ties.provisioned
            ? 'scim_provisioned'
            : user.email_verified_at
              ? 'email_verified'
              : undefined;
      return { ground, linkedBefore: ties.linked };
    },

    /**
     * Links the subject to the account; false when the subject is linked to another account. `firstLink`
     * (the account had no link in the organization): from now on the identity provider's person holds
     * the account, so every session opened before ends (whoever held the account until now signs in
     * again), recorded as `sso.account_linked`.
     */
    async link(
      tx: WriteTransaction,
      connection: Pick<SsoConnectionRow, 'organization_id' | 'id' | 'protocol'>,
      subject: string,
      user: Pick<UserRecord, 'id' | 'email'>,
      firstLink: { ground: LinkGround } | undefined,
    ): Promise<boolean> {
      const organizationId = connection.organization_id;
      if (!(await store.link(tx, { connectionId: connection.id, subject, organizationId, userId: user.id })))
        return false;
      if (firstLink) {
        const revokedSessions = await deps.membership.revokeUserSessions(tx, user.id);
        tx.audit({
          action: 'sso.account_linked',
          organizationId,
          actorUserId: user.id,
          target: { type: 'user', id: user.id, name: user.email },
          changes: {
            connectionId: connection.id,
            protocol: connection.protocol,
            subject,
            ground: firstLink.ground,
            revokedSessions,
          },
        });
      }
      return true;
    },
  };
}

export type AccountLinking = ReturnType<typeof createAccountLinking>;
