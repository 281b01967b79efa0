// The rules of connecting an MCP connection through OAuth: who may start an authorization and
// for which identity, what the callback must check before it stores anything, keeping tokens
// fresh (one refresh at a time per credential, across processes), and disconnecting.
//
// The flow functions (discovery.ts, registration.ts, authorize.ts, state.ts, tokens.ts,
// callback.ts) know the protocol; this file knows the organization: connections, members,
// credentials, and the database that makes states single-use and refreshes single-flight.

import type { Database, Queryable } from '../../../db/database.ts';
import { lockUntilCommit } from '../../../db/locks.ts';
import type { Config } from '../../../config.ts';
import { ApiError, forbidden, notAnActiveMember, notFound, rateLimited } from '../../../http/errors.ts';
import { createRateLimiter, type RateLimiter } from '../../../platform/rate-limiter.ts';
import type { Caller } from '../../../http/auth.ts';
import { newId } from '../../../platform/ids.ts';
import type { OutboundClient } from '../../../platform/outbound.ts';
import type { SecretBox } from '../../../platform/secrets.ts';
import type { IdentityService } from '../../identity/service.ts';
import { createConnectionStore, type ConnectionRow } from '../store.ts';
import { buildAuthorizationUrl, createPkcePair, selectScopes, stepUpScopes as stepUp } from './authorize.ts';
import { probeConnection, type Diagnostic, type HighestPassed } from '../probe/index.ts';
import { authorizationCodeFrom, checkResponseIssuer, type CallbackQuery } from './callback.ts';
import {
  deleteOAuthCredential,
  findOAuthCredential,
  markCredentialHealth,
  openOAuthSecret,
  saveOAuthCredential,
  sealOAuthSecret,
  updateRefreshedCredential,
  type OAuthTokenSecret,
} from './credential-store.ts';
import { oauthDiagnostic } from './diagnostic.ts';
import { discover, fetchAuthorizationServerMetadata, resourceChallenge, type DiscoveryResult } from './discovery.ts';
import { OAuthFlowError, type CredentialHealthReason, type FetchLike } from './errors.ts';
import {
  chooseRegistration,
  registerDynamicClient,
  type DynamicClient,
  type OAuthClientCredentials,
  type RegistrationPlan,
  type RegistrationSource,
} from './registration.ts';
import { signState, verifyState, type CallbackMode, type CredentialSubject } from './state.ts';
import {
  activeMemberRole,
  addStepUpScopes,
  stepUpScopes,
  claimPendingAuthorization,
  deleteExpiredPendingAuthorizations,
  findRegisteredClient,
  insertPendingAuthorization,
  recordConnectionRegistration,
  saveRegisteredClient,
  upsertConnectionState,
  type PendingAuthorizationRow,
} from './store.ts';
import { classifyRefusal, exchangeAuthorizationCode, needsRefresh, refreshAccessToken, representableDate, revokeToken } from './tokens.ts';
import { callbackModeFor, callbackUrl, clientMetadataDocument, clientMetadataUrl } from './urls.ts';

/** How long an authorization may take between authorize and callback. */
export const AUTHORIZATION_TTL_SECONDS = 10 * 60;

/** Authorizations a member may start per window, across all processes (counted in the database). */
export const authorizeLimits = { perMember: 30, windowSeconds: 60 };

export interface McpOAuthServiceDeps {
  db: Database;
  config: Pick<Config, 'publicUrl'>;
  secrets: SecretBox;
  outbound: OutboundClient;
  /** HMAC key for `state`, derived from the server secret (state.ts deriveStateKey). */
  stateKey: Buffer;
  /** Identity's lockMember (through the connections service): the member, share-locked until `tx` ends. */
  lockMember: IdentityService['lockMember'];
  /** Bounds how many authorizations a member can start (each dials the servers several times). */
  rateLimiter?: RateLimiter;
  logger?: { warn(details: Record<string, unknown>, message: string): void };
}

export interface CallbackResult {
  connectionId: string;
  subject: CredentialSubject;
  grantedScopes: string[];
}

export interface OAuthTestResult {
  ok: boolean;
  highestPassed: HighestPassed;
  tools: string[];
  diagnostic: Diagnostic | null;
}

export type AccessTokenResult =
  | { status: 'ok'; accessToken: string; scopes: string[]; refreshed: boolean }
  | { status: 'none' }
  | { status: 'reconnect_required'; reason: CredentialHealthReason }
  | { status: 'unavailable'; error: OAuthFlowError };

const adminRoles = new Set(['owner', 'admin']);

const connectionNotFound = () => notFound('connection_not_found', 'No such MCP connection');
const sharedNeedsAdmin = () => forbidden('Only owners and admins connect the shared identity of a connection');

const networkCodes = new Set(['unreachable', 'timeout', 'address_blocked', 'redirect_blocked']);

function oauthFailure(status: number, code: string, error: OAuthFlowError, url: string | undefined): ApiError {
  // Past the first request to the MCP server, it was reachable (`reachable` in highestPassed).
  const reachedServer = error.phase !== 'AUTH_RESOURCE_DISCOVERY' || !networkCodes.has(error.code);
  const diagnostic = oauthDiagnostic(error, url, reachedServer);
  return new ApiError(status, code, error.message, { diagnostic });
}

export function createMcpOAuthService(deps: McpOAuthServiceDeps) {
  const { db, secrets } = deps;
  const connections = createConnectionStore();
  const publicUrl = deps.config.publicUrl;
  const fetchFn: FetchLike = (url, init) => deps.outbound.fetch(url, init);
  const limiter = deps.rateLimiter ?? createRateLimiter(db);

  /** The connection as the caller may see it: 404 for unknown ids, other organizations, and members without access. */
  async function visibleConnection(caller: Caller, connectionId: string): Promise<ConnectionRow> {
    const organizationId = caller.organizationId!;
    const connection = await connections.findConnection(db, organizationId, connectionId);
    if (!connection) throw connectionNotFound();
    const isAdmin = caller.role !== null && adminRoles.has(caller.role);
    if (!isAdmin) {
      if (!caller.memberId || !(await connections.memberMayUse(db, organizationId, connectionId, caller.memberId))) {
        throw connectionNotFound();
      }
    }
    return connection;
  }

  /**
   * In a transaction that writes rows of the connection: the connection key-share locked until it
   * ends, so a DELETE waits for the write (or, come first, makes it 404) instead of the foreign key
   * refusing the write.
   */
  async function holdConnection(tx: Queryable, connection: ConnectionRow): Promise<void> {
    if (!(await connections.holdConnection(tx, connection.organizationId, connection.id))) throw connectionNotFound();
  }

  /** Whether the member who started `pending` (their role if still active, else null) may connect its identity. */
  async function mayConnect(q: Queryable, pending: PendingAuthorizationRow, connection: ConnectionRow, role: string | null): Promise<boolean> {
    if (role === null) return false;
    if (pending.subject === 'shared') return adminRoles.has(role) && connection.credentialMode === 'shared';
    return (
      connection.credentialMode === 'per_member' &&
      (adminRoles.has(role) || (await connections.memberMayUse(q, pending.organization_id, connection.id, pending.member_id)))
    );
  }

  function subjectFor(caller: Caller, connection: ConnectionRow): { subject: CredentialSubject; memberId: string } {
    if (!caller.memberId) throw forbidden('Connecting through OAuth needs a signed-in member, not an API key');
    if (connection.credentialMode === 'shared') {
      if (!caller.role || !adminRoles.has(caller.role)) throw sharedNeedsAdmin();
      return { subject: 'shared', memberId: caller.memberId };
    }
    return { subject: 'member', memberId: caller.memberId };
  }

  function preRegisteredClient(connection: ConnectionRow) {
    if (!connection.oauthClientId) return null;
    return {
      clientId: connection.oauthClientId,
      clientSecret: connection.oauthClientSecretSealed ? secrets.open(connection.oauthClientSecretSealed) : null,
      tokenEndpointAuthMethod: connection.oauthTokenEndpointAuthMethod,
    };
  }

  function dynamicFromRow(row: Awaited<ReturnType<typeof findRegisteredClient>>): DynamicClient | null {
    if (!row) return null;
    return {
      issuer: row.issuer,
      clientId: row.client_id,
      clientSecret: row.client_secret_sealed ? secrets.open(row.client_secret_sealed) : null,
      clientSecretExpiresAt: row.client_secret_expires_at ? Math.floor(row.client_secret_expires_at.getTime() / 1000) : null,
      authMethod: row.token_endpoint_auth_method,
      redirectUris: row.redirect_uris,
    };
  }

  async function recordState(connection: ConnectionRow, patch: { issuer: string | null; source: RegistrationSource | null; setupRequired: boolean; issuerReview: boolean; problem: string | null }) {
    await db.transaction(async (tx) => {
      await holdConnection(tx, connection);
      await upsertConnectionState(tx, {
        organization_id: connection.organizationId,
        connection_id: connection.id,
        identity_fingerprint: connection.identityFingerprint,
        issuer: patch.issuer,
        registration_source: patch.source,
        setup_required: patch.setupRequired,
        issuer_review_required: patch.issuerReview,
        problem_code: patch.problem,
      });
      // The connection row shows how the client is obtained; a failure that says nothing about it leaves it alone.
      if (patch.source !== null || patch.setupRequired) {
        await recordConnectionRegistration(tx, connection.organizationId, connection.id, connection.identityFingerprint, patch.source, patch.setupRequired);
      }
    });
  }

  /** Discovery, with the connection flagged for review when a pinned issuer does not match. */
  async function discoverFor(connection: ConnectionRow): Promise<DiscoveryResult> {
    const found = await tryDiscover(connection);
    if (found instanceof OAuthFlowError) throw oauthFailure(502, 'oauth_discovery_failed', found, connection.url);
    return found;
  }

  async function tryDiscover(connection: ConnectionRow): Promise<DiscoveryResult | OAuthFlowError> {
    try {
      return await discover({ serverUrl: connection.url, fetch: fetchFn, pinnedIssuer: connection.authorizationServerIssuer });
    } catch (error) {
      if (!(error instanceof OAuthFlowError)) throw error;
      if (error.issuerReviewRequired) {
        await recordState(connection, { issuer: null, source: null, setupRequired: false, issuerReview: true, problem: error.code });
      }
      deps.logger?.warn({ connectionId: connection.id, phase: error.phase, code: error.code }, 'MCP OAuth discovery failed');
      return error;
    }
  }

  /**
   * Without a credential, the test of an OAuth connection checks what an authorization would
   * need: discovery, and a way to obtain a client. It records setupRequired / issuerReviewRequired
   * (so an administrator sees them without anyone starting an authorization) and registers nothing.
   */
  async function checkSetup(connection: ConnectionRow): Promise<OAuthTestResult> {
    const found = await tryDiscover(connection);
    const reached = (error: OAuthFlowError) => error.phase !== 'AUTH_RESOURCE_DISCOVERY' || !networkCodes.has(error.code);
    if (found instanceof OAuthFlowError) return { ok: false, highestPassed: reached(found) ? 'reachable' : 'configured', tools: [], diagnostic: oauthDiagnostic(found, connection.url, reached(found)) };
    const plan = await planClient(connection, found);
    if (plan.source === null) {
      const error = new OAuthFlowError('AUTH_CLIENT_REGISTRATION', 'setup_required', plan.reason);
      return { ok: false, highestPassed: 'reachable', tools: [], diagnostic: oauthDiagnostic(error, connection.url, true) };
    }
    // A dynamic registration not made yet is possible, not used: the source stays as it was.
    const source = plan.source === 'dynamic' && !plan.client ? connection.oauthRegistrationSource : plan.source;
    await recordState(connection, { issuer: found.issuer, source, setupRequired: false, issuerReview: false, problem: null });
    if (source === null) await recordConnectionRegistration(db, connection.organizationId, connection.id, connection.identityFingerprint, null, false);
    const shared = connection.credentialMode === 'shared';
    const error = new OAuthFlowError(
      'AUTH_USER_OR_WORKLOAD',
      shared ? 'shared_not_connected' : 'not_connected',
      shared ? 'The shared identity of this connection has not been authorized yet' : 'You have not connected your account to this server yet',
    );
    return { ok: false, highestPassed: 'reachable', tools: [], diagnostic: oauthDiagnostic(error, connection.url, true) };
  }

  /**
   * Where this connection's client comes from on this server (pre-registered, client metadata document,
   * a stored or a still-to-make dynamic registration), judged for the isolated callback. When none
   * can serve, the connection is recorded as `setup_required`.
   */
  async function planClient(connection: ConnectionRow, discovery: DiscoveryResult): Promise<RegistrationPlan> {
    const stored = dynamicFromRow(await findRegisteredClient(db, connection.organizationId, connection.id, discovery.issuer, connection.identityFingerprint));
    const plan = chooseRegistration({
      preRegistered: preRegisteredClient(connection),
      metadata: discovery.metadata,
      clientMetadataUrl: clientMetadataUrl(publicUrl),
      dynamicClient: stored,
      redirectUri: callbackUrl(publicUrl, connection.id, 'isolated-v1'),
    });
    if (plan.source === null) {
      await recordState(connection, { issuer: discovery.issuer, source: null, setupRequired: true, issuerReview: false, problem: 'setup_required' });
    }
    return plan;
  }

  /** The client to use, registering one dynamically the first time (once per connection and server). */
  async function clientFor(connection: ConnectionRow, discovery: DiscoveryResult, scopes: string[]): Promise<{ client: OAuthClientCredentials; source: RegistrationSource; mode: CallbackMode; redirectUri: string }> {
    const plan = await planClient(connection, discovery);
    if (plan.source === null) {
      throw new ApiError(409, 'oauth_setup_required', plan.reason, { setupRequired: true });
    }
    const mode = callbackModeFor(plan.source);
    const redirectUri = callbackUrl(publicUrl, connection.id, mode);
    let client: OAuthClientCredentials;
    if (plan.source === 'dynamic' && !plan.client) {
      client = await registerOnce(connection, discovery, redirectUri, scopes);
    } else {
      client = plan.client!;
    }
    await recordState(connection, { issuer: discovery.issuer, source: plan.source, setupRequired: false, issuerReview: false, problem: null });
    return { client, source: plan.source, mode, redirectUri };
  }

  /**
   * Dynamic registration, once per connection and server even when several members start their
   * first authorization at the same moment in different processes: a transaction-scoped advisory
   * lock on the connection serializes them, and whoever comes second finds the stored client.
   */
  async function registerOnce(connection: ConnectionRow, discovery: DiscoveryResult, redirectUri: string, scopes: string[]): Promise<OAuthClientCredentials> {
    return db.transaction(async (tx) => {
      await lockUntilCommit(tx, `mcp-oauth-registration:${connection.id}`);
      const existing = dynamicFromRow(await findRegisteredClient(tx, connection.organizationId, connection.id, discovery.issuer, connection.identityFingerprint));
      const reusable = chooseRegistration({ metadata: discovery.metadata, dynamicClient: existing, redirectUri });
      if (reusable.source === 'dynamic' && reusable.client) return reusable.client;
      let registered: DynamicClient;
      try {
        registered = await registerDynamicClient({
          metadata: discovery.metadata,
          redirectUris: [redirectUri],
          scope: scopes.join(' ') || null,
          clientUri: publicUrl,
          fetch: fetchFn,
        });
      } catch (error) {
        if (error instanceof OAuthFlowError) throw oauthFailure(502, 'oauth_registration_failed', error, discovery.metadata.registration_endpoint);
        throw error;
      }
      // Locked after the registration request, so that a DELETE never waits on the server's answer.
      await holdConnection(tx, connection);
      const saved = await saveRegisteredClient(tx, {
        organization_id: connection.organizationId,
        connection_id: connection.id,
        issuer: discovery.issuer,
        identity_fingerprint: connection.identityFingerprint,
        client_id: registered.clientId,
        client_secret_sealed: registered.clientSecret ? secrets.seal(registered.clientSecret) : null,
        client_secret_expires_at: registered.clientSecretExpiresAt ? representableDate(registered.clientSecretExpiresAt * 1000) : null,
        token_endpoint_auth_method: registered.authMethod,
        redirect_uris: registered.redirectUris,
      });
      return dynamicFromRow(saved)!;
    });
  }

  /** The client of a pending authorization, rebuilt at callback time from what is stored now. */
  async function clientAtCallback(connection: ConnectionRow, pending: PendingAuthorizationRow): Promise<OAuthClientCredentials> {
    const changed = () => new ApiError(409, 'oauth_client_changed', 'The OAuth client of this connection changed during the authorization; start again');
    if (pending.registration_source === 'pre-registered') {
      const pre = preRegisteredClient(connection);
      if (!pre || pre.clientId !== pending.client_id) throw changed();
      const plan = chooseRegistration({ preRegistered: pre });
      return (plan as { client: OAuthClientCredentials }).client;
    }
    if (pending.registration_source === 'client-metadata') return { clientId: pending.client_id, clientSecret: null, authMethod: 'none' };
    const stored = dynamicFromRow(await findRegisteredClient(db, connection.organizationId, connection.id, pending.issuer, connection.identityFingerprint));
    if (!stored || stored.clientId !== pending.client_id) throw changed();
    return stored;
  }

  const service = {
    /** The document served at GET /oauth/client-metadata.json. */
    clientMetadataDocument: () => clientMetadataDocument(publicUrl),

    /**
     * POST /v1/mcp-connections/{id}/oauth/authorize: discovery, registration, a pending
     * authorization, and the URL to send the user to.
     */
    async authorize(caller: Caller, connectionId: string): Promise<{ authorizationUrl: string; expiresAt: Date; callbackMode: CallbackMode }> {
      const connection = await visibleConnection(caller, connectionId);
      if (connection.authType !== 'oauth') throw new ApiError(409, 'not_oauth_connection', 'This connection does not use OAuth');
      const { subject, memberId } = subjectFor(caller, connection);
      const budget = await limiter.hit(`mcp-oauth-authorize:${memberId}`, authorizeLimits.perMember, authorizeLimits.windowSeconds);
      if (!budget.allowed) throw rateLimited(budget, 'Too many authorizations started; retry later');
      const discovery = await discoverFor(connection);
      const selected = selectScopes({ requested: connection.requestedScopes, challengeScope: discovery.challengeScope, resourceScopes: discovery.resourceScopes });
      // Scopes a server demanded later (403 insufficient_scope) that a refresh could not add.
      const scopes = [...new Set([...selected, ...(await stepUpScopes(db, connection.organizationId, connection.id, connection.identityFingerprint))])];
      const { client, source, mode, redirectUri } = await clientFor(connection, discovery, scopes);

      const pkce = createPkcePair();
      const id = newId('moa');
      const expiresAt = new Date(Date.now() + AUTHORIZATION_TTL_SECONDS * 1000);
      await deleteExpiredPendingAuthorizations(db, connection.organizationId);
      await db.transaction(async (tx) => {
        // The caller again, held until the row naming them is written: removed, suspended or demoted
        // since the request was authenticated (or one of those in progress) is what the route answers them now.
        const member = await deps.lockMember(tx, connection.organizationId, memberId);
        if (member?.status !== 'active') throw notAnActiveMember();
        if (subject === 'shared' && !adminRoles.has(member.role)) throw sharedNeedsAdmin();
        await holdConnection(tx, connection);
        await insertPendingAuthorization(tx, {
          id,
          organization_id: connection.organizationId,
          connection_id: connection.id,
          identity_fingerprint: connection.identityFingerprint,
          member_id: memberId,
          subject,
          callback_mode: mode,
          redirect_uri: redirectUri,
          issuer: discovery.issuer,
          iss_parameter_supported: discovery.metadata.authorization_response_iss_parameter_supported === true,
          token_endpoint: discovery.metadata.token_endpoint,
          resource: discovery.resource,
          scopes,
          registration_source: source,
          client_id: client.clientId,
          code_verifier_sealed: secrets.seal(pkce.verifier),
          expires_at: expiresAt,
        });
      });
      const state = signState(
        {
          v: 1,
          id,
          org: connection.organizationId,
          cid: connection.id,
          idf: connection.identityFingerprint,
          mid: memberId,
          sub: subject,
          mode,
          exp: Math.floor(expiresAt.getTime() / 1000),
        },
        deps.stateKey,
      );
      const authorizationUrl = buildAuthorizationUrl({
        authorizationEndpoint: discovery.metadata.authorization_endpoint,
        clientId: client.clientId,
        redirectUri,
        state,
        codeChallenge: pkce.challenge,
        resource: discovery.resource,
        scopes,
      });
      return { authorizationUrl, expiresAt, callbackMode: mode };
    },

    /**
     * The callback (both modes). Order matters: the state (signature, expiry, mode, path) before
     * anything else; then the single-use claim; then issuer and code; then the connection and the
     * member as they are now; the code exchange; and finally the write, in a transaction that
     * locks the connection row and then the member, so that neither an identity edit nor a removal
     * or demotion can slip between the check and the write.
     */
    async callback(mode: CallbackMode, pathConnectionId: string | null, query: CallbackQuery): Promise<CallbackResult> {
      const invalidState = (message: string) => new ApiError(400, 'invalid_state', message);
      const checked = verifyState(query.state, deps.stateKey);
      if (!checked.ok) {
        if (checked.reason === 'expired') throw new ApiError(400, 'state_expired', 'This authorization expired; start again');
        throw invalidState('The state parameter is not one this service issued');
      }
      const state = checked.payload;
      if (state.mode !== mode || (mode === 'isolated-v1' && pathConnectionId !== state.cid)) {
        throw invalidState('This authorization belongs to another callback');
      }
      const pending = await claimPendingAuthorization(db, state.org, state.id);
      if (!pending) throw invalidState('This authorization was already completed, cancelled or has expired');
      if (
        pending.connection_id !== state.cid ||
        pending.member_id !== state.mid ||
        pending.subject !== state.sub ||
        pending.callback_mode !== state.mode ||
        pending.identity_fingerprint !== state.idf
      ) {
        throw invalidState('The state does not match its authorization');
      }
      let code: string;
      try {
        checkResponseIssuer(query, pending.issuer, pending.iss_parameter_supported);
        code = authorizationCodeFrom(query);
      } catch (error) {
        if (error instanceof OAuthFlowError) {
          const status = error.code === 'authorization_refused' ? 403 : 400;
          const codeName = error.code === 'authorization_refused' ? 'authorization_denied' : error.code === 'code_missing' ? 'invalid_request' : 'issuer_mismatch';
          throw new ApiError(status, codeName, error.message, error.oauthError ? { providerCode: error.oauthError } : undefined);
        }
        throw error;
      }

      const connection = await connections.findConnection(db, pending.organization_id, pending.connection_id);
      if (!connection) throw notFound('connection_not_found', 'The connection was deleted during the authorization; nothing was stored');
      if (connection.identityFingerprint !== pending.identity_fingerprint || connection.authType !== 'oauth') {
        throw new ApiError(409, 'connection_identity_changed', 'The connection changed (url, authentication or credential mode) during the authorization; nothing was stored');
      }
      const notAllowed = () => forbidden('The member who started this authorization may no longer connect this identity; nothing was stored');
      if (!(await mayConnect(db, pending, connection, await activeMemberRole(db, pending.organization_id, pending.member_id)))) throw notAllowed();

      const client = await clientAtCallback(connection, pending);
      let tokens;
      try {
        tokens = await exchangeAuthorizationCode({
          tokenEndpoint: pending.token_endpoint,
          client,
          code,
          codeVerifier: secrets.open(pending.code_verifier_sealed),
          redirectUri: pending.redirect_uri,
          resource: pending.resource,
          requestedScopes: pending.scopes,
          fetch: fetchFn,
        });
      } catch (error) {
        if (error instanceof OAuthFlowError) throw oauthFailure(502, 'oauth_token_exchange_failed', error, pending.token_endpoint);
        throw error;
      }

      const secret: OAuthTokenSecret = {
        accessToken: tokens.accessToken,
        refreshToken: tokens.refreshToken,
        tokenEndpoint: pending.token_endpoint,
        issuer: pending.issuer,
        resource: pending.resource,
        registrationSource: pending.registration_source,
        clientId: client.clientId,
        scopes: tokens.scopes,
      };
      const memberId = pending.subject === 'shared' ? null : pending.member_id;
      await db.transaction(async (tx) => {
        const locked = await connections.findConnection(tx, pending.organization_id, pending.connection_id, true);
        if (!locked) throw notFound('connection_not_found', 'The connection was deleted during the authorization; nothing was stored');
        if (locked.identityFingerprint !== pending.identity_fingerprint) {
          throw new ApiError(409, 'connection_identity_changed', 'The connection changed during the authorization; nothing was stored');
        }
        // The member again, held until the credential is stored: removed, suspended or demoted during
        // the code exchange (or one of those in progress) is refused like a change made before the callback.
        const member = await deps.lockMember(tx, pending.organization_id, pending.member_id);
        if (!(await mayConnect(tx, pending, locked, member?.status === 'active' ? member.role : null))) throw notAllowed();
        await saveOAuthCredential(tx, {
          id: newId('cred'),
          organizationId: pending.organization_id,
          connectionId: pending.connection_id,
          memberId,
          identityFingerprint: pending.identity_fingerprint,
          secretSealed: sealOAuthSecret(secrets, pending.identity_fingerprint, secret),
          expiresAt: tokens.expiresAt,
          grantedScopes: tokens.scopes,
        });
      });
      return { connectionId: pending.connection_id, subject: pending.subject, grantedScopes: tokens.scopes };
    },

    /**
     * DELETE /v1/mcp-connections/{id}/credentials: the caller's own credential, or (admins) the
     * shared one. The tokens are forgotten first, then revoked at the authorization server (RFC
     * 7009) when it offers revocation: best effort, since the user's intent is already done.
     */
    async disconnect(caller: Caller, connectionId: string): Promise<void> {
      const connection = await visibleConnection(caller, connectionId);
      let memberId: string | null;
      if (connection.credentialMode === 'shared') {
        if (!caller.role || !adminRoles.has(caller.role)) throw forbidden('Only owners and admins disconnect the shared identity of a connection');
        memberId = null;
      } else {
        if (!caller.memberId) throw forbidden('Disconnecting needs a signed-in member, not an API key');
        memberId = caller.memberId;
      }
      const stored = await findOAuthCredential(db, connection.organizationId, connection.id, memberId);
      const secret = stored ? openOAuthSecret(secrets, connection.identityFingerprint, stored.secretSealed) : null;
      await deleteOAuthCredential(db, connection.organizationId, connection.id, memberId);
      if (secret) await revokeQuietly(connection, secret);
    },

    /**
     * A usable access token for the member (or the shared identity, memberId null), refreshed
     * first when it is about to expire. The refresh runs under a row lock on the credential
     * (SELECT ... FOR UPDATE): concurrent callers in any number of processes wait for the first,
     * then find the fresh token and do not refresh again. A refusal marks the credential
     * reconnect_required with its reason; a transient failure leaves it as it was.
     */
    async accessToken(organizationId: string, connectionId: string, memberId: string | null, options: { forceRefresh?: boolean; scopes?: string[] } = {}): Promise<AccessTokenResult> {
      const connection = await connections.findConnection(db, organizationId, connectionId);
      if (!connection || connection.authType !== 'oauth') return { status: 'none' };
      const current = await findOAuthCredential(db, organizationId, connectionId, memberId);
      if (!current) return { status: 'none' };
      const opened = openOAuthSecret(secrets, connection.identityFingerprint, current.secretSealed);
      if (!opened || current.identityFingerprint !== connection.identityFingerprint) return { status: 'none' };
      if (current.health === 'reconnect_required' && current.healthReason) return { status: 'reconnect_required', reason: current.healthReason };
      if (!options.forceRefresh && !needsRefresh(current.expiresAt)) return { status: 'ok', accessToken: opened.accessToken, scopes: opened.scopes, refreshed: false };

      return db.transaction(async (tx): Promise<AccessTokenResult> => {
        const row = await findOAuthCredential(tx, organizationId, connectionId, memberId, true);
        if (!row) return { status: 'none' };
        const secret = openOAuthSecret(secrets, connection.identityFingerprint, row.secretSealed);
        if (!secret) return { status: 'none' };
        // Someone refreshed while we waited for the lock: use theirs.
        if (row.secretSealed !== current.secretSealed && !needsRefresh(row.expiresAt)) {
          return { status: 'ok', accessToken: secret.accessToken, scopes: secret.scopes, refreshed: false };
        }
        if (!secret.refreshToken) {
          await markCredentialHealth(tx, organizationId, row.id, 'reconnect_required', 'credential_expired');
          return { status: 'reconnect_required', reason: 'credential_expired' };
        }
        try {
          const client = await refreshClient(connection, secret, tx);
          const tokens = await refreshAccessToken({
            tokenEndpoint: secret.tokenEndpoint,
            client,
            refreshToken: secret.refreshToken,
            resource: secret.resource,
            scopes: secret.scopes,
            ...(options.scopes ? { requestScopes: options.scopes } : {}),
            fetch: fetchFn,
          });
          const next: OAuthTokenSecret = { ...secret, accessToken: tokens.accessToken, refreshToken: tokens.refreshToken, scopes: tokens.scopes };
          await updateRefreshedCredential(tx, organizationId, row.id, sealOAuthSecret(secrets, connection.identityFingerprint, next), tokens.expiresAt, tokens.scopes);
          return { status: 'ok', accessToken: tokens.accessToken, scopes: tokens.scopes, refreshed: true };
        } catch (error) {
          if (!(error instanceof OAuthFlowError)) throw error;
          const reason = classifyRefusal(error);
          if (!reason) return { status: 'unavailable', error };
          await markCredentialHealth(tx, organizationId, row.id, 'reconnect_required', reason);
          return { status: 'reconnect_required', reason };
        }
      });
    },

    /**
     * POST /v1/mcp-connections/{id}/test for an OAuth connection (the connections module hands
     * these over): the stored token, refreshed first when it is about to expire, presented to the
     * probe. A token the MCP server rejects with 401 although it looks valid is
     * post_authorization_validation_failed (phase AUTH_RESOURCE_VALIDATION). A 403
     * insufficient_scope tries one step-up: a refresh asking for the scopes the server named, and
     * one more probe; if that cannot be had, the scopes are remembered for the next authorization
     * and the credential needs a reconnect.
     */
    async testConnection(connection: ConnectionRow, memberId: string | null): Promise<OAuthTestResult> {
      const organizationId = connection.organizationId;
      const probeWith = (bearerToken?: string) =>
        probeConnection({
          url: connection.url,
          authType: 'none',
          ...(bearerToken ? { bearerToken } : {}),
          outbound: deps.outbound,
          ...(deps.logger ? { logger: deps.logger } : {}),
        });
      const failed = (error: OAuthFlowError): OAuthTestResult => ({ ok: false, highestPassed: 'configured', tools: [], diagnostic: oauthDiagnostic(error, connection.url, false) });

      const token = await service.accessToken(organizationId, connection.id, memberId);
      if (token.status === 'none') return checkSetup(connection);
      if (token.status === 'reconnect_required') {
        return failed(new OAuthFlowError('CONTINUITY_REFRESH', 'reconnect_required', `The stored credential cannot be used (${token.reason}); connect again`));
      }
      if (token.status === 'unavailable') return failed(token.error);

      let accessToken = token.accessToken;
      let steppedUp = false;
      for (;;) {
        const result = await probeWith(accessToken);
        const credential = await findOAuthCredential(db, organizationId, connection.id, memberId);
        if (result.ok) {
          if (credential) await markCredentialHealth(db, organizationId, credential.id, 'ready', null);
          return { ok: true, highestPassed: result.highestPassed, tools: result.tools, diagnostic: null };
        }
        const outcome = { ok: false as const, highestPassed: result.diagnostic.highestPassed, tools: [] as string[], diagnostic: result.diagnostic };
        if (result.diagnostic.phase !== 'AUTH_RESOURCE_VALIDATION' || !credential) return outcome;
        const { status, challenge } = await resourceChallenge(connection.url, accessToken, fetchFn).catch(() => ({ status: 0, challenge: null }));
        if (status === 403 && challenge?.error === 'insufficient_scope' && !steppedUp) {
          steppedUp = true;
          const wanted = stepUp(token.scopes, challenge.scope);
          if (wanted) {
            const upgraded = await service.accessToken(organizationId, connection.id, memberId, { forceRefresh: true, scopes: wanted });
            if (upgraded.status === 'ok') {
              accessToken = upgraded.accessToken;
              continue;
            }
            await addStepUpScopes(db, organizationId, connection.id, connection.identityFingerprint, wanted);
          }
          await markCredentialHealth(db, organizationId, credential.id, 'reconnect_required', 'authorization_rejected');
          return outcome;
        }
        const reason: CredentialHealthReason = status === 403 ? 'authorization_rejected' : 'post_authorization_validation_failed';
        await markCredentialHealth(db, organizationId, credential.id, 'reconnect_required', reason);
        return outcome;
      }
    },
  };
  return service;

  async function revokeQuietly(connection: ConnectionRow, secret: OAuthTokenSecret): Promise<void> {
    try {
      const metadata = await fetchAuthorizationServerMetadata(secret.issuer, fetchFn);
      if (!metadata.revocation_endpoint) return;
      const client = await refreshClient(connection, secret, db);
      const tokens: Array<[string | null, 'refresh_token' | 'access_token']> = [
        [secret.refreshToken, 'refresh_token'],
        [secret.accessToken, 'access_token'],
      ];
      for (const [token, tokenTypeHint] of tokens) {
        if (token) await revokeToken({ revocationEndpoint: metadata.revocation_endpoint, client, token, tokenTypeHint, fetch: fetchFn });
      }
    } catch (error) {
      deps.logger?.warn(
        { connectionId: connection.id, code: error instanceof OAuthFlowError ? error.code : 'revocation_failed' },
        'MCP OAuth token revocation failed; the credential was deleted anyway',
      );
    }
  }

  /** The client a refresh authenticates as: the one that obtained the tokens. */
  async function refreshClient(connection: ConnectionRow, secret: OAuthTokenSecret, q: Queryable): Promise<OAuthClientCredentials> {
    const gone = () => new OAuthFlowError('CONTINUITY_REFRESH', 'client_changed', 'The OAuth client that obtained this credential is no longer configured', { oauthError: 'invalid_client' });
    if (secret.registrationSource === 'client-metadata') return { clientId: secret.clientId, clientSecret: null, authMethod: 'none' };
    if (secret.registrationSource === 'pre-registered') {
      const pre = preRegisteredClient(connection);
      if (!pre || pre.clientId !== secret.clientId) throw gone();
      return (chooseRegistration({ preRegistered: pre }) as { client: OAuthClientCredentials }).client;
    }
    const stored = dynamicFromRow(await findRegisteredClient(q, connection.organizationId, connection.id, secret.issuer, connection.identityFingerprint));
    if (!stored || stored.clientId !== secret.clientId) throw gone();
    return stored;
  }
}

export type McpOAuthService = ReturnType<typeof createMcpOAuthService>;
