// SSO sign-in: home-realm discovery by the e-mail's verified domain, the IdP round trip (oidc.ts), the
// account (the linked subject's, an existing account of the e-mail only on a ground: account-linking.ts,
// or just-in-time provisioning), and the one-time code the caller's redirect URI receives and exchanges,
// with its PKCE verifier, for a session. No session token ever travels in a URL. A sign-in is bound to
// the browser that opens its link first (GET /v1/auth/sso/authorize, platform/browser-binding.ts): the
// IdP's answer is used only when that browser brings it back.
import {
  bindingCookie,
  bindingHash,
  browserSecret,
  sameBrowser,
  type BrowserBindingCookie,
} from '../../platform/browser-binding.ts';
import { pkceVerifierMatches } from '../../platform/pkce.ts';
import type { Database } from '../../db/database.ts';
import { ApiError, invalidRequest, rateLimited, unauthorized } from '../../http/errors.ts';
import { OutboundBlockedError, OutboundResponseTooLargeError, OutboundTimeoutError } from '../../platform/outbound.ts';
import type { RateLimiter } from '../../platform/rate-limiter.ts';
import type { Caller } from '../../http/caller.ts';
import { hashToken, randomToken } from '../../platform/tokens.ts';
import type { SecretBox } from '../../platform/secrets.ts';
import { writeTransaction, type WriteContext, type WriteTransaction } from '../../platform/write-context.ts';
import { sessionOf, type MembershipAuthorization, type MembershipSessions } from '../identity/index.ts';
import type { TeamDirectory } from '../teams/index.ts';
import type { UserDirectory, UserRecord } from '../users/index.ts';
import {
  accountAppearedMessage,
  accountNotLinkableMessage,
  createAccountLinking,
  type LinkGround,
} from './account-linking.ts';
import { trustedEmail, type PersonClaims } from './email-trust.ts';
import { UserInfoSubjectMismatch, type OidcRelyingParty } from './oidc.ts';
import type { SamlServiceProvider } from './saml.ts';
import { createSignInStore, type PendingSignIn, type SignInRequestRow } from './sign-in-store.ts';
import type { SsoConnectionRow } from './store.ts';
import { httpErrors } from '../../http/error-codes.ts';
import { ssoErrors } from './error-codes.ts';

/** A sign-in at the IdP must come back within this long. */
const requestTtlSeconds = 10 * 60;
/** The code handed to the redirect URI is exchanged at once by the app that receives it. */
export const codeTtlSeconds = 60;

/** A refusal the person sees: a category for the connection's health and a message (never a token). */
export class SignInRefused extends Error {
  readonly category: string;
  readonly status: number;
  /** The account the refusal concerns, when one was found (the failure's audit event names them). */
  readonly userId: string | undefined;
  constructor(status: number, category: string, message: string, userId?: string) {
    super(message);
    this.category = category;
    this.status = status;
    this.userId = userId;
  }
}

/** Whether a failed code exchange failed to reach the IdP (network, timeout, the outbound guard, its 5xx) rather than a check. */
function unreachable(error: unknown): boolean {
  for (let cause = error, depth = 0; cause instanceof Error && depth < 5; cause = cause.cause, depth++) {
    if (
      cause instanceof OutboundTimeoutError ||
      cause instanceof OutboundBlockedError ||
      cause instanceof OutboundResponseTooLargeError
    )
      return true;
    if (
      cause.name === 'TimeoutError' ||
      cause.name === 'AbortError' ||
      (cause instanceof TypeError && /fetch failed/i.test(cause.message))
    )
      return true;
    const code = (cause as Error & { code?: unknown }).code;
    if (typeof code === 'string' && /^(ECONN|ENOTFOUND|EAI_|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|UND_ERR)/.test(code))
      return true;
    const status = (cause as Error & { status?: unknown }).status;
    if (typeof status === 'number' && status >= 500) return true;
  }
  return false;
}

/** The innermost message of an error chain, for the connection's health (never a token: these are network errors). */
function describeCause(error: unknown): string {
  let message = 'unknown error';
  for (let cause = error, depth = 0; cause instanceof Error && depth < 5; cause = cause.cause, depth++)
    message = cause.message || message;
  return message;
}

/** Refusals of the person (the organization's rules), recorded as `denied`; the others (the IdP's answer, its configuration) as `failure`. */
const personRefusals = new Set([
  'email_not_verified',
  'email_outside_domain',
  'not_a_member',
  'account_not_linkable',
  'member_suspended',
  'member_removed',
  'subject_conflict',
  'member_inactive',
  'code_verifier_mismatch',
  'reauthentication_session_mismatch',
  'browser_mismatch',
]);

export interface SignInServiceDeps {
  db: Database;
  secrets: SecretBox;
  oidc: OidcRelyingParty;
  /** A SAML connection's start (the AuthnRequest orgplane sends, and the URL that carries it), and its link opened. */
  saml: Pick<SamlServiceProvider, 'startRequest' | 'openRequest'>;
  membership: Pick<MembershipAuthorization, 'getMemberByUser' | 'getMemberRemoval' | 'addMember' | 'lockMember'> &
    Pick<MembershipSessions, 'issueSession' | 'markSessionAuthenticated' | 'revokeUserSessions'>;
  users: Pick<UserDirectory, 'getUser' | 'findUserByEmail' | 'createUserWithoutPassword'>;
  teams: Pick<TeamDirectory, 'addMemberToTeams'>;
  publicUrl: string;
  /** Where a sign-in may send its code (platform/redirect-uris.ts). */
  redirectUriAllowed: (uri: string) => boolean;
  rateLimiter: RateLimiter;
  /** SSO_START_ATTEMPTS_PER_ADDRESS, per startLimitWindowSeconds. */
  startAttemptsPerAddress: number;
}

/** Starting a sign-in is limited per client address in fixed windows this long. */
export const startLimitWindowSeconds = 15 * 60;

export const oidcCallbackPath = '/v1/auth/sso/oidc/callback';
/** A sign-in's link: where the browser goes first, to be bound to the sign-in before it leaves for the IdP. */
export const authorizePath = '/v1/auth/sso/authorize';

/**
 * The cookie that binds a sign-in to its browser: on every route of the round trip (the link, the OIDC
 * callback, the SAML ACS). SameSite=None (over https): a SAML IdP's answer is a cross-site form post.
 */
export const ssoBrowserCookie: BrowserBindingCookie = { name: 'orgplane_sso', path: '/v1/auth/sso/', sameSite: 'none' };

const otherBrowser =
  'This sign-in was started in another browser. Finish it in the browser that started it, or start the sign-in again from this one.';
const unknownLink = 'This sign-in link has expired or was already used. Start the sign-in again.';

export function createSignInService(deps: SignInServiceDeps) {
  const { db } = deps;
  const store = createSignInStore();
  const linking = createAccountLinking(deps);
  const callbackUrl = `${deps.publicUrl}${oidcCallbackPath}`;

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

  /**
   * A refused or failed sign-in, recorded in a transaction of its own (the sign-in fails, the record
   * stays): an `sso.sign_in_failed` event in the connection's organization with the reason's category,
   * and, for what the connection's health should show (`health`), its last error. Never a token: the
   * messages are orgplane's own or name the check that failed.
   */
  async function recordFailure(
    context: Omit<WriteContext, 'actor'>,
    connection: Pick<SsoConnectionRow, 'organization_id' | 'id'> &
      Partial<Pick<SsoConnectionRow, 'domain' | 'protocol'>>,
    category: string,
    message: string,
    detail: { email?: string | undefined; userId?: string | undefined; health?: boolean } = {},
  ): Promise<void> {
    await writeTransaction(db, { ...context, actor: { kind: 'anonymous' } }, async (tx) => {
      if (detail.health !== false)
        await store.recordError(tx, connection.organization_id, connection.id, category, message);
      tx.audit({
        action: 'sso.sign_in_failed',
        outcome: personRefusals.has(category) ? 'denied' : 'failure',
        organizationId: connection.organization_id,
        target: { type: 'sso_connection', id: connection.id, name: connection.domain ?? null },
        changes: {
          method: 'sso',
          ...(connection.protocol ? { protocol: connection.protocol } : {}),
          reason: category,
          message: message.slice(0, 500),
          ...(detail.email ? { email: detail.email } : {}),
        },
        ...(detail.userId ? { actorUserId: detail.userId } : {}),
      });
    });
  }

  const service = {
    recordFailure,

    /**
     * The return of a sign-in in progress (the OIDC callback, the SAML ACS), before anything the IdP sent
     * is used: refused, and recorded, unless the browser carries the secret of the one that opened the link.
     */
    async refuseOtherBrowser(
      context: Omit<WriteContext, 'actor'>,
      pending: PendingSignIn,
      carried: string | null,
    ): Promise<void> {
      if (sameBrowser(carried, pending.browser_binding_hash)) return;
      const connection = await store.findById(db, pending.organization_id, pending.connection_id);
      await recordFailure(
        context,
        connection ?? { organization_id: pending.organization_id, id: pending.connection_id },
        'browser_mismatch',
        otherBrowser,
      );
      throw new SignInRefused(403, 'browser_mismatch', otherBrowser);
    },

    /**
     * A browser opens a sign-in's link: the first one binds the sign-in to itself (the same one may open
     * it again); any other is refused. Where the browser goes (the IdP), and the cookie it keeps.
     */
    async openLink(linkId: string | undefined, carried: string | null): Promise<{ location: string; cookie: string }> {
      const secret = browserSecret(carried);
      const linkHash = linkId ? hashToken(linkId) : undefined;
      const opened = linkHash
        ? ((await store.openRequest(db, linkHash, bindingHash(secret))) ??
          (await deps.saml.openRequest(linkHash, bindingHash(secret))))
        : undefined;
      if (!opened) throw new SignInRefused(400, 'unknown_state', unknownLink);
      if (!sameBrowser(secret, opened.browser_binding_hash))
        throw new SignInRefused(403, 'browser_mismatch', otherBrowser);
      return {
        location: deps.secrets.open(opened.authorization_url_sealed),
        cookie: bindingCookie(ssoBrowserCookie, deps.publicUrl, secret, requestTtlSeconds),
      };
    },

    /** Home-realm discovery and the IdP's authorization URL for a new sign-in. */
    async start(
      input: { email: string; redirectUri: string; codeChallenge: string; reauthenticate: boolean },
      context: Omit<WriteContext, 'actor'>,
    ): Promise<string> {
      // Every attempt counts, whatever its answer: each one may fetch the IdP's configuration and stores
      // a sign-in in progress, and its answer tells which domains sign in with SSO.
      const limit = await deps.rateLimiter.hit(
        `sso-start:address:${context.clientAddress ?? 'unknown'}`,
        deps.startAttemptsPerAddress,
        startLimitWindowSeconds,
      );
      if (!limit.allowed) throw rateLimited(limit, 'Too many SSO sign-ins started from this address; try again later');
      if (!deps.redirectUriAllowed(input.redirectUri)) {
        throw invalidRequest(
          [
            {
              message:
                "Not an allowed redirect URI: the console's /sso/callback or /sso/test-done page of this server (exactly), a loopback address on another port than this server's, the orgplane: scheme, or one of SSO_REDIRECT_URIS",
              path: ['redirectUri'],
            },
          ],
          'The redirect URI is not allowed',
        );
      }
      const domain = input.email.slice(input.email.lastIndexOf('@') + 1).toLowerCase();
      const connection = await store.findByVerifiedDomain(db, domain);
      if (!connection)
        throw ssoErrors.sso_not_configured(
          `No organization signs in with SSO for ${domain}; sign in with your password`,
        );
      // The sign-in's link: the caller's browser opens it, is bound to the sign-in, and goes on to the IdP's URL.
      const linkId = randomToken();
      const link = (idpUrl: string) => ({
        authorize_hash: hashToken(linkId),
        authorization_url_sealed: deps.secrets.seal(idpUrl),
      });
      const linkUrl = `${deps.publicUrl}${authorizePath}?${new URLSearchParams({ request: linkId })}`;
      if (connection.protocol === 'saml') {
        await deps.saml.startRequest(connection, input, link);
        return linkUrl;
      }
      const state = randomToken();
      const nonce = randomToken();
      const codeVerifier = randomToken();
      let authorizationUrl: string;
      try {
        authorizationUrl = await deps.oidc.authorizationUrl(connection, {
          redirectUri: callbackUrl,
          state,
          nonce,
          codeVerifier,
          loginHint: input.email,
          reauthenticate: input.reauthenticate,
        });
      } catch (error) {
        const message = `The identity provider's configuration could not be read: ${error instanceof Error ? error.message : 'unknown error'}`;
        await recordFailure(context, connection, 'discovery_failed', message);
        throw ssoErrors.sso_provider_unavailable(message);
      }
      await store.insertRequest(db, {
        state_hash: hashToken(state),
        organization_id: connection.organization_id,
        connection_id: connection.id,
        nonce,
        code_verifier_sealed: deps.secrets.seal(codeVerifier),
        redirect_uri: input.redirectUri,
        client_code_challenge: input.codeChallenge,
        reauthenticate: input.reauthenticate,
        ...link(authorizationUrl),
        ttlSeconds: requestTtlSeconds,
      });
      return linkUrl;
    },

    /**
     * The IdP's return: checks everything, finds (or provisions) the account, and answers where to send
     * the browser: the caller's redirect URI with a one-time code. Refusals throw SignInRefused.
     */
    async callback(
      context: Omit<WriteContext, 'actor'>,
      query: Record<string, string | undefined>,
      rawQuery: string,
      carried: string | null,
    ): Promise<string> {
      const state = query.state;
      const pending = state ? await store.pendingRequest(db, hashToken(state)) : undefined;
      if (!pending) throw new SignInRefused(400, 'unknown_state', unknownLink);
      // The browser before the sign-in is taken: another browser's refusal leaves it to its own.
      await service.refuseOtherBrowser(context, pending, carried);
      const request = await store.takeRequest(db, hashToken(state!));
      if (!request) throw new SignInRefused(400, 'unknown_state', unknownLink);
      const connection = await store.findById(db, request.organization_id, request.connection_id);
      if (!connection)
        throw new SignInRefused(
          400,
          'unknown_state',
          'The SSO connection changed during the sign-in. Start the sign-in again.',
        );
      const fail = async (category: string, message: string, status = 403): Promise<never> => {
        await recordFailure(context, connection, category, message);
        throw new SignInRefused(status, category, message);
      };
      if (query.error)
        await fail('idp_error', `The identity provider refused the sign-in (${query.error.slice(0, 100)}).`);
      let claims: Awaited<ReturnType<OidcRelyingParty['exchange']>>;
      try {
        claims = await deps.oidc.exchange(connection, new URL(`${callbackUrl}?${rawQuery}`), {
          state: state!,
          nonce: request.nonce,
          codeVerifier: deps.secrets.open(request.code_verifier_sealed),
          reauthenticate: request.reauthenticate,
        });
      } catch (error) {
        if (error instanceof UserInfoSubjectMismatch) return fail('userinfo_subject_mismatch', error.message);
        // openid-client's messages name the failed check (signature, iss, aud, exp, nonce...) and never a token.
        if (unreachable(error))
          return fail(
            'provider_unavailable',
            `The identity provider could not be reached to complete the sign-in: ${describeCause(error)}`,
            502,
          );
        return fail(
          'token_rejected',
          `The identity provider's answer was refused: ${error instanceof Error ? error.message : 'unknown error'}`,
        );
      }
      return service.complete(context, connection, request, claims);
    },

    /**
     * The end of every sign-in, whatever the protocol, once the IdP's answer has passed its checks: the
     * e-mail (trusted under the connection's rule, in its verified domain: email-trust.ts), the account,
     * the one-time code, and where the browser goes next. SAML's ACS calls it too (saml-acs.ts). Refusals throw SignInRefused.
     */
    async complete(
      context: Omit<WriteContext, 'actor'>,
      connection: SsoConnectionRow,
      request: Pick<SignInRequestRow, 'redirect_uri' | 'client_code_challenge' | 'reauthenticate'>,
      claims: PersonClaims,
    ): Promise<string> {
      const trusted = trustedEmail(connection, claims);
      const { email } = trusted;
      const fail = async (category: string, message: string, status = 403, userId?: string): Promise<never> => {
        await recordFailure(context, connection, category, message, { email, userId });
        throw new SignInRefused(status, category, message);
      };
      if (trusted.refused) return fail(trusted.refused, trusted.message);
      const code = randomToken();
      // Read before the transaction (the directory reads outside it): the account the verified e-mail names.
      const byEmail = await deps.users.findUserByEmail(trusted.email);
      try {
        // Nobody is signed in yet: the person's events name them as the actor (actorUserId), as password sign-in's do.
        await writeTransaction(db, { ...context, actor: { kind: 'anonymous' } }, async (tx) => {
          const name = typeof claims.name === 'string' ? claims.name : undefined;
          const { user } = await resolveAccount(
            tx,
            connection,
            { sub: claims.sub, email: trusted.email, ...(name ? { name } : {}) },
            byEmail,
            request.reauthenticate,
          );
          await store.insertCode(tx, {
            code_hash: hashToken(code),
            organization_id: connection.organization_id,
            connection_id: connection.id,
            user_id: user.id,
            client_code_challenge: request.client_code_challenge,
            reauthenticate: request.reauthenticate,
            ttlSeconds: codeTtlSeconds,
          });
          await store.recordSignIn(tx, connection.organization_id, connection.id);
        });
      } catch (error) {
        if (error instanceof SignInRefused) return fail(error.category, error.message, error.status, error.userId);
        throw error;
      }
      const target = new URL(request.redirect_uri);
      target.searchParams.set('code', code);
      return target.href;
    },

    /**
     * Exchanges a one-time code and its PKCE verifier for a session (or, for a step-up, refreshes the
     * calling session of the same person). The code is spent whatever the outcome.
     */
    async exchangeCode(
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
    },
  };
  return service;
}

export type SignInService = ReturnType<typeof createSignInService>;
