// The desktop app's sign-in through the console's pages (RFC 8252, with PKCE): the app opens the
// console at /desktop/sign-in in the person's browser with its redirect URI (a loopback port, or the
// `orgplane:` scheme) and a code challenge. Once the person is signed in there (password or SSO, as
// always) and confirms, the console asks for a one-time code (authorize) and sends the browser to the
// app with it; the app redeems it with its code verifier (exchange) for a session of its own. The
// browser's session is never handed over, and nobody without the verifier can use the code. The app's
// session is as recently authenticated as the browser's was, not more. A code, or the app's
// cancellation (cancel), goes only where the app waits: never to a page of orgplane's own
// (platform/redirect-uris.ts), nor anywhere else the link names.
import type { Database } from '../../db/database.ts';
import { invalidRequest } from '../../http/errors.ts';
import { pkceVerifierMatches } from '../../platform/pkce.ts';
import { hashToken, randomToken } from '../../platform/tokens.ts';
import { writeTransaction, type CallerContext, type WriteContext } from '../../platform/write-context.ts';
import type { MembershipSessions } from '../identity/index.ts';
import { insertDesktopSignInCode, takeDesktopSignInCode } from './desktop-sign-in-store.ts';
import * as store from './store.ts';
import { userErrors } from './error-codes.ts';

/** A code is redeemed within this long (the browser goes straight to the app, which redeems at once). */
export const desktopCodeTtlSeconds = 60;

export interface DesktopSignInDeps {
  db: Database;
  membership: Pick<MembershipSessions, 'issueSession'>;
  /** Where a one-time code may be sent: loopback, the orgplane: scheme, SSO_REDIRECT_URIS (platform/redirect-uris.ts). */
  redirectUriAllowed: (uri: string) => boolean;
}

/** The app's redirect URI with `parameters` added. */
function redirectWith(redirectUri: string, parameters: Record<string, string | undefined>): string {
  const target = new URL(redirectUri);
  for (const [name, value] of Object.entries(parameters)) if (value !== undefined) target.searchParams.set(name, value);
  return target.href;
}

const invalidGrant = () =>
  userErrors.invalid_grant(
    'The code is unknown, expired, already used, or does not match the code verifier or the redirect URI',
  );

export function createDesktopSignIn(deps: DesktopSignInDeps) {
  const { db } = deps;
  const requireAllowed = (redirectUri: string) => {
    if (!deps.redirectUriAllowed(redirectUri)) {
      throw invalidRequest([
        {
          path: ['redirectUri'],
          message:
            "Not a redirect URI the desktop app may use: a loopback address on another port than this server's (http://127.0.0.1:PORT/...), the orgplane: scheme, or one of SSO_REDIRECT_URIS",
        },
      ]);
    }
  };
  return {
    /** A one-time code for the calling session's person, and where the browser takes it. */
    async authorize(
      ctx: CallerContext,
      input: { redirectUri: string; codeChallenge: string; state?: string | undefined },
    ): Promise<{ redirectTo: string }> {
      const caller = ctx.actor;
      requireAllowed(input.redirectUri);
      const code = randomToken();
      await insertDesktopSignInCode(db, {
        code_hash: hashToken(code),
        user_id: caller.userId!,
        organization_id: caller.organizationId,
        code_challenge: input.codeChallenge,
        redirect_uri: input.redirectUri,
        auth_method: caller.authMethod ?? 'password',
        // Authorize is behind freshAuthentication, so a session caller always has this time.
        authenticated_at: caller.authenticatedAt!,
        ttlSeconds: desktopCodeTtlSeconds,
      });
      return { redirectTo: redirectWith(input.redirectUri, { code, state: input.state }) };
    },

    /** Where the browser goes when the person cancels: the app's redirect URI with an OAuth error (RFC 6749 4.1.2.1), so that it stops waiting. */
    cancel(input: { redirectUri: string; state?: string | undefined }): { redirectTo: string } {
      requireAllowed(input.redirectUri);
      return { redirectTo: redirectWith(input.redirectUri, { error: 'access_denied', state: input.state }) };
    },

    /** The app's session, for the code and the verifier only the app holds. */
    async exchange(ctx: WriteContext, input: { code: string; codeVerifier: string; redirectUri: string }) {
      // Taken whatever follows: a code is spent by its first use, right or wrong.
      const row = await takeDesktopSignInCode(db, hashToken(input.code));
      if (
        !row ||
        !pkceVerifierMatches(input.codeVerifier, row.code_challenge) ||
        row.redirect_uri !== input.redirectUri
      )
        throw invalidGrant();
      const user = await store.findUserById(db, row.user_id);
      if (!user) throw invalidGrant();
      const sessionToken = await writeTransaction(db, ctx, async (tx) => {
        tx.audit({
          action: 'user.signed_in',
          organizationId: row.organization_id,
          actorUserId: user.id,
          target: { type: 'user', id: user.id, name: user.email },
          changes: { method: 'desktop' },
        });
        // As fresh as the browser's session, never fresher: else authorizing and redeeming one code after
        // another would refresh an authentication without the person ever proving who they are again.
        return deps.membership.issueSession(tx, user.id, row.organization_id, row.auth_method, row.authenticated_at);
      });
      return { user, sessionToken, organizationId: row.organization_id };
    },
  };
}

export type DesktopSignIn = ReturnType<typeof createDesktopSignIn>;
