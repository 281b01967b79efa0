// Bot connection management (owners and admins of the active organization). HTTP only: the rules
// are in service.ts.

import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { authenticate, callerOf, requireFreshAuthentication, writeContextOf } from '../../http/auth.ts';
import { invalidRequest } from '../../http/errors.ts';
import {
  afterFromCursor,
  commonErrorResponses,
  decodeCursor,
  encodeCursor,
  pageOf,
  paginationQuerySchema,
  secretString,
  errorResponse,
} from '../../http/schemas.ts';
import type { FastifyRequest } from 'fastify';
import {
  botTokenSchema,
  connectionIdSchema,
  deliveryUrlSchema,
  messengerConnectionSchema,
  messengerUpdateSchema,
  toConnection,
  toUpdate,
  updateStatusSchema,
} from './schemas.ts';
import type { ActingMember, MessengerService } from './service.ts';
import { httpErrors } from '../../http/error-codes.ts';
import { messengerErrors } from './error-codes.ts';

const tags = ['Messaging'];
const managers = authenticate({ requires: 'messenger.manage' });
// Where a bot's messages go is privileged: connecting one, pointing it elsewhere, deleting it.
const managersRecentlyAuthenticated = authenticate({ requires: 'messenger.manage', freshAuthentication: true });
const params = z.object({ connectionId: connectionIdSchema });
const notFoundResponse = errorResponse(
  [messengerErrors.connection_not_found],
  'no such connection in the active organization',
);
const platformResponse = errorResponse(
  [messengerErrors.platform_error, messengerErrors.platform_unavailable],
  undefined,
  { description: 'platform_error (the platform refused) or platform_unavailable' },
);

/** What a route about one connection answers. */
const oneConnectionResponses = {
  200: z.object({ connection: messengerConnectionSchema }),
  400: commonErrorResponses[400],
  401: commonErrorResponses[401],
  403: commonErrorResponses[403],
  404: notFoundResponse,
};

function actorOf(request: FastifyRequest): ActingMember {
  const caller = callerOf(request);
  return { organizationId: caller.organizationId!, memberId: caller.memberId };
}

const isBeforeCursor = (value: unknown): value is { before: number } =>
  typeof value === 'object' && value !== null && Number.isSafeInteger((value as { before?: unknown }).before);

export const messengerRoutes: FastifyPluginAsyncZod<{ service: MessengerService; publicUrl: string }> = async (
  app,
  { service, publicUrl },
) => {
  app.post(
    '/v1/messenger/connections',
    {
      onRequest: managersRecentlyAuthenticated,
      schema: {
        tags,
        operationId: 'createMessengerConnection',
        summary: 'Connect a messaging bot',
        description:
          'Checks the token with the platform (`getMe`), generates a 256-bit webhook secret and registers the webhook ' +
          '(`setWebhook`, url `PUBLIC_URL/v1/webhooks/messenger/{connectionId}`). Returns `deliverySecret` once: the key ' +
          'of the `X-Orgplane-Signature: sha256=<hex HMAC-SHA256 of the body>` header on every delivery.',
        body: z.object({ botToken: botTokenSchema, deliveryUrl: deliveryUrlSchema }),
        response: {
          201: z.object({
            connection: messengerConnectionSchema,
            deliverySecret: secretString("The key of each delivery's X-Orgplane-Signature; shown only here"),
          }),
          400: errorResponse([httpErrors.invalid_request, messengerErrors.invalid_bot_token], undefined, {
            description: 'invalid_request, or invalid_bot_token: the platform did not accept the token',
          }),
          401: commonErrorResponses[401],
          403: commonErrorResponses[403],
          409: errorResponse([messengerErrors.connection_conflict, messengerErrors.bot_already_connected], undefined, {
            description:
              'connection_conflict: this bot is already connected in the organization; bot_already_connected: it is connected in another organization (a bot has a single webhook)',
          }),
          502: platformResponse,
        },
      },
    },
    async (request, reply) => {
      const { connection, deliverySecret } = await service.createConnection(writeContextOf(request), request.body);
      return reply.status(201).send({ connection: toConnection(connection, publicUrl), deliverySecret });
    },
  );

  app.get(
    '/v1/messenger/connections',
    {
      onRequest: managers,
      schema: {
        tags,
        operationId: 'listMessengerConnections',
        summary: "List the organization's bot connections",
        querystring: paginationQuerySchema,
        response: {
          200: z.object({ connections: z.array(messengerConnectionSchema), nextCursor: z.string().nullable() }),
          400: commonErrorResponses[400],
          401: commonErrorResponses[401],
          403: commonErrorResponses[403],
        },
      },
    },
    async (request) => {
      const rows = await service.listConnections(actorOf(request), {
        after: afterFromCursor(request.query.cursor),
        limit: request.query.limit,
      });
      const page = pageOf(rows, request.query.limit);
      return { connections: page.items.map((row) => toConnection(row, publicUrl)), nextCursor: page.nextCursor };
    },
  );

  app.get(
    '/v1/messenger/connections/:connectionId',
    {
      onRequest: managers,
      schema: {
        tags,
        operationId: 'getMessengerConnection',
        summary: 'Get a bot connection',
        params,
        response: oneConnectionResponses,
      },
    },
    async (request) => {
      const row = await service.getConnection(actorOf(request), request.params.connectionId);
      return { connection: toConnection(row, publicUrl) };
    },
  );

  app.patch(
    '/v1/messenger/connections/:connectionId',
    {
      onRequest: authenticate({ requires: 'messenger.manage', freshAuthentication: 'by-route' }),
      schema: {
        tags,
        operationId: 'updateMessengerConnection',
        summary: 'Enable or disable a bot connection, or change its delivery URL',
        description:
          'While disabled, the webhook answers updates with `{ok: true, accepted: false, reason: "connection_disabled"}` and stores nothing; ' +
          'updates accepted before are still delivered (and retried). ' +
          'Changing `deliveryUrl` is privileged (below); enabling or disabling alone needs no recent authentication.',
        params,
        body: z
          .object({ enabled: z.boolean().optional(), deliveryUrl: deliveryUrlSchema.optional() })
          .refine((body) => body.enabled !== undefined || body.deliveryUrl !== undefined, {
            message: 'Give enabled or deliveryUrl',
          }),
        response: oneConnectionResponses,
      },
    },
    async (request) => {
      if (request.body.deliveryUrl !== undefined) requireFreshAuthentication(request);
      const row = await service.updateConnection(writeContextOf(request), request.params.connectionId, request.body);
      return { connection: toConnection(row, publicUrl) };
    },
  );

  app.delete(
    '/v1/messenger/connections/:connectionId',
    {
      onRequest: managersRecentlyAuthenticated,
      schema: {
        tags,
        operationId: 'deleteMessengerConnection',
        summary: 'Delete a bot connection and its webhook (deleteWebhook)',
        description:
          "The connection's updates are deleted with it: those acknowledged to the platform but not yet delivered (`queued` or `retrying`) " +
          'are discarded and never delivered, and the platform does not send them again. To let them drain first, disable the connection ' +
          '(PATCH `enabled: false`: no new updates are accepted, accepted ones are still delivered and retried), and delete it once the ' +
          'updates route lists none `queued` or `retrying`.',
        params,
        response: {
          204: z.null().describe('Deleted'),
          400: commonErrorResponses[400],
          401: commonErrorResponses[401],
          403: commonErrorResponses[403],
          404: notFoundResponse,
        },
      },
    },
    async (request, reply) => {
      await service.deleteConnection(writeContextOf(request), request.params.connectionId);
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/v1/messenger/connections/:connectionId/updates',
    {
      onRequest: managers,
      schema: {
        tags,
        operationId: 'listMessengerUpdates',
        summary: 'Recent updates of a bot connection and their processing state',
        description: 'Newest first (by update_id). Filter with `status`.',
        params,
        querystring: paginationQuerySchema.extend({ status: updateStatusSchema.optional() }),
        response: {
          200: z.object({ updates: z.array(messengerUpdateSchema), nextCursor: z.string().nullable() }),
          400: commonErrorResponses[400],
          401: commonErrorResponses[401],
          403: commonErrorResponses[403],
          404: notFoundResponse,
        },
      },
    },
    async (request) => {
      const { cursor, limit, status } = request.query;
      let beforeUpdateId: number | undefined;
      if (cursor !== undefined) {
        const decoded = decodeCursor(cursor, isBeforeCursor);
        if (!decoded)
          throw invalidRequest([{ message: 'Not a cursor this API issued', path: ['cursor'], in: 'querystring' }]);
        beforeUpdateId = decoded.before;
      }
      const rows = await service.listUpdates(actorOf(request), request.params.connectionId, {
        status,
        beforeUpdateId,
        limit,
      });
      const items = rows.slice(0, limit);
      const last = items.at(-1);
      return {
        updates: items.map(toUpdate),
        nextCursor: rows.length > limit && last ? encodeCursor({ before: last.update_id }) : null,
      };
    },
  );
};
