// HTTP of MCP OAuth: start an authorization, the two callbacks (shared-v1 and isolated-v1),
// disconnect, and the client ID metadata document.

import type { FastifyPluginAsyncZod, ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { authenticate, freshAuthenticationCheck, publicAccess, writeContextOf } from '../../../http/auth.ts';
import {
  commonErrorResponses,
  connectionIdSchema,
  isoTimestamp,
  secretString,
  errorResponse,
} from '../../../http/schemas.ts';
import { diagnosticSchema } from '../probe/index.ts';
import type { CallbackResult, McpOAuthService } from './service.ts';
import type { RequestOrigin } from './complete-authorization.ts';
import { htmlPageHeaders } from '../../../http/html-page.ts';
import { callbackPage, wantsHtml } from './page.ts';
import { bindingNonceOf } from './browser-binding.ts';
import type { ErrorCode } from '../../../http/error-catalog.ts';
import { errorHandler } from '../../../http/error-handler.ts';
import { ApiError } from '../../../http/errors.ts';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { httpErrors } from '../../../http/error-codes.ts';
import { mcpConnectionErrors } from '../error-codes.ts';

const params = z.object({ connectionId: connectionIdSchema });
const notFoundBody = errorResponse(
  [mcpConnectionErrors.connection_not_found],
  'no such connection in your organization (or not one you may use)',
);
/** The authorization server or MCP server failed a step; `diagnostic` says which. */
const failureWithDiagnostic = (codes: ErrorCode[], description: string) =>
  errorResponse(codes, undefined, { description, extend: { diagnostic: diagnosticSchema } });

// Callback query values come from a browser redirect; they are bounded, never trusted.
const callbackQuery = z
  .object({
    code: z.string().min(1).max(4096).optional(),
    state: z.string().min(1).max(4096).optional(),
    iss: z.string().min(1).max(2048).optional(),
    error: z.string().min(1).max(256).optional(),
    error_description: z.string().max(2048).optional(),
    error_uri: z.string().max(2048).optional(),
  })
  .loose();

/** The request a callback arrives on: a browser without a session (who acts is its authorization's member). */
function originOf(request: FastifyRequest): RequestOrigin {
  const userAgent = request.headers['user-agent'];
  return {
    requestId: request.id,
    clientAddress: request.ip,
    userAgent: typeof userAgent === 'string' ? userAgent : null,
  };
}

const callbackResponses = {
  200: z
    .object({
      status: z.literal('connected'),
      connectionId: z.string(),
      subject: z.enum(['member', 'shared']),
      grantedScopes: z.array(z.string()),
    })
    .describe('The credential is stored'),
  400: errorResponse(
    [
      mcpConnectionErrors.invalid_state,
      mcpConnectionErrors.state_expired,
      mcpConnectionErrors.issuer_mismatch,
      httpErrors.invalid_request,
    ],
    undefined,
    {
      description:
        'invalid_state (forged, replayed, or for another callback), state_expired, issuer_mismatch (RFC 9207), invalid_request',
    },
  ),
  403: errorResponse(
    [mcpConnectionErrors.authorization_denied, mcpConnectionErrors.browser_mismatch, httpErrors.forbidden],
    undefined,
    {
      description:
        'authorization_denied (the user or server declined), browser_mismatch (the browser does not carry the binding cookie its authorize call set: the URL was opened in another browser; nothing stored, and the authorization stays for its own browser until it expires) ' +
        'or forbidden (the member may no longer connect this identity)',
    },
  ),
  404: errorResponse(
    [mcpConnectionErrors.connection_not_found],
    'the connection was deleted meanwhile; nothing stored',
  ),
  409: errorResponse(
    [mcpConnectionErrors.connection_identity_changed, mcpConnectionErrors.oauth_client_changed],
    'nothing stored',
  ),
  502: failureWithDiagnostic(
    [mcpConnectionErrors.oauth_token_exchange_failed],
    'oauth_token_exchange_failed: the authorization server did not exchange the code for a token; `diagnostic` says why',
  ),
};

export const mcpOAuthRoutes: FastifyPluginAsyncZod<{ service: McpOAuthService }> = async (app, { service }) => {
  app.post(
    '/v1/mcp-connections/:connectionId/oauth/authorize',
    {
      onRequest: authenticate({ requires: 'mcp_connections.use', freshAuthentication: 'by-route' }),
      schema: {
        tags: ['MCP Connections'],
        operationId: 'authorizeMcpConnection',
        summary: 'Start connecting through OAuth: returns the URL to send the user to',
        description:
          "For a per_member connection, any member who may use it connects their own account; for a shared connection, owners and admins connect the organization's identity. " +
          'Runs discovery (RFC 9728, RFC 8414/OpenID), obtains a client (pre-registered, client ID metadata document, or dynamic registration), and returns an authorization URL with PKCE S256, a signed single-use state and the resource indicator. ' +
          'The response sets the cookie `orgplane_mcp_oauth` (HttpOnly, SameSite=Lax, Secure when PUBLIC_URL is https, Path `/v1/mcp-connections/`, ten minutes), a random nonce that binds the authorization to this browser: ' +
          'open the URL in the browser that made this call (the console does, calling from its page), since the callback refuses a browser without it (403 `browser_mismatch`). ' +
          'A browser that already carries the cookie keeps its nonce, so several authorizations may be in progress in one browser. ' +
          'Authorizing the shared identity is privileged (below); a member connecting their own account of a per_member connection needs no recent authentication.',
        params,
        response: {
          200: z.object({
            authorizationUrl: secretString(
              'Where to send the browser: it carries the signed single-use state, and this answer sets the browser-binding cookie',
            ),
            expiresAt: z.string().describe('The authorization must complete before this time'),
            callbackMode: z.enum(['shared-v1', 'isolated-v1']),
          }),
          ...commonErrorResponses,
          404: notFoundBody,
          409: errorResponse(
            [
              mcpConnectionErrors.not_oauth_connection,
              mcpConnectionErrors.client_credentials_grant,
              mcpConnectionErrors.oauth_setup_required,
            ],
            undefined,
            {
              description:
                'not_oauth_connection; client_credentials_grant (the connection obtains its token without a browser); or oauth_setup_required (no way to obtain a client: configure oauthClient)',
            },
          ),
          429: errorResponse(
            [httpErrors.rate_limited],
            'too many authorizations started (Retry-After says when to retry)',
          ),
          502: failureWithDiagnostic(
            [mcpConnectionErrors.oauth_discovery_failed, mcpConnectionErrors.oauth_registration_failed],
            "oauth_discovery_failed or oauth_registration_failed: the MCP server's authorization server could not be discovered, or refused to register this client; `diagnostic` says which step failed",
          ),
        },
      },
    },
    async (request, reply) => {
      const result = await service.authorize(
        writeContextOf(request),
        request.params.connectionId,
        bindingNonceOf(request.headers.cookie),
        freshAuthenticationCheck(request),
      );
      reply.header('set-cookie', result.browserCookie);
      return {
        authorizationUrl: result.authorizationUrl,
        expiresAt: isoTimestamp(result.expiresAt),
        callbackMode: result.callbackMode,
      };
    },
  );

  // The callbacks are opened by a browser: a person gets a page, a program gets JSON.
  await app.register(async (scope) => {
    const callbacks = scope.withTypeProvider<ZodTypeProvider>();
    callbacks.setErrorHandler((error, request, reply) => {
      if (!(error instanceof ApiError) || !wantsHtml(request.headers.accept))
        return errorHandler(error as FastifyError, request, reply);
      return reply
        .status(error.statusCode)
        .headers(htmlPageHeaders)
        .send(callbackPage({ ok: false, title: 'Not connected', message: error.message, code: error.code }));
    });
    const respond = (request: FastifyRequest, reply: FastifyReply, result: CallbackResult) => {
      if (wantsHtml(request.headers.accept)) {
        return reply.headers(htmlPageHeaders).send(
          callbackPage({
            ok: true,
            title: 'Connected',
            message: 'The connection is authorized. You can close this window.',
          }),
        );
      }
      return { status: 'connected' as const, ...result };
    };

    callbacks.get(
      '/v1/mcp-connections/oauth/callback',
      {
        schema: {
          tags: ['MCP Connections'],
          operationId: 'mcpOAuthCallbackShared',
          ...publicAccess,
          summary: 'OAuth callback shared by all connections (shared-v1)',
          description:
            'Where the authorization server sends the browser back. Authenticated by the signed, single-use state and bound to the browser that started it by the orgplane_mcp_oauth cookie.',
          querystring: callbackQuery,
          response: callbackResponses,
        },
      },
      async (request, reply) => {
        const result = await service.callback(
          originOf(request),
          'shared-v1',
          null,
          request.query,
          bindingNonceOf(request.headers.cookie),
        );
        return respond(request, reply, result);
      },
    );

    callbacks.get(
      '/v1/mcp-connections/:connectionId/oauth/callback',
      {
        schema: {
          tags: ['MCP Connections'],
          operationId: 'mcpOAuthCallbackIsolated',
          ...publicAccess,
          summary: 'OAuth callback of one connection (isolated-v1)',
          description:
            'Where the authorization server sends the browser back. Authenticated by the signed, single-use state, which must name this connection, and bound to the browser that started it by the orgplane_mcp_oauth cookie.',
          params,
          querystring: callbackQuery,
          response: callbackResponses,
        },
      },
      async (request, reply) => {
        const result = await service.callback(
          originOf(request),
          'isolated-v1',
          request.params.connectionId,
          request.query,
          bindingNonceOf(request.headers.cookie),
        );
        return respond(request, reply, result);
      },
    );
  });

  app.delete(
    '/v1/mcp-connections/:connectionId/credentials',
    {
      onRequest: authenticate({ requires: 'mcp_connections.use', freshAuthentication: 'by-route' }),
      schema: {
        tags: ['MCP Connections'],
        operationId: 'disconnectMcpConnection',
        summary: 'Disconnect: delete your own credential (per_member) or the shared one (shared; owners and admins)',
        description:
          'Needs a session of an active member of the active organization who may use the connection. ' +
          'Deleting the shared credential is privileged (below); deleting your own credential of a per_member connection needs no recent authentication.',
        params,
        response: {
          204: z.null().describe('Disconnected (also when nothing was stored)'),
          ...commonErrorResponses,
          404: notFoundBody,
        },
      },
    },
    async (request, reply) => {
      await service.disconnect(writeContextOf(request), request.params.connectionId, freshAuthenticationCheck(request));
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/oauth/client-metadata.json',
    {
      schema: {
        tags: ['MCP Connections'],
        operationId: 'oauthClientMetadataDocument',
        ...publicAccess,
        summary: 'The OAuth client ID metadata document authorization servers fetch to identify this service',
        description:
          "No authentication. Its URL is this service's OAuth `client_id` towards authorization servers that support client ID metadata documents, so no registration is needed with them; it names the redirect URIs of the OAuth callbacks.",
        response: {
          200: z.object({
            client_id: z.string(),
            client_name: z.string(),
            client_uri: z.string(),
            redirect_uris: z.array(z.string()),
            grant_types: z.array(z.string()),
            response_types: z.array(z.string()),
            token_endpoint_auth_method: z.string(),
          }),
        },
      },
    },
    async (_request, reply) => {
      reply.header('cache-control', 'public, max-age=300');
      return service.clientMetadataDocument() as never;
    },
  );
};
