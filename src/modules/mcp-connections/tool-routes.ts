// HTTP of a connection's tool catalog and tool policy (rules in tools.ts).
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { authenticate, callerOf, writeContextOf } from '../../http/auth.ts';
import { commonErrorResponses, connectionIdSchema, errorResponse } from '../../http/schemas.ts';
import { connectionSchema } from './schemas.ts';
import { toolCatalogSchema, toolPolicyInputSchema } from './tool-schemas.ts';
import type { McpConnectionService } from './service.ts';
import { mcpConnectionErrors } from './error-codes.ts';

const tags = ['MCP Connections'];
const connectionParams = z.object({ connectionId: connectionIdSchema });
const notFound = errorResponse(
  [mcpConnectionErrors.connection_not_found],
  'no such connection in your active organization (members: or not one you may use)',
);

export const mcpToolRoutes: FastifyPluginAsyncZod<{ service: McpConnectionService }> = async (app, { service }) => {
  app.get(
    '/v1/mcp-connections/:connectionId/tools',
    {
      onRequest: authenticate({ requires: 'mcp_connections.use' }),
      schema: {
        tags,
        operationId: 'listMcpConnectionTools',
        summary: 'The tools the server offers, with the tool policy applied',
        description:
          'Owners, admins, and members who may use the connection. The catalog is the one taken at the last successful probe or test of the ' +
          "connection's current configuration (create, edit, an API key stored, POST .../test); before any, `tools` holds only the tools the policy names. " +
          '`allowed` and `needsApproval` apply the tool policy, the same for every caller.',
        params: connectionParams,
        response: { 200: toolCatalogSchema, ...commonErrorResponses, 404: notFound },
      },
    },
    async (request) => service.listTools(callerOf(request), request.params.connectionId),
  );

  app.put(
    '/v1/mcp-connections/:connectionId/tool-policy',
    {
      // Which tools the workspace may call is as privileged as who may use the connection: both decide what
      // the workspace's agents can do with its credentials.
      onRequest: authenticate({ requires: 'mcp_connections.manage', freshAuthentication: true }),
      schema: {
        tags,
        operationId: 'setMcpConnectionToolPolicy',
        summary: 'Set which tools of a connection the workspace may use',
        description:
          'Owners and admins. Replaces the policy: every tool (`all`), only the tools named (`allow_list`), or every tool but those named (`deny_list`), ' +
          'and whether calls of tools that may be destructive need an approval. Names need not be in the catalog now. Does not change `updatedAt` of the connection.',
        params: connectionParams,
        body: toolPolicyInputSchema,
        response: {
          200: connectionSchema.describe('The connection, carrying its new `toolPolicy`'),
          ...commonErrorResponses,
          404: notFound,
        },
      },
    },
    async (request) => service.setToolPolicy(writeContextOf(request), request.params.connectionId, request.body),
  );
};
