import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { roleErrors } from '../roles/index.ts';
import { z } from 'zod';
import { authenticate, callerOf, freshAuthenticationCheck, writeContextOf } from '../../http/auth.ts';
import {
  afterFromCursor,
  commonErrorResponses,
  pageOf,
  paginationQuerySchema,
  secretString,
  errorResponse,
} from '../../http/schemas.ts';
import { assignableRoleSchema, organizationNotFoundResponse, organizationParams } from '../identity/index.ts';
import { apiKeyIdSchema, apiKeySchema, toApiKey } from './schemas.ts';
import type { ApiKeyService } from './service.ts';
import { httpErrors } from '../../http/error-codes.ts';
import { apiKeyErrors } from './error-codes.ts';

const noContent = z.null().describe('No content');

/** An organization's API keys: create (the key shown once), list, revoke. */
export const apiKeyRoutes: FastifyPluginAsyncZod<{ apiKeys: ApiKeyService }> = async (app, { apiKeys }) => {
  app.post(
    '/v1/orgs/:organizationId/api-keys',
    {
      onRequest: authenticate({ requires: 'api_keys.manage', judgedBy: 'service', freshAuthentication: 'by-route' }),
      schema: {
        tags: ['API Keys'],
        operationId: 'createApiKey',
        summary: 'Create an organization API key (owners and admins); `key` is shown only here',
        description:
          'Send it as `x-api-key`. The routes that accept an API key list the `apiKey` scheme in their security requirements (listing members and teams); every other route takes a session.',
        params: organizationParams,
        body: z.object({ name: z.string().trim().min(1).max(200), role: assignableRoleSchema }),
        response: {
          201: z.object({ apiKey: apiKeySchema, key: secretString('The key, for `x-api-key`; shown only here') }),
          ...commonErrorResponses,
          403: errorResponse([httpErrors.forbidden, roleErrors.permission_not_held]),
          404: errorResponse([httpErrors.organization_not_found, roleErrors.role_not_found]),
        },
      },
    },
    async (request, reply) => {
      const result = await apiKeys.createApiKey(
        writeContextOf(request),
        request.params.organizationId,
        request.body,
        freshAuthenticationCheck(request),
      );
      return reply.status(201).send({ apiKey: toApiKey(result.apiKey), key: result.key });
    },
  );

  app.get(
    '/v1/orgs/:organizationId/api-keys',
    {
      onRequest: authenticate({ requires: 'api_keys.manage', judgedBy: 'service' }),
      schema: {
        tags: ['API Keys'],
        operationId: 'listApiKeys',
        summary: 'List active API keys (owners and admins); keys themselves are never shown again',
        params: organizationParams,
        querystring: paginationQuerySchema,
        response: {
          200: z.object({ apiKeys: z.array(apiKeySchema), nextCursor: z.string().nullable() }),
          ...commonErrorResponses,
          404: organizationNotFoundResponse,
        },
      },
    },
    async (request) => {
      const { limit, cursor } = request.query;
      const rows = await apiKeys.listApiKeys(callerOf(request), request.params.organizationId, {
        limit: limit + 1,
        after: afterFromCursor(cursor),
      });
      const page = pageOf(rows, limit);
      return { apiKeys: page.items.map(toApiKey), nextCursor: page.nextCursor };
    },
  );

  app.delete(
    '/v1/orgs/:organizationId/api-keys/:apiKeyId',
    {
      onRequest: authenticate({ requires: 'api_keys.manage', judgedBy: 'service', freshAuthentication: 'by-route' }),
      schema: {
        tags: ['API Keys'],
        operationId: 'revokeApiKey',
        summary: 'Revoke an API key (owners and admins)',
        params: organizationParams.extend({ apiKeyId: apiKeyIdSchema }),
        response: {
          204: noContent,
          ...commonErrorResponses,
          404: errorResponse([httpErrors.organization_not_found, apiKeyErrors.api_key_not_found]),
        },
      },
    },
    async (request, reply) => {
      await apiKeys.revokeApiKey(
        writeContextOf(request),
        request.params.organizationId,
        request.params.apiKeyId,
        freshAuthenticationCheck(request),
      );
      return reply.status(204).send(null);
    },
  );
};
