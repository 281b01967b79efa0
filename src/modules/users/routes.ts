import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { authenticate, callerOf, publicAccess, requestContextOf, writeContextOf } from '../../http/auth.ts';
import {
  commonErrorResponses,
  isoTimestamp,
  secretString,
  timestampSchema,
  errorResponse,
} from '../../http/schemas.ts';
import { emailSchema, personNameSchema } from '../identity/index.ts';
import { organizationSchema, toOrganization } from '../organizations/index.ts';
import { bootstrapBodySchema, meSchema, passwordSchema, toUser, userSchema } from './schemas.ts';
import type { UserService } from './service.ts';
import { httpErrors } from '../../http/error-codes.ts';
import { userErrors } from './error-codes.ts';

const sessionResponse = z.object({ user: userSchema, sessionToken: secretString('Bearer token; shown only here') });
const noContent = z.null().describe('No content');

/** Bootstrap, sign-up, sign-in, sign-out and the signed-in user. */
export const userRoutes: FastifyPluginAsyncZod<{ users: UserService }> = async (app, { users }) => {
  // Public on purpose: the console of a new instance must know, before anyone signs in, whether to offer
  // the first-run setup. It says only what POST /v1/bootstrap would answer (409 or not), nothing more.
  app.get(
    '/v1/bootstrap',
    {
      schema: {
        tags: ['Bootstrap'],
        operationId: 'getBootstrapStatus',
        ...publicAccess,
        summary: 'Whether the instance still needs its first administrator and organization',
        description:
          'No authentication. `needed` is true while the instance has no organization, that is while `POST /v1/bootstrap` would succeed; ' +
          'false afterwards, for good. It reveals nothing else about the instance.',
        response: {
          200: z.object({ needed: z.boolean() }).meta({ id: 'BootstrapStatus' }),
        },
      },
    },
    async () => ({ needed: await users.bootstrapNeeded() }),
  );

  app.post(
    '/v1/bootstrap',
    {
      schema: {
        tags: ['Bootstrap'],
        operationId: 'bootstrap',
        ...publicAccess,
        summary: 'Create the first user (an instance administrator) and organization',
        description: 'Only while the instance has no organization; afterwards 409 `already_bootstrapped`.',
        body: bootstrapBodySchema,
        response: {
          201: z.object({
            user: userSchema,
            organization: organizationSchema,
            sessionToken: secretString("Bearer token of the administrator's session; shown only here"),
          }),
          400: commonErrorResponses[400],
          409: errorResponse([userErrors.already_bootstrapped]),
        },
      },
    },
    async (request, reply) => {
      const result = await users.bootstrap(request.body, requestContextOf(request));
      return reply.status(201).send({
        user: toUser(result.user),
        organization: toOrganization(result.organization),
        sessionToken: result.sessionToken,
      });
    },
  );

  app.post(
    '/v1/auth/sign-up',
    {
      schema: {
        tags: ['Users'],
        operationId: 'signUp',
        ...publicAccess,
        summary: 'Create an account and a session',
        description:
          'No authentication. Creates a user with this e-mail, password and name and signs them in (`sessionToken`); the account belongs ' +
          'to no organization until it creates one or accepts an invitation. Closed (403 `sign_up_disabled`) when `SIGN_UP_ENABLED` is false. ' +
          'Attempts are limited across all processes, in fixed one-hour windows, whatever their answer: `SIGN_UP_ATTEMPTS_PER_ADDRESS` ' +
          '(20 by default) from one client address, and 5 for one e-mail address from all clients together. Once a limit is reached, ' +
          'every attempt it covers is 429 `rate_limited` (with `Retry-After`) until the window ends; an attempt a limit refuses does not ' +
          'count against the other. A registered address is still answered 409 `email_taken`: the limits make finding out which ' +
          'addresses have accounts slow, not impossible (an account must be told apart from a typo at sign-up).',
        body: z.object({ email: emailSchema, password: passwordSchema, name: personNameSchema }),
        response: {
          201: sessionResponse,
          400: commonErrorResponses[400],
          403: errorResponse([userErrors.sign_up_disabled]),
          409: errorResponse([userErrors.email_taken]),
          429: errorResponse([httpErrors.rate_limited]),
        },
      },
    },
    async (request, reply) => {
      const result = await users.signUp(request.body, requestContextOf(request));
      return reply.status(201).send({ user: toUser(result.user), sessionToken: result.sessionToken });
    },
  );

  app.post(
    '/v1/auth/sign-in',
    {
      schema: {
        tags: ['Users'],
        operationId: 'signIn',
        ...publicAccess,
        summary: 'Exchange email and password for a session token',
        description:
          'Failed attempts are limited across all processes, in fixed 15-minute windows: 10 on one account from one client address, ' +
          '50 from one address over all accounts, and 100 on one account from all addresses together. Successful sign-ins do not count, ' +
          'and do not clear earlier failures; attempts a limit refuses do not count against the others. Once a limit is reached, every ' +
          'attempt it covers, with the right password too, is 429 `rate_limited` (with `Retry-After`) until the window ends: so a stranger ' +
          "guessing from one address locks out that address, not the account's owner signing in from another one. " +
          'An organization that requires SSO (`ssoRequired` on its SSO connection) refuses its members whose e-mail is in its verified domain: ' +
          '403 `sso_required`, whose message says to sign in with SSO, and a `user.sign_in_failed` audit event (outcome `denied`, reason `sso_required`). ' +
          'It is answered only after the password was checked (a wrong password is 401 either way, so the answer does not reveal membership). ' +
          "The organization's owner may still sign in with the password (break-glass, for when the identity provider is broken): the `user.signed_in` " +
          "event in that organization's log carries `breakGlass: true`.",
        body: z.object({ email: emailSchema, password: z.string().min(1).max(256) }),
        response: {
          200: sessionResponse,
          400: commonErrorResponses[400],
          401: errorResponse([userErrors.invalid_credentials]),
          403: errorResponse(
            [userErrors.sso_required],
            'the right password, but an organization this account is a member of requires SSO for its e-mail domain; sign in with POST /v1/auth/sso/start',
          ),
          429: errorResponse([httpErrors.rate_limited]),
        },
      },
    },
    async (request) => {
      const result = await users.signIn(request.body, requestContextOf(request));
      return { user: toUser(result.user), sessionToken: result.sessionToken };
    },
  );

  app.post(
    '/v1/auth/sign-out',
    {
      onRequest: authenticate({ requires: 'signed-in' }),
      schema: {
        tags: ['Users'],
        operationId: 'signOut',
        summary: 'Revoke the current session',
        response: { 204: noContent, 401: commonErrorResponses[401] },
      },
    },
    async (request, reply) => {
      await users.signOut(writeContextOf(request));
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/v1/me',
    {
      onRequest: authenticate({ requires: 'signed-in' }),
      schema: {
        tags: ['Users'],
        operationId: 'getMe',
        summary: 'The signed-in user and the organizations they belong to',
        response: {
          200: meSchema,
          401: commonErrorResponses[401],
          403: commonErrorResponses[403],
        },
      },
    },
    async (request) => {
      const result = await users.me(callerOf(request));
      return {
        user: toUser(result.user),
        organizations: result.organizations.map((row) => ({
          ...toOrganization(row),
          role: row.role,
          memberId: row.member_id,
        })),
        activeOrganizationId: result.activeOrganizationId,
        session: {
          authenticatedAt: isoTimestamp(result.session.authenticatedAt),
          authMethod: result.session.authMethod,
        },
      };
    },
  );

  app.post(
    '/v1/auth/reauthenticate',
    {
      onRequest: authenticate({ requires: 'signed-in' }),
      schema: {
        tags: ['Users'],
        operationId: 'reauthenticate',
        summary: 'Authenticate again with the password (step-up before a privileged operation)',
        description:
          'The session records that its person authenticated now, so privileged operations (403 `reauth` with `reason: "authentication_too_old"`) ' +
          'are allowed again for `REAUTH_MAX_AGE_SECONDS`. Sessions only, never an API key. A wrong password is 403 `invalid_credentials` ' +
          '(not 401: the session itself stays valid) and counts against the sign-in limits (then 429 `rate_limited` with `Retry-After`). ' +
          'An account without a password (SSO only) gets 403 `password_not_set` and re-authenticates with POST /v1/auth/sso/start `reauthenticate: true`.',
        body: z.object({ password: z.string().min(1).max(256) }),
        response: {
          200: z.object({ authenticatedAt: timestampSchema }),
          400: commonErrorResponses[400],
          401: commonErrorResponses[401],
          403: errorResponse(
            [
              userErrors.invalid_credentials,
              userErrors.password_not_set,
              userErrors.sso_required,
              httpErrors.forbidden,
            ],
            undefined,
            {
              description:
                'invalid_credentials (wrong password), password_not_set (an SSO-only account), sso_required (an organization requires SSO of this account: re-authenticate through SSO), or forbidden (an API key)',
            },
          ),
          429: errorResponse([httpErrors.rate_limited]),
        },
      },
    },
    async (request) => {
      const authenticatedAt = await users.reauthenticate(writeContextOf(request), request.body.password);
      return { authenticatedAt: isoTimestamp(authenticatedAt) };
    },
  );
};
