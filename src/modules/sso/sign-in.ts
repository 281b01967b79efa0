// SSO sign-in: home-realm discovery by the e-mail's verified domain, the IdP round trip (oidc.ts), the
// account (the linked subject's, an existing account of the e-mail only on a ground: account-linking.ts,
// or just-in-time provisioning), and the one-time code the caller's redirect URI receives and exchanges,
// with its PKCE verifier, for a session. No session token ever travels in a URL. A sign-in is bound to
// the browser that opens its link first (GET /v1/auth/sso/authorize, platform/browser-binding.ts): the
// IdP's answer is used only when that browser brings it back.
// The account is chosen in sign-in-account.ts, refusals are recorded in sign-in-refusals.ts, and the
// code is exchanged in sign-in-code-exchange.ts.
import {
  bindingCookie,
  bindingHash,
  browserSecret,
  sameBrowser,
  type BrowserBindingCookie,
} from '../../platform/browser-binding.ts';
import { invalidRequest, rateLimited } from '../../http/errors.ts';
import { hashToken, randomToken } from '../../platform/tokens.ts';
import { writeTransaction, type WriteContext } from '../../platform/write-context.ts';
import { createAccountLinking } from './account-linking.ts';
import { trustedEmail, type PersonClaims } from './email-trust.ts';
import { UserInfoSubjectMismatch, type OidcRelyingParty } from './oidc.ts';
import { createAccountResolver } from './sign-in-account.ts';
import { createCodeExchange } from './sign-in-code-exchange.ts';
import type { SignInServiceDeps } from './sign-in-deps.ts';
import {
  createFailureRecorder,
  describeCause,
  otherBrowser,
  SignInRefused,
  unknownLink,
  unreachable,
} from './sign-in-refusals.ts';
import { createSignInStore, type PendingSignIn, type SignInRequestRow } from './sign-in-store.ts';
import type { SsoConnectionRow } from './store.ts';
import { ssoErrors } from './error-codes.ts';

/** A sign-in at the IdP must come back within this long. */
const requestTtlSeconds = 10 * 60;
/** The code handed to the redirect URI is exchanged at once by the app that receives it. */
export const codeTtlSeconds = 60;

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

export function createSignInService(deps: SignInServiceDeps) {
  const { db } = deps;
  const store = createSignInStore();
  const resolveAccount = createAccountResolver(deps, store, createAccountLinking(deps));
  const recordFailure = createFailureRecorder(db, store);
  const callbackUrl = `${deps.publicUrl}${oidcCallbackPath}`;

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

    exchangeCode: createCodeExchange(deps, store, recordFailure),
  };
  return service;
}

export type SignInService = ReturnType<typeof createSignInService>;
