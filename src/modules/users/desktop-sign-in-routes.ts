// HTTP of the desktop app's sign-in through the console (desktop-sign-in.ts): the console's authorize
// and cancel calls, and the app's exchange of the one-time code.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { authenticate, publicAccess, requestContextOf, writeContextOf } from '../../http/auth.ts';
import { commonErrorResponses, pkceValueSchema, secretString, errorResponse } from '../../http/schemas.ts';
import { desktopCodeTtlSeconds, type DesktopSignIn } from './desktop-sign-in.ts';
import { toUser, userSchema } from './schemas.ts';
import { httpErrors } from '../../http/error-codes.ts';
import { userErrors } from './error-codes.ts';

const tags = ['Users'];
const redirectUriSchema = z.string().min(1).max(2048);
const stateSchema = z.string().max(512).optional().describe("The app's own value, given back to it unchanged");
const redirectUriRule =
  "Allowed redirect URIs: a loopback address on any port but this server's own (`http://127.0.0.1:PORT/...`, `http://[::1]:PORT/...`, `http://localhost:PORT/...`, " +
  "RFC 8252; never PORT nor PUBLIC_URL's port), the desktop app's `orgplane:` scheme, and SSO_REDIRECT_URIS, matched exactly; never another URL of this server " +
  "(not even the console's pages), no fragment, no user name or password.";

export const desktopSignInRoutes: FastifyPluginAsyncZod<{ desktopSignIn: DesktopSignIn }> = async (
  app,
  { desktopSignIn },
) => {
  app.post(
    '/v1/auth/desktop/authorize',
    {
      onRequest: authenticate({ requires: 'signed-in', freshAuthentication: true }),
      schema: {
        tags,
        operationId: 'authorizeDesktopSignIn',
        summary: 'Give the desktop app that opened the console a one-time code for a session of its own',
        description:
          "Called by the console at /desktop/sign-in, which the desktop app opens in the person's browser (RFC 8252) with `redirect_uri`, `code_challenge` " +
          '(S256) and `state`, once the person is signed in and confirms. The answer is where the browser goes next: `redirectUri` with `code` (and `state`). ' +
          `The app then calls POST /v1/auth/desktop/token with the code and its verifier within ${desktopCodeTtlSeconds} s. ${redirectUriRule} The new session belongs to ` +
          'the same person, with the same active organization and authentication method, and the same authentication time (`session.authenticatedAt` of ' +
          "GET /v1/me): it is no fresher than the browser's session, so a privileged operation from the app needs the person to re-authenticate as soon as " +
          'the browser would. It is recorded when redeemed (`user.signed_in`, `method: "desktop"`).',
        body: z
          .object({
            redirectUri: redirectUriSchema,
            codeChallenge: pkceValueSchema.describe('BASE64URL(SHA-256(codeVerifier)), from the app'),
            codeChallengeMethod: z.literal('S256'),
            state: stateSchema,
          })
          .strict(),
        response: {
          200: z.object({
            redirectTo: z.string().describe('The redirect URI with `code` (and `state`): send the browser there'),
          }),
          ...commonErrorResponses,
          400: errorResponse(
            [httpErrors.invalid_request],
            'invalid body, or a redirect URI that is not allowed (`details` names it)',
          ),
        },
      },
    },
    async (request) => desktopSignIn.authorize(writeContextOf(request), request.body),
  );

  app.post(
    '/v1/auth/desktop/cancel',
    {
      schema: {
        tags,
        operationId: 'cancelDesktopSignIn',
        ...publicAccess,
        summary: "Where to send the browser when the person cancels the desktop app's sign-in",
        description:
          "Called by the console at /desktop/sign-in when the person cancels: the answer is the app's redirect URI with `error=access_denied` (and `state`), " +
          'RFC 6749 4.1.2.1, so that the app stops waiting. The console sends the browser only where this answers, so a link naming any other redirect URI ' +
          `sends it nowhere. ${redirectUriRule} No authentication (the person may cancel whether signed in or not; nothing is handed out). Writes no audit event.`,
        body: z.object({ redirectUri: redirectUriSchema, state: stateSchema }).strict(),
        response: {
          200: z.object({
            redirectTo: z
              .string()
              .describe('The redirect URI with `error=access_denied` (and `state`): send the browser there'),
          }),
          400: errorResponse(
            [httpErrors.invalid_request],
            'invalid body, or a redirect URI that is not allowed (`details` names it)',
          ),
        },
      },
    },
    async (request) => desktopSignIn.cancel(request.body),
  );

  app.post(
    '/v1/auth/desktop/token',
    {
      schema: {
        tags,
        operationId: 'exchangeDesktopSignInCode',
        ...publicAccess,
        summary: 'Exchange the desktop sign-in code for a session (the desktop app calls this)',
        description:
          'No authentication: the code and the verifier are the proof. The code is spent by the first call, whatever its outcome; `redirectUri` must be the ' +
          'one the code was given for (RFC 6749 4.1.3).',
        body: z
          .object({ code: z.string().min(1).max(512), codeVerifier: pkceValueSchema, redirectUri: redirectUriSchema })
          .strict(),
        response: {
          200: z.object({
            user: userSchema,
            sessionToken: secretString("Bearer token of the app's new session; shown only here"),
            organizationId: z
              .string()
              .nullable()
              .describe("The session's active organization (the browser session's when the code was given)"),
          }),
          400: errorResponse([httpErrors.invalid_request, userErrors.invalid_grant], undefined, {
            description:
              'invalid_request: invalid body; invalid_grant: unknown, expired or used code, or a verifier or redirect URI that does not match',
          }),
        },
      },
    },
    async (request) => {
      const result = await desktopSignIn.exchange(requestContextOf(request), request.body);
      return { user: toUser(result.user), sessionToken: result.sessionToken, organizationId: result.organizationId };
    },
  );
};
