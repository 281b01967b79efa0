// HTTP of SSO sign-in: start (home-realm discovery), the IdP's callback (a browser: a redirect, or a
// readable page when refused), and the code exchange.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { bearerToken } from '../../http/auth.ts';
import { escapeHtml, htmlPage, htmlPageHeaders } from '../../http/html-page.ts';
import { errorBodySchema, isoTimestamp, pkceValueSchema, secretString, timestampSchema } from '../../http/schemas.ts';
import { emailSchema } from '../identity/index.ts';
import { toUser, userSchema } from '../users/index.ts';
import { codeTtlSeconds, oidcCallbackPath, SignInRefused, type SignInService } from './sign-in.ts';

const tags = ['SSO'];
const pkceValue = pkceValueSchema;

/** Which account a sign-in takes, as the callback and the ACS describe it. */
export const accountLinkingRule =
  'The identity provider\'s subject, once linked, finds its account. A subject not linked yet takes the account with the e-mail only when that account is a member ' +
  'of the organization, was provisioned by its SCIM, was linked by its SSO before, or has an e-mail address orgplane verified; any other existing account ' +
  '(one made by password sign-up, which proves nothing about the address) is refused with 403 `account_not_linkable` (recorded as `sso.sign_in_failed`), and nothing ' +
  'is linked or created. An account\'s first link to the organization\'s identity provider ends every session it had (`sso.account_linked`). ' +
  'A step-up (`reauthenticate: true`) is held to the same rule but links nothing and ends no session.';

export function refusedPage(message: string): string {
  return htmlPage('Sign-in refused', `<h1 id="refused">Sign-in refused</h1>\n<p id="reason">${escapeHtml(message)}</p>\n<p>Close this window and try again, or ask an administrator of your organization.</p>`);
}

export const signInRoutes: FastifyPluginAsyncZod<{ signIn: SignInService }> = async (app, { signIn }) => {
  const contextOf = (request: { id: string; ip: string; headers: Record<string, unknown> }) => ({
    requestId: request.id,
    clientAddress: request.ip,
    userAgent: typeof request.headers['user-agent'] === 'string' ? request.headers['user-agent'] : null,
  });

  app.post('/v1/auth/sso/start', {
    schema: {
      tags,
      operationId: 'startSsoSignIn',
      summary: 'Start an SSO sign-in for an e-mail address (home-realm discovery)',
      description:
        'The e-mail\'s domain picks the organization whose SSO connection has verified it; the answer is the identity provider\'s URL to open in a browser. ' +
        'The provider returns to orgplane, which redirects (303) to `redirectUri?code=...`; POST /v1/auth/sso/token exchanges that code, with the ' +
        '`codeVerifier` whose S256 hash was sent here as `codeChallenge`, for a session. Allowed redirect URIs: under this server\'s URL, a loopback ' +
        'address on any port (http://127.0.0.1:PORT/..., RFC 8252), the desktop app\'s `orgplane:` scheme, and SSO_REDIRECT_URIS. ' +
        '`reauthenticate: true` makes the provider ask the person again (`prompt=login`) and the token call then refreshes the caller\'s session (step-up). ' +
        'The person signs in to an existing account only on a ground the callback (ssoOidcCallback) describes; else the callback refuses with `account_not_linkable`. ' +
        'No authentication: the provider authenticates the person. Limited per client address across all processes: `SSO_START_ATTEMPTS_PER_ADDRESS` ' +
        '(100 by default) attempts per fixed 15-minute window, whatever their answer; then 429 `rate_limited` with `Retry-After` until the window ends. ' +
        'Writes no audit event (it changes nothing anyone manages: the sign-in in progress expires, and the callback and the exchange record what becomes of it), ' +
        'except `sso.sign_in_failed` with reason `discovery_failed` when the identity provider\'s configuration cannot be read.',
      body: z.object({
        email: emailSchema,
        redirectUri: z.string().min(1).max(2048),
        codeChallenge: pkceValue.describe('BASE64URL(SHA-256(codeVerifier))'),
        codeChallengeMethod: z.literal('S256'),
        reauthenticate: z.boolean().default(false),
      }).strict(),
      response: {
        200: z.object({ authorizationUrl: z.string().describe('Open this in the person\'s browser') }),
        400: errorBodySchema.describe('invalid_request: invalid body, or a redirect URI that is not allowed (`details` names it)'),
        404: errorBodySchema.describe('sso_not_configured: no organization has verified the e-mail\'s domain with an SSO connection; sign in with a password'),
        429: errorBodySchema.describe('rate_limited: this client address started too many sign-ins (`SSO_START_ATTEMPTS_PER_ADDRESS` per 15 minutes, every attempt counted whatever its answer); `Retry-After` says when to try again'),
        502: errorBodySchema.describe('sso_provider_unavailable: the identity provider\'s configuration could not be read'),
      },
    },
  }, async (request) => ({ authorizationUrl: await signIn.start(request.body, contextOf(request)) }));

  app.get(oidcCallbackPath, {
    schema: {
      tags,
      operationId: 'ssoOidcCallback',
      summary: 'Where the OIDC identity provider returns the person\'s browser',
      description:
        'Not for API clients. On success, 303 to the redirect URI given at start with `?code=` (single use, valid ' + `${codeTtlSeconds}` + ' seconds). ' +
        'A refused sign-in (expired or reused state, a rejected ID token, an unverified e-mail or one outside the organization\'s domain, ' +
        'a suspended member, someone unknown while just-in-time provisioning is off, someone SCIM or an administrator removed from the organization) ' +
        'is a readable HTML page with status 400 or 403. Just-in-time provisioning adds only people who were never members: a removal by SCIM ' +
        '(the directory) or by an owner or admin stands until the organization makes the person a member again (an invitation accepted, or SCIM ' +
        'provisioning them); someone who left on their own may be provisioned again. Each refusal is an `sso.sign_in_failed` audit event in the ' +
        'connection\'s organization (`changes.reason`: the category shown as the connection\'s `lastError`); a just-in-time provisioning is `member.provisioned`. ' +
        accountLinkingRule,
      // Read by the handler, not validated here: whatever arrives, a person's browser gets a readable page, never JSON.
      querystring: z.looseObject({}).describe('`state`, and `code` or `error`, as the identity provider sends them'),
      produces: ['text/html'],
      response: {
        303: z.null().describe('To the redirect URI with the one-time code'),
        400: z.string().describe('HTML page: the sign-in link expired or was already used'),
        403: z.string().describe('HTML page: the sign-in was refused, and why (`account_not_linkable`: an account with the e-mail exists that the organization has no tie to)'),
        409: z.string().describe('HTML page: the identity is linked to another account'),
        502: z.string().describe('HTML page: the identity provider could not be reached to complete the sign-in (recorded as the connection\'s `lastError`, provider_unavailable)'),
      },
    },
  }, async (request, reply) => {
    const rawQuery = request.url.includes('?') ? request.url.slice(request.url.indexOf('?') + 1) : '';
    try {
      const query = request.query as Record<string, unknown>;
      const text = (value: unknown) => (typeof value === 'string' && value.length <= 4096 ? value : undefined);
      const location = await signIn.callback(contextOf(request), { state: text(query.state), code: text(query.code), error: text(query.error) }, rawQuery);
      return reply.status(303).header('location', location).header('cache-control', 'no-store').header('referrer-policy', 'no-referrer').send(null);
    } catch (error) {
      if (!(error instanceof SignInRefused)) throw error;
      return reply.status(error.status as 400 | 403 | 409 | 502).headers(htmlPageHeaders).send(refusedPage(error.message));
    }
  });

  app.post('/v1/auth/sso/token', {
    schema: {
      tags,
      operationId: 'exchangeSsoCode',
      summary: 'Exchange the one-time SSO code for a session',
      description:
        'The code is spent by the first call, whatever its outcome. The new session\'s active organization is the one whose SSO connection signed the person in. ' +
        'For a sign-in started with `reauthenticate: true`, send the session to refresh as `Authorization: Bearer`: it must be the same person\'s, ' +
        'and the answer has `authenticatedAt` instead of a new `sessionToken`. Audit: a new session is `user.signed_in` with `changes.method: "sso"` in that ' +
        'organization\'s log, a refreshed one `user.reauthenticated` with `authMethod: "sso"`; a code refused for its verifier, for another person\'s session, or ' +
        'because the person is no longer an active member is `sso.sign_in_failed` (an unknown code names no organization and is not recorded).',
      body: z.object({ code: z.string().min(1).max(512), codeVerifier: pkceValue }).strict(),
      response: {
        200: z.object({
          user: userSchema,
          organizationId: z.string(),
          sessionToken: secretString('Bearer token of the new session; shown only here').optional(),
          authenticatedAt: timestampSchema.optional().describe('Step-up only: when the calling session is now authenticated'),
        }),
        400: errorBodySchema.describe('invalid_request, or invalid_grant: unknown, expired or used code, or a code verifier that does not match'),
        401: errorBodySchema.describe('unauthorized: a step-up without the same person\'s valid session'),
        403: errorBodySchema.describe('forbidden: no longer an active member of the organization'),
      },
    },
  }, async (request) => {
    const token = bearerToken(request);
    const caller = token ? await request.server.callerResolver.resolveSession(token) : null;
    const result = await signIn.exchangeCode(contextOf(request), request.body, caller);
    return {
      user: toUser(result.user),
      organizationId: result.organizationId,
      ...('sessionToken' in result ? { sessionToken: result.sessionToken } : { authenticatedAt: isoTimestamp(result.authenticatedAt) }),
    };
  });
};
