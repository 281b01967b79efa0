// The rules of connecting an MCP connection through OAuth: who may start an authorization and
// for which identity, what the callback must check before it stores anything, keeping tokens
// fresh (one refresh at a time per credential, across processes), and disconnecting.
//
// The protocol functions (discovery.ts, registration.ts, authorize.ts, state.ts, tokens.ts,
// callback.ts) know the protocol; the step files know the organization: connections, members,
// credentials, and the database that makes states single-use and refreshes single-flight:
//   client-acquisition.ts    discovery and the client (pre-registered, metadata document, dynamic)
//   start-authorization.ts   POST .../oauth/authorize
//   complete-authorization.ts the callback
//   access-tokens.ts         a usable token (refresh), disconnect (revoke)
//   connection-test.ts       POST .../test of an OAuth connection, with one scope step-up
//   health-check.ts          the background health job's check of one credential
// This file assembles them into the service the routes and the connections module call.

import type { Config } from '../../../config.ts';
import type { FreshAuthenticationCheck } from '../../../http/auth.ts';
import type { CallerContext } from '../../../platform/write-context.ts';
import { createRateLimiter, type RateLimiter } from '../../../platform/rate-limiter.ts';
import type { ConnectionRow } from '../contracts.ts';
import { disconnect, usableAccessToken } from './access-tokens.ts';
import type { CallbackQuery } from './callback.ts';
import { completeAuthorization, type RequestOrigin } from './complete-authorization.ts';
import { stepUpScope, testOAuthConnection } from './connection-test.ts';
import { parseWwwAuthenticate } from './challenge.ts';
import { checkOAuthCredential } from './health-check.ts';
import type { OAuthDeps } from './deps.ts';
import { authorize } from './start-authorization.ts';
import type { CallbackMode } from './state.ts';
import { clientMetadataDocument } from './urls.ts';
import { prepareConnectionRevocation } from './revocation.ts';
import type { Queryable } from '../../../db/database.ts';

export type { CallbackResult } from './complete-authorization.ts';

export interface McpOAuthServiceDeps
  extends Pick<OAuthDeps, 'db' | 'secrets' | 'outbound' | 'stateKey' | 'connections' | 'members' | 'logger'> {
  config: Pick<Config, 'publicUrl'>;
  /** Bounds how many authorizations a member can start (each dials the servers several times). */
  rateLimiter?: RateLimiter;
}

export function createMcpOAuthService(input: McpOAuthServiceDeps) {
  const { config, rateLimiter, ...rest } = input;
  const deps: OAuthDeps = {
    ...rest,
    publicUrl: config.publicUrl,
    fetch: (url, init) => input.outbound.fetch(url, init),
    limiter: rateLimiter ?? createRateLimiter(input.db),
  };
  return {
    /** The document served at GET /oauth/client-metadata.json. */
    clientMetadataDocument: () => clientMetadataDocument(deps.publicUrl),
    /**
     * `browserNonce`: the binding nonce the calling browser already carries (browser-binding.ts), if any.
     * `requireFresh`: asked before the organization's shared identity is authorized (privileged).
     */
    authorize: (
      ctx: CallerContext,
      connectionId: string,
      browserNonce: string | null,
      requireFresh: FreshAuthenticationCheck,
    ) => authorize(deps, ctx, connectionId, browserNonce, requireFresh),
    callback: (
      origin: RequestOrigin,
      mode: CallbackMode,
      pathConnectionId: string | null,
      query: CallbackQuery,
      browserNonce: string | null,
    ) => completeAuthorization(deps, origin, mode, pathConnectionId, query, browserNonce),
    /** `requireFresh`: asked before the shared credential is deleted (privileged); a member's own needs nothing more. */
    disconnect: (ctx: CallerContext, connectionId: string, requireFresh: FreshAuthenticationCheck) =>
      disconnect(deps, ctx, connectionId, requireFresh),
    /** A usable access token for the member (or the shared identity, memberId null); other modules and tests call it. */
    accessToken: (
      organizationId: string,
      connectionId: string,
      memberId: string | null,
      options?: { forceRefresh?: boolean; scopes?: string[] },
    ) => usableAccessToken(deps, organizationId, connectionId, memberId, options),
    /**
     * After the MCP server answered a token of accessToken() (granted `scopes`) with 403 and this
     * WWW-Authenticate: for insufficient_scope, one step-up (connection-test.ts stepUpScope): a new
     * token, or null (the next authorization asks for the scopes; the credential needs a reconnect).
     */
    stepUp: async (
      organizationId: string,
      connectionId: string,
      memberId: string | null,
      scopes: string[],
      wwwAuthenticate: string | null,
    ): Promise<string | null> => {
      const challenge = parseWwwAuthenticate(wwwAuthenticate);
      const connection = await deps.connections.findConnection(deps.db, organizationId, connectionId);
      if (connection?.authType !== 'oauth' || challenge?.error !== 'insufficient_scope') return null;
      return stepUpScope(deps, connection, memberId, scopes, challenge.scope);
    },
    testConnection: (connection: ConnectionRow, memberId: string | null) =>
      testOAuthConnection(deps, connection, memberId),
    /** The background health job's check of one credential (health-check.ts). */
    checkCredential: (
      connection: ConnectionRow,
      credential: { memberId: string | null; validated: boolean },
      wants: { refresh: boolean; probe: boolean },
    ) => checkOAuthCredential(deps, connection, credential, wants),
    /** In the transaction deleting the connection: what revokes its tokens once that commits (revocation.ts). */
    prepareConnectionRevocation: (tx: Queryable, connection: ConnectionRow) =>
      prepareConnectionRevocation(deps, tx, connection),
  };
}

export type McpOAuthService = ReturnType<typeof createMcpOAuthService>;
