import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { authenticate, publicAccess, requireFreshAuthentication, writeContextOf } from '../../http/auth.ts';
import { BODY_OPTIONAL } from '../../http/openapi.ts';
import { rateLimited, rateLimitHeaders } from '../../http/errors.ts';
import { commonErrorResponses, secretString, typeIdSchema, errorResponse } from '../../http/schemas.ts';
import { htmlPageHeaders } from '../../http/html-page.ts';
import { installPage, invalidLinkPage, tooManyRequestsPage } from './page.ts';
import { lookupLimit, mintLimit, type InstallLinkService } from './service.ts';
import { httpErrors } from '../../http/error-codes.ts';
import { installLinkErrors } from './error-codes.ts';

export interface InstallLinkRoutesOptions {
  installLinks: InstallLinkService;
  /** Where the desktop app is downloaded from (DESKTOP_DOWNLOAD_URL); null when not configured. */
  desktopDownloadUrl: string | null;
}

const installLinkSchema = z
  .object({
    token: secretString(
      'The link token: a bearer secret (256 random bits, URL-safe). Anyone holding it can read the organization name and server URL.',
    ),
    installPageUrl: secretString('PUBLIC_URL/install/{token}: the page to share with people (it carries the token)'),
  })
  .meta({ id: 'InstallLink' });

const desktopConfigSchema = z
  .object({
    organization: z.object({ id: z.string(), name: z.string() }),
    serverUrl: z.string().describe('Base URL of this orgplane server'),
    installPageUrl: secretString('PUBLIC_URL/install/{token}: the page of this link (it carries the token)'),
  })
  .meta({ id: 'DesktopInstallConfig' });

const tokenParams = z.object({ token: z.string().min(1).max(512) });
// A person's browser gets a page whatever the address holds: an empty token (an address cut short) is
// a link that is not valid (404 page), not a JSON error.
const pageTokenParams = z.object({ token: z.string() });
const isPlausibleToken = (token: string) => token.length > 0 && token.length <= 512;
const rateLimitedResponse = errorResponse([httpErrors.rate_limited], undefined, {
  description:
    'rate_limited (with `message`): too many requests; `Retry-After` and `RateLimit-Limit/Remaining/Reset` say when to retry',
});

/** Install links: minting (members; rotation by owners and admins), the public page, the desktop configuration. */
export const installLinkRoutes: FastifyPluginAsyncZod<InstallLinkRoutesOptions> = async (
  app,
  { installLinks, desktopDownloadUrl },
) => {
  app.post(
    '/v1/orgs/:organizationId/install-links',
    {
      // A request without a body is the same as {} (rotate defaults to false).
      preValidation: async (request) => {
        if (request.body === null || request.body === undefined) request.body = { rotate: false };
      },
      onRequest: authenticate({
        requires: 'install_links.create',
        judgedBy: 'service',
        freshAuthentication: 'by-route',
      }),
      schema: {
        tags: ['Install Links'],
        operationId: 'createInstallLink',
        summary: 'Create an organization install link',
        description:
          'Any member of the organization mints a link for the desktop app. The body may be left out; `rotate` is optional and defaults to `false`: ' +
          'without it older links stay valid; with `rotate: true` (owners and admins only; a member gets 403 `forbidden` and no link) ' +
          'every older link of the organization stops working in the same transaction that mints the new one; rotation is privileged (below: ' +
          'a minting without rotation needs no recent authentication). ' +
          `Limited to ${mintLimit.limit} links per member per ${mintLimit.windowSeconds / 60} minutes across all processes: ` +
          'then 429 `rate_limited` with `Retry-After`. Successful responses carry `RateLimit-Limit/Remaining/Reset` too. ' +
          "The page offers the desktop app from the server's `DESKTOP_DOWNLOAD_URL`; while the operator has not set it, the page says the " +
          'download is not configured (and the server logs a warning as it starts).',
        params: z.object({ organizationId: typeIdSchema('org') }),
        [BODY_OPTIONAL]: true,
        body: z
          .object({
            rotate: z
              .boolean()
              .default(false)
              .describe('Invalidate every older link of the organization (owners and admins only). Default false.'),
          })
          .strict(),
        response: {
          201: installLinkSchema.describe(
            'The new link: its token (shown only here) and the install page URL that carries it',
          ),
          ...commonErrorResponses,
          404: errorResponse(
            [httpErrors.organization_not_found],
            'no such organization, or you are not a member of it',
          ),
          429: rateLimitedResponse,
        },
      },
    },
    async (request, reply) => {
      const result = await installLinks.create(
        writeContextOf(request),
        request.params.organizationId,
        { rotate: request.body.rotate },
        {
          beforeRotation: () => requireFreshAuthentication(request),
        },
      );
      reply.headers(rateLimitHeaders(result.rateLimit));
      return reply.status(201).send({ token: result.token, installPageUrl: result.installPageUrl });
    },
  );

  app.get(
    '/v1/install-links/:token',
    {
      schema: {
        tags: ['Install Links'],
        operationId: 'getInstallLinkConfig',
        ...publicAccess,
        summary: 'Desktop app configuration for an install link (public)',
        description:
          'What the desktop app reads when it opens an install link. No authentication: the token is the credential. ' +
          `Limited to ${lookupLimit.limit} requests per client address per ${lookupLimit.windowSeconds} seconds (429 \`rate_limited\`).`,
        params: tokenParams,
        response: {
          200: desktopConfigSchema,
          400: commonErrorResponses[400],
          404: errorResponse([installLinkErrors.install_link_not_found], 'unknown token, or the link was rotated away'),
          429: rateLimitedResponse,
        },
      },
    },
    async (request, reply) => {
      const limit = await installLinks.hitLookupLimit(request.ip);
      if (!limit.allowed)
        throw rateLimited(limit, `Too many install link lookups; try again in ${limit.resetSeconds} seconds`);
      reply.headers(rateLimitHeaders(limit));
      const target = await installLinks.resolve(request.params.token);
      if (!target) throw installLinkErrors.install_link_not_found('This install link is no longer valid');
      return {
        organization: { id: target.organizationId, name: target.organizationName },
        serverUrl: installLinks.publicUrl,
        installPageUrl: `${installLinks.publicUrl}/install/${request.params.token}`,
      };
    },
  );

  app.get(
    '/install/:token',
    {
      schema: {
        tags: ['Install Links'],
        operationId: 'installPage',
        ...publicAccess,
        summary: 'Install page for people (HTML)',
        description:
          'An HTML page with the organization name, a download action (or, while DESKTOP_DOWNLOAD_URL is not set, a note that the download is not configured) and an open-in-app action. ' +
          'An unknown or rotated token gets a 404 "link no longer valid" page. Rate limited per client address like the configuration route.',
        params: pageTokenParams,
        produces: ['text/html'],
        // Strings sent as text/html: documented here, never serialized as JSON.
        response: {
          200: z.string().describe('The install page'),
          404: z.string().describe('A "link no longer valid" page: the token is unknown, or the link was rotated away'),
          429: z.string().describe('A "too many requests" page, with Retry-After and the RateLimit-* headers'),
        },
      },
    },
    async (request, reply) => {
      reply.headers(htmlPageHeaders);
      const limit = await installLinks.hitLookupLimit(request.ip);
      if (!limit.allowed) {
        reply.headers({ ...rateLimitHeaders(limit), 'retry-after': String(limit.resetSeconds) });
        return reply.status(429).send(tooManyRequestsPage(limit.resetSeconds));
      }
      const token = request.params.token;
      const target = isPlausibleToken(token) ? await installLinks.resolve(token) : undefined;
      if (!target) return reply.status(404).send(invalidLinkPage());
      const server = installLinks.publicUrl;
      return reply.status(200).send(
        installPage({
          organizationName: target.organizationName,
          downloadUrl: desktopDownloadUrl,
          openInAppUrl: `orgplane://install?server=${encodeURIComponent(server)}&token=${encodeURIComponent(token)}`,
          configUrl: `${server}/v1/install-links/${token}`,
        }),
      );
    },
  );
};
