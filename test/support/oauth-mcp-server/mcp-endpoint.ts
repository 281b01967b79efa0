// The protected MCP endpoint: the SDK's bearer middleware in front of a Streamable HTTP MCP server
// with one tool, `whoami`, which says which OAuth client called.
import express, { type Express, type Request, type Response } from 'express';
import * as z from 'zod';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { requireBearerAuth } from '@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js';
import type { OAuthServerProvider } from '@modelcontextprotocol/sdk/server/auth/provider.js';
import type { ServerContext } from './provider.ts';

export function serveMcp(
  app: Express,
  ctx: ServerContext,
  provider: OAuthServerProvider,
  mcpPath: string,
  resourceMetadataUrl: string,
) {
  const bearer = requireBearerAuth({
    verifier: provider,
    requiredScopes: ctx.options.requiredScopes,
    ...(ctx.options.resourceMetadataInChallenge === false ? {} : { resourceMetadataUrl }),
  });
  app.post(
    mcpPath,
    (_req, _res, next) => {
      ctx.stats.mcpRequests++;
      if (!ctx.options.onMcpRequest) return next();
      ctx.options.onMcpRequest(ctx.stats.mcpRequests).then(() => next(), next);
    },
    bearer,
    express.json(),
    async (req: Request, res: Response) => {
      const mcp = new McpServer({ name: 'oauth-test-server', version: '1.0.0' });
      mcp.registerTool(
        'whoami',
        { description: 'Says which OAuth client called', inputSchema: { note: z.string().optional() } },
        async () => ({
          content: [{ type: 'text', text: `client ${req.auth?.clientId ?? 'unknown'}` }],
        }),
      );
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      res.on('close', () => {
        void transport.close();
        void mcp.close();
      });
      await mcp.connect(transport);
      await transport.handleRequest(req, res, req.body);
    },
  );
  app.all(mcpPath, bearer, (_req, res) => {
    res
      .status(405)
      .set('allow', 'POST')
      .json({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed' }, id: null });
  });
}
