// The last step of an SSO sign-in: the app that received the one-time code exchanges it, with its PKCE
// verifier, for a session (or a step-up of its own session).
import { ApiError, unauthorized } from '../../http/errors.ts';
import type { Caller } from '../../http/caller.ts';
import { httpErrors } from '../../http/error-codes.ts';
import { pkceVerifierMatches } from '../../platform/pkce.ts';
import { hashToken } from '../../platform/tokens.ts';
import { writeTransaction, type WriteContext } from '../../platform/write-context.ts';
import { sessionOf } from '../identity/index.ts';
import { ssoErrors } from './error-codes.ts';
import type { SignInServiceDeps } from './sign-in-deps.ts';
import type { FailureRecorder } from './sign-in-refusals.ts';
import type { SignInStore } from './sign-in-store.ts';

export function createCodeExchange(
  deps: Pick<SignInServiceDeps, 'db' | 'membership' | 'users'>,
  store: SignInStore,
  recordFailure: FailureRecorder,
) {
  const { db } = deps;
  /**
   * Exchanges a one-time code and its PKCE verifier for a session (or, for a step-up, refreshes the
   * calling session of the same person). The code is spent whatever the outcome.
   */
  return async function exchangeCode(
    context: Omit<WriteContext, 'actor'>,
    input: { code: string; codeVerifier: string },
    caller: Caller | null,
  ) {
    const invalidGrant = () =>
      ssoErrors.invalid_grant('The code is unknown, expired, already used, or does not match the code verifier');
    const code = await store.takeCode(db, hashToken(input.code));
    // An unknown code names no organization, and anyone may send one: it is refused and recorded nowhere.
    if (!code) throw invalidGrant();
    // The exchange's refusals are the caller's, not the connection's: an event, no change of its health.
    const refuse = async (error: ApiError, category: string): Promise<never> => {
      await recordFailure(
        context,
        { organization_id: code.organization_id, id: code.connection_id },
        category,
        error.message,
        { userId: code.user_id, health: false },
      );
      throw error;
    };
    if (!pkceVerifierMatches(input.codeVerifier, code.client_code_challenge))
      return refuse(invalidGrant(), 'code_verifier_mismatch');
    // A step-up refreshes the session that asked for it, and only that person's.
    if (code.reauthenticate && (!caller?.sessionId || caller.userId !== code.user_id))
      return refuse(unauthorized(), 'reauthentication_session_mismatch');
    try {
      return await writeTransaction(db, { ...context, actor: caller ?? { kind: 'anonymous' } }, async (tx) => {
        const member = await deps.membership.getMemberByUser(code.organization_id, code.user_id, tx);
        if (member?.status !== 'active' || !(await deps.membership.lockMember(tx, code.organization_id, member.id))) {
          throw httpErrors.forbidden('You are no longer an active member of this organization');
        }
        const user = (await deps.users.getUser(code.user_id, tx))!;
        if (code.reauthenticate) {
          const authenticatedAt = await deps.membership.markSessionAuthenticated(tx, sessionOf(caller!), 'sso');
          if (!authenticatedAt) throw unauthorized();
          tx.audit({
            action: 'user.reauthenticated',
            organizationId: code.organization_id,
            target: { type: 'session', id: caller!.sessionId! },
            changes: { authMethod: 'sso', connectionId: code.connection_id },
          });
          return { user, organizationId: code.organization_id, authenticatedAt };
        }
        const sessionToken = await deps.membership.issueSession(tx, code.user_id, code.organization_id, 'sso');
        // Like a password sign-in's event, in the organization whose connection signed the person in.
        tx.audit({
          action: 'user.signed_in',
          organizationId: code.organization_id,
          actorUserId: user.id,
          target: { type: 'user', id: user.id, name: user.email },
          changes: { method: 'sso', connectionId: code.connection_id },
        });
        return { user, organizationId: code.organization_id, sessionToken };
      });
    } catch (error) {
      if (error instanceof ApiError && error.statusCode === 403 && error.code === httpErrors.forbidden.code)
        return refuse(error, 'member_inactive');
      throw error;
    }
  };
}
