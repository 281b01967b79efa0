// HTTP of SSO sign-in: start (home-realm discovery), the sign-in's link (a browser: bound to the
// sign-in, then sent to the IdP), the IdP's callback (a browser: a redirect, or a readable page when
// refused), and the code exchange.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { bearerToken, publicAccess } from '../../http/auth.ts';
import { escapeHtml, htmlPage, htmlPageHeaders } from '../../http/html-page.ts';
import { isoTimestamp, pkceValueSchema, secretString, timestampSchema, errorResponse } from '../../http/schemas.ts';
import { bindingSecretOf } from '../../platform/browser-binding.ts';
import { emailSchema } from '../identity/index.ts';
import { toUser, userSchema } from '../users/index.ts';
import { authorizePath, codeTtlSeconds, oidcCallbackPath, ssoBrowserCookie, type SignInService } from './sign-in.ts';
import { SignInRefused } from './sign-in-refusals.ts';
import { httpErrors } from '../../http/error-codes.ts';
import { ssoErrors } from './error-codes.ts';

const tags = ['SSO'];
const pkceValue = pkceValueSchema;

/** Which account a sign-in takes, as the callback and the ACS describe it. */
export const accountLinkingRule =
  "The identity provider's subject, once linked, finds its account. A subject not linked yet takes the account with the e-mail only when that account is a member " +
  'of the organization, was provisioned by its SCIM, was linked by its SSO before, or has an e-mail address orgplane verified; any other existing account ' +
  '(one made by password sign-up, which proves nothing about the address) is refused with 403 `account_not_linkable` (recorded as `sso.sign_in_failed`), and nothing ' +
  "is linked or created. An account's first link to the organization's identity provider ends every session it had (`sso.account_linked`). " +
  'A step-up (`reauthenticate: true`) is held to the same rule but links nothing and ends no session.';
/** What the OpenAPI says of where a code may go and of the browser a sign-in is bound to (start and the link). */
export const redirectUriRule =
  "Allowed redirect URIs: the console's own pages that receive the code, exactly as `PUBLIC_URL/sso/callback` and `PUBLIC_URL/sso/test-done` " +
  "(no query string of their own); a loopback address on any port but this server's own (`http://127.0.0.1:PORT/...`, `http://[::1]:PORT/...`, " +
  "`http://localhost:PORT/...`, RFC 8252; never PORT nor PUBLIC_URL's port); the desktop app's `orgplane:` scheme; and SSO_REDIRECT_URIS, matched exactly. " +
  'No other URL of this server, no fragment, no user name or password.';
const browserRule =
  'The sign-in is bound to the browser that opens `authorizationUrl` first: it gets the cookie `orgplane_sso` (HttpOnly, Path `/v1/auth/sso/`, ' +
  'Max-Age 600; SameSite=None and Secure when PUBLIC_URL is https, since a SAML identity provider posts its answer from another site; SameSite=Lax over http), ' +
  'a random secret whose SHA-256 is kept with the sign-in, and the OIDC callback and the SAML ACS refuse any browser that does not carry it (403 page, `browser_mismatch`) ' +
  'before using what the provider sent.';

function cookieHeaderOf(request: { headers: Record<string, unknown> }): string | undefined {
  return typeof request.headers.cookie === 'string' ? request.headers.cookie : undefined;
}

export function refusedPage(message: string): string {
  return htmlPage(
    'Sign-in refused',
    `<h1 id="refused">Sign-in refused</h1>\n<p id="reason">${escapeHtml(message)}</p>\n<p>Close this window and try again, or ask an administrator of your organization.</p>`,
  );
}

export const signInRoutes: FastifyPluginAsyncZod<{ signIn: SignInService }> = async (app, { signIn }) => {
  const contextOf = (request: { id: string; ip: string; headers: Record<string, unknown> }) => ({
    requestId: request.id,
    clientAddress: request.ip,
    userAgent: typeof request.headers['user-agent'] === 'string' ? request.headers['user-agent'] : null,
  });

  app.post(
    '/v1/auth/sso/start',
    {
      schema: {
        tags,
        operationId: 'startSsoSignIn',
        ...publicAccess,
        summary: 'Start an SSO sign-in for an e-mail address (home-realm discovery)',
        description:
          "The e-mail's domain picks the organization whose SSO connection has verified it; the answer is the sign-in's link, orgplane's own " +
          "`GET /v1/auth/sso/authorize?request=...`, to open in the person's browser: it sends the browser on to the identity provider. " +
          'The provider returns to orgplane, which redirects (303) to `redirectUri?code=...`; POST /v1/auth/sso/token exchanges that code, with the ' +
          '`codeVerifier` whose S256 hash was sent here as `codeChallenge`, for a session. ' +
          redirectUriRule +
          ' ' +
          browserRule +
          ' ' +
          "`reauthenticate: true` makes the provider ask the person again (`prompt=login`) and the token call then refreshes the caller's session (step-up). " +
          'The person signs in to an existing account only on a ground the callback (ssoOidcCallback) describes; else the callback refuses with `account_not_linkable`. ' +
          'No authentication: the provider authenticates the person. Limited per client address across all processes: `SSO_START_ATTEMPTS_PER_ADDRESS` ' +
          '(100 by default) attempts per fixed 15-minute window, whatever their answer; then 429 `rate_limited` with `Retry-After` until the window ends. ' +
          'Writes no audit event (it changes nothing anyone manages: the sign-in in progress expires, and the callback and the exchange record what becomes of it), ' +
          "except `sso.sign_in_failed` with reason `discovery_failed` when the identity provider's configuration cannot be read.",
        body: z
          .object({
            email: emailSchema,
            redirectUri: z.string().min(1).max(2048),
            codeChallenge: pkceValue.describe('BASE64URL(SHA-256(codeVerifier))'),
            codeChallengeMethod: z.literal('S256'),
            reauthenticate: z.boolean().default(false),
          })
          .strict(),
        response: {
          200: z.object({
            authorizationUrl: z
              .string()
              .describe(
                "The sign-in's link (`GET /v1/auth/sso/authorize?request=...`): open it in the person's browser, the one that is to finish the sign-in",
              ),
          }),
          400: errorResponse(
            [httpErrors.invalid_request],
            'invalid body, or a redirect URI that is not allowed (`details` names it)',
          ),
          404: errorResponse(
            [ssoErrors.sso_not_configured],
            "no organization has verified the e-mail's domain with an SSO connection; sign in with a password",
          ),
          429: errorResponse(
            [httpErrors.rate_limited],
            'this client address started too many sign-ins (`SSO_START_ATTEMPTS_PER_ADDRESS` per 15 minutes, every attempt counted whatever its answer); `Retry-After` says when to try again',
          ),
          502: errorResponse(
            [ssoErrors.sso_provider_unavailable],
            "the identity provider's configuration could not be read",
          ),
        },
      },
    },
    async (request) => ({ authorizationUrl: await signIn.start(request.body, contextOf(request)) }),
  );

  app.get(
    authorizePath,
    {
      schema: {
        tags,
        operationId: 'openSsoSignIn',
        ...publicAccess,
        summary: "The sign-in's link: binds the sign-in to this browser, then sends it to the identity provider",
        description:
          "Not for API clients: the `authorizationUrl` POST /v1/auth/sso/start answers, opened in the person's browser. 303 to the identity provider, " +
          'with `Set-Cookie: orgplane_sso=...`. ' +
          browserRule +
          ' A browser that already carries the cookie keeps its secret, so several sign-ins may be in ' +
          'progress in one browser; the browser that opened the link may open it again, any other is refused. Writes no audit event.',
        // Read by the handler, not validated here: whatever arrives, a person's browser gets a readable page, never JSON.
        querystring: z.looseObject({}).describe('`request`: the id in the link POST /v1/auth/sso/start answered'),
        produces: ['text/html'],
        response: {
          303: z.null().describe('To the identity provider, with the binding cookie'),
          400: z.string().describe('HTML page: the link is unknown, or its sign-in expired or was used'),
          403: z.string().describe('HTML page: another browser opened this link first (`browser_mismatch`)'),
        },
      },
    },
    async (request, reply) => {
      try {
        const id = (request.query as Record<string, unknown>).request;
        const opened = await signIn.openLink(
          typeof id === 'string' && id.length <= 512 ? id : undefined,
          bindingSecretOf(cookieHeaderOf(request), ssoBrowserCookie),
        );
        return reply
          .status(303)
          .header('location', opened.location)
          .header('set-cookie', opened.cookie)
          .header('cache-control', 'no-store')
          .header('referrer-policy', 'no-referrer')
          .send(null);
      } catch (error) {
        if (!(error instanceof SignInRefused)) throw error;
        return reply
          .status(error.status as 400 | 403)
          .headers(htmlPageHeaders)
          .send(refusedPage(error.message));
      }
    },
  );

  app.get(
    oidcCallbackPath,
    {
      schema: {
        tags,
        operationId: 'ssoOidcCallback',
        ...publicAccess,
        summary: "Where the OIDC identity provider returns the person's browser",
        description:
          'Not for API clients. On success, 303 to the redirect URI given at start with `?code=` (single use, valid ' +
          `${codeTtlSeconds}` +
          ' seconds). ' +
          "A browser that does not carry the `orgplane_sso` cookie of the one that opened the sign-in's link is refused first (403 page, `browser_mismatch`), " +
          'before the code is sent to the provider, and the sign-in stays for its own browser. ' +
          "A refused sign-in (expired or reused state, a rejected ID token, an unverified e-mail or one outside the organization's domain, " +
          'a suspended member, someone unknown while just-in-time provisioning is off, someone SCIM or an administrator removed from the organization) ' +
          'is a readable HTML page with status 400 or 403. Just-in-time provisioning adds only people who were never members: a removal by SCIM ' +
          '(the directory) or by an owner or admin stands until the organization makes the person a member again (an invitation accepted, or SCIM ' +
          'provisioning them); someone who left on their own may be provisioned again. Each refusal is an `sso.sign_in_failed` audit event in the ' +
          "connection's organization (`changes.reason`: the category shown as the connection's `lastError`); a just-in-time provisioning is `member.provisioned`. " +
          accountLinkingRule,
        // Read by the handler, not validated here: whatever arrives, a person's browser gets a readable page, never JSON.
        querystring: z.looseObject({}).describe('`state`, and `code` or `error`, as the identity provider sends them'),
        produces: ['text/html'],
        response: {
          303: z.null().describe('To the redirect URI with the one-time code'),
          400: z.string().describe('HTML page: the sign-in link expired or was already used'),
          403: z
            .string()
            .describe(
              'HTML page: the sign-in was refused, and why (among others: `account_not_linkable`, an account with the e-mail exists that the organization has no tie to; `browser_mismatch`, another browser than the one that started it)',
            ),
          409: z.string().describe('HTML page: the identity is linked to another account'),
          502: z
            .string()
            .describe(
              "HTML page: the identity provider could not be reached to complete the sign-in (recorded as the connection's `lastError`, provider_unavailable)",
            ),
        },
      },
    },
    async (request, reply) => {
      const rawQuery = request.url.includes('?') ? request.url.slice(request.url.indexOf('?') + 1) : '';
      try {
        const query = request.query as Record<string, unknown>;
        const text = (value: unknown) => (typeof value === 'string' && value.length <= 4096 ? value : undefined);
        const carried = bindingSecretOf(cookieHeaderOf(request), ssoBrowserCookie);
        const location = await signIn.callback(
          contextOf(request),
          { state: text(query.state), code: text(query.code), error: text(query.error) },
          rawQuery,
          carried,
        );
        return reply
          .status(303)
          .header('location', location)
          .header('cache-control', 'no-store')
          .header('referrer-policy', 'no-referrer')
          .send(null);
      } catch (error) {
        if (!(error instanceof SignInRefused)) throw error;
        return reply
          .status(error.status as 400 | 403 | 409 | 502)
          .headers(htmlPageHeaders)
          .send(refusedPage(error.message));
      }
    },
  );

  app.post(
    '/v1/auth/sso/token',
    {
      schema: {
        tags,
        operationId: 'exchangeSsoCode',
        ...publicAccess,
        summary: 'Exchange the one-time SSO code for a session',
        description:
          "The code is spent by the first call, whatever its outcome. The new session's active organization is the one whose SSO connection signed the person in. " +
          "For a sign-in started with `reauthenticate: true`, send the session to refresh as `Authorization: Bearer`: it must be the same person's, " +
          'and the answer has `authenticatedAt` instead of a new `sessionToken`. Audit: a new session is `user.signed_in` with `changes.method: "sso"` in that ' +
          'organization\'s log, a refreshed one `user.reauthenticated` with `authMethod: "sso"`; a code refused for its verifier, for another person\'s session, or ' +
          'because the person is no longer an active member is `sso.sign_in_failed` (an unknown code names no organization and is not recorded).',
        body: z.object({ code: z.string().min(1).max(512), codeVerifier: pkceValue }).strict(),
        response: {
          200: z.object({
            user: userSchema,
            organizationId: z.string(),
            sessionToken: secretString('Bearer token of the new session; shown only here').optional(),
            authenticatedAt: timestampSchema
              .optional()
              .describe('Step-up only: when the calling session is now authenticated'),
          }),
          400: errorResponse([httpErrors.invalid_request, ssoErrors.invalid_grant], undefined, {
            description:
              'invalid_request, or invalid_grant: unknown, expired or used code, or a code verifier that does not match',
          }),
          401: errorResponse([httpErrors.unauthorized], "a step-up without the same person's valid session"),
          403: errorResponse([httpErrors.forbidden], 'no longer an active member of the organization'),
        },
      },
    },
    async (request) => {
      const token = bearerToken(request);
      const caller = token ? await request.server.callerResolver.resolveSession(token) : null;
      const result = await signIn.exchangeCode(contextOf(request), request.body, caller);
      return {
        user: toUser(result.user),
        organizationId: result.organizationId,
        ...('sessionToken' in result
          ? { sessionToken: result.sessionToken }
          : { authenticatedAt: isoTimestamp(result.authenticatedAt) }),
      };
    },
  );
};
