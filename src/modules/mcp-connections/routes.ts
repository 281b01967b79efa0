// HTTP for external MCP connections and marketplace plugins: schemas, status codes, who may call.
// The rules are in service.ts and the files it names; writes get the request's write context.

import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { authenticate, callerOf, freshAuthenticationCheck, writeContextOf } from '../../http/auth.ts';
import {
  afterFromCursor,
  commonErrorResponses,
  connectionIdSchema,
  paginationQuerySchema,
  errorResponse,
} from '../../http/schemas.ts';
import {
  connectionInputSchema,
  connectionSchema,
  editConnectionSchema,
  editedConnectionSchema,
  pluginIdSchema,
  pluginManifestSchema,
  pluginSchema,
  replaceAccessSchema,
  setApiKeySchema,
  testResultSchema,
  validationFailedSchema,
} from './schemas.ts';
import type { McpConnectionService } from './service.ts';
import { httpErrors } from '../../http/error-codes.ts';
import { mcpConnectionErrors } from './error-codes.ts';

const tags = ['MCP Connections'];
const connectionParams = z.object({ connectionId: connectionIdSchema });
const notFound = errorResponse(
  [mcpConnectionErrors.connection_not_found],
  'no such connection in your active organization',
);
const noContent = z.null().describe('No content');
const rateLimitedResponse = errorResponse(
  [httpErrors.rate_limited],
  'too many server checks (probes) for the organization or the member; see Retry-After',
);
const viewers = authenticate({ requires: 'mcp_connections.view' });
const members = authenticate({ requires: 'mcp_connections.use' });
const managersRecentlyAuthenticated = authenticate({ requires: 'mcp_connections.manage', freshAuthentication: true });
// Members for their own credential; the shared one is privileged, judged by the service once it knows which.
const membersSharedRecentlyAuthenticated = authenticate({
  requires: 'mcp_connections.use',
  freshAuthentication: 'by-route',
});

export const mcpConnectionRoutes: FastifyPluginAsyncZod<{ service: McpConnectionService }> = async (
  app,
  { service },
) => {
  app.post(
    '/v1/mcp-connections',
    {
      onRequest: managersRecentlyAuthenticated,
      schema: {
        tags,
        operationId: 'createMcpConnection',
        summary: 'Connect an external MCP server',
        description:
          'Owners and admins. API-key and no-auth servers are probed before anything is stored; a failure is 502 with a diagnostic.',
        body: connectionInputSchema,
        response: {
          201: connectionSchema,
          ...commonErrorResponses,
          429: rateLimitedResponse,
          502: validationFailedSchema,
        },
      },
    },
    async (request, reply) => reply.status(201).send(await service.create(writeContextOf(request), request.body)),
  );

  app.get(
    '/v1/mcp-connections',
    {
      onRequest: members,
      schema: {
        tags,
        operationId: 'listMcpConnections',
        summary: 'Connections of the active organization',
        description: 'Owners and admins see every connection; members see those they may use.',
        querystring: paginationQuerySchema,
        response: {
          200: z.object({ connections: z.array(connectionSchema), nextCursor: z.string().nullable() }),
          ...commonErrorResponses,
        },
      },
    },
    async (request) => {
      const page = await service.list(callerOf(request), {
        limit: request.query.limit,
        after: afterFromCursor(request.query.cursor),
      });
      return { connections: page.items, nextCursor: page.nextCursor };
    },
  );

  app.get(
    '/v1/mcp-connections/:connectionId',
    {
      onRequest: members,
      schema: {
        tags,
        operationId: 'getMcpConnection',
        summary: 'One connection',
        params: connectionParams,
        response: {
          200: connectionSchema.describe('The connection as you see it (members: without the access list)'),
          ...commonErrorResponses,
          404: notFound,
        },
      },
    },
    async (request) => service.get(callerOf(request), request.params.connectionId),
  );

  app.put(
    '/v1/mcp-connections/:connectionId',
    {
      onRequest: managersRecentlyAuthenticated,
      schema: {
        tags,
        operationId: 'editMcpConnection',
        summary: 'Edit an external MCP connection',
        description:
          'Owners and admins. `expectedUpdatedAt` must equal the current `updatedAt` (compared as an instant), else 409 `connection_conflict`. ' +
          'Changing url, authType or credentialMode deletes every stored credential in the same transaction (`identityChanged: true`); ' +
          'url is compared as a URL, so a spelling of the same server (scheme and host case, a default port, a `#fragment`, which is never sent) ' +
          'is not a change of identity, though the new spelling is stored. ' +
          'name- and access-only edits keep them. A new identity or a new API key of an API-key or no-auth server is probed first (502 on failure, nothing written). ' +
          'Plugin-managed identities refuse identity changes with 409 `marketplace_managed`.',
        params: connectionParams,
        body: editConnectionSchema,
        response: {
          200: editedConnectionSchema.describe(
            'The edited connection, with `identityChanged` (url, authType or credentialMode changed, and stored credentials were dropped) and `reconnectionRequired`',
          ),
          ...commonErrorResponses,
          404: notFound,
          409: errorResponse(
            [mcpConnectionErrors.connection_conflict, mcpConnectionErrors.marketplace_managed],
            undefined,
            { description: 'connection_conflict (stale expectedUpdatedAt) or marketplace_managed' },
          ),
          429: rateLimitedResponse,
          502: validationFailedSchema,
        },
      },
    },
    async (request) => service.edit(writeContextOf(request), request.params.connectionId, request.body),
  );

  app.put(
    '/v1/mcp-connections/:connectionId/access',
    {
      onRequest: managersRecentlyAuthenticated,
      schema: {
        tags,
        operationId: 'replaceMcpConnectionAccess',
        summary: 'Replace who can use an external MCP connection',
        description:
          'Admins (and owners). Full replace: whatever is not sent is removed. Ids must be members and teams of this organization.',
        params: connectionParams,
        body: replaceAccessSchema,
        response: {
          200: connectionSchema.describe(
            'The connection with its new access (the access-replace shape: no `identityChanged` or `reconnectionRequired`)',
          ),
          ...commonErrorResponses,
          404: notFound,
        },
      },
    },
    async (request) => service.replaceAccess(writeContextOf(request), request.params.connectionId, request.body.access),
  );

  app.delete(
    '/v1/mcp-connections/:connectionId',
    {
      onRequest: managersRecentlyAuthenticated,
      schema: {
        tags,
        operationId: 'deleteMcpConnection',
        summary: 'Delete a connection and its credentials',
        description:
          'Owners and admins. A connection an installed plugin requires is refused (409 `connection_required`) until the plugin is uninstalled.',
        params: connectionParams,
        response: {
          204: noContent,
          ...commonErrorResponses,
          404: notFound,
          409: errorResponse([mcpConnectionErrors.connection_required], 'an installed plugin requires it'),
        },
      },
    },
    async (request, reply) => {
      await service.remove(writeContextOf(request), request.params.connectionId);
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/v1/mcp-connections/:connectionId/test',
    {
      onRequest: viewers,
      schema: {
        tags,
        operationId: 'testMcpConnection',
        summary: 'Probe the stored configuration and record credential health',
        description: 'Always 200: `ok` says whether the probe passed, `diagnostic` why not.',
        params: connectionParams,
        response: { 200: testResultSchema, ...commonErrorResponses, 404: notFound, 429: rateLimitedResponse },
      },
    },
    async (request) => service.test(writeContextOf(request), request.params.connectionId),
  );

  app.put(
    '/v1/mcp-connections/:connectionId/credentials',
    {
      onRequest: membersSharedRecentlyAuthenticated,
      schema: {
        tags,
        operationId: 'setMcpConnectionApiKey',
        summary: 'Store your API key for a connection',
        description:
          'Per-member API-key connections: any member who may use the connection stores their own key. Shared ones: owners and admins replace the shared key. ' +
          'The key is probed against the server first (502 with a diagnostic when it does not work) and never returned. ' +
          'Replacing the shared key is privileged (below); storing your own key of a per-member connection needs no recent authentication.',
        params: connectionParams,
        body: setApiKeySchema,
        response: {
          200: connectionSchema,
          ...commonErrorResponses,
          404: notFound,
          409: errorResponse(
            [mcpConnectionErrors.connection_conflict],
            'the connection changed while the key was checked',
          ),
          429: rateLimitedResponse,
          502: validationFailedSchema,
        },
      },
    },
    async (request) =>
      service.setApiKey(
        writeContextOf(request),
        request.params.connectionId,
        request.body.apiKey,
        freshAuthenticationCheck(request),
      ),
  );

  app.post(
    '/v1/plugins',
    {
      onRequest: managersRecentlyAuthenticated,
      schema: {
        tags,
        operationId: 'installPlugin',
        summary: 'Install a marketplace plugin',
        description:
          'The manifest declares the MCP connections the plugin requires; an existing connection with the same identity is reused, otherwise one is created ' +
          '(usable by nobody until access is granted). With `manageIdentity`, the plugin owns url, authType and credentialMode of that connection.',
        body: z.object({ manifest: pluginManifestSchema }),
        response: { 201: z.object({ plugin: pluginSchema }), ...commonErrorResponses },
      },
    },
    async (request, reply) =>
      reply.status(201).send({ plugin: await service.installPlugin(writeContextOf(request), request.body.manifest) }),
  );

  app.delete(
    '/v1/plugins/:pluginId',
    {
      onRequest: managersRecentlyAuthenticated,
      schema: {
        tags,
        operationId: 'uninstallPlugin',
        summary: 'Uninstall a plugin (its connections stay, no longer required or managed by it)',
        params: z.object({ pluginId: pluginIdSchema }),
        response: {
          204: noContent,
          ...commonErrorResponses,
          404: errorResponse([mcpConnectionErrors.plugin_not_found]),
        },
      },
    },
    async (request, reply) => {
      await service.uninstallPlugin(writeContextOf(request), request.params.pluginId);
      return reply.status(204).send(null);
    },
  );
};
