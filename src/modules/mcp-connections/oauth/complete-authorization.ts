// Completing an authorization: the callback (both modes) checks the state, claims the pending
// authorization once, checks issuer and code, the connection and the member as they are now,
// exchanges the code, and stores the credential.
import type { Caller } from '../../../http/caller.ts';
import { forbidden } from '../../../http/errors.ts';
import { newId } from '../../../platform/ids.ts';
import { redacted, writeTransaction, type WriteContext } from '../../../platform/write-context.ts';
import { authorizationCodeFrom, checkResponseIssuer, type CallbackQuery } from './callback.ts';
import { clientAtCallback } from './client-acquisition.ts';
import { saveOAuthCredential, sealOAuthSecret, type OAuthTokenSecret } from './credential-store.ts';
import type { OAuthDeps } from './deps.ts';
import { oauthFailure } from './diagnostic.ts';
import { OAuthFlowError } from './errors.ts';
import { mayConnect } from './guards.ts';
import { verifyState, type CallbackMode, type CredentialSubject } from './state.ts';
import { claimPendingAuthorization, pendingBinding } from './store.ts';
import { browserMismatch, sameBrowser } from './browser-binding.ts';
import { exchangeAuthorizationCode } from './tokens.ts';
import { mcpConnectionErrors } from '../error-codes.ts';
import { httpErrors } from '../../../http/error-codes.ts';

/** The request a callback arrives on (who acts is read from its pending authorization). */
export type RequestOrigin = Omit<WriteContext, 'actor'>;

export interface CallbackResult {
  connectionId: string;
  subject: CredentialSubject;
  grantedScopes: string[];
}

/**
 * The callback (both modes). Order matters: the state (signature, expiry, mode, path) before
 * anything else; then the browser (the one that started it, browser-binding.ts); then the single-use claim; then issuer and code; then the connection and the
 * member as they are now; the code exchange; and finally the write, in a transaction that
 * locks the connection row and then the member, so that neither an identity edit nor a removal
 * or demotion can slip between the check and the write.
 */
export async function completeAuthorization(
  deps: OAuthDeps,
  origin: RequestOrigin,
  mode: CallbackMode,
  pathConnectionId: string | null,
  query: CallbackQuery,
  carriedNonce: string | null,
): Promise<CallbackResult> {
  const invalidState = (message: string) => mcpConnectionErrors.invalid_state(message);
  const checked = verifyState(query.state, deps.stateKey);
  if (!checked.ok) {
    if (checked.reason === 'expired')
      throw mcpConnectionErrors.state_expired('This authorization expired; start again');
    throw invalidState('The state parameter is not one this service issued');
  }
  const state = checked.payload;
  if (state.mode !== mode || (mode === 'isolated-v1' && pathConnectionId !== state.cid)) {
    throw invalidState('This authorization belongs to another callback');
  }
  // The browser before the claim: another person's browser refused leaves the authorization to its starter.
  const binding = await pendingBinding(deps.db, state.org, state.id);
  if (binding === null) throw invalidState('This authorization was already completed, cancelled or has expired');
  if (!sameBrowser(carriedNonce, binding)) throw browserMismatch();
  const pending = await claimPendingAuthorization(deps.db, state.org, state.id);
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
      const refusal =
        error.code === 'authorization_refused'
          ? mcpConnectionErrors.authorization_denied
          : error.code === 'code_missing'
            ? httpErrors.invalid_request
            : mcpConnectionErrors.issuer_mismatch;
      throw refusal(error.message, error.oauthError ? { providerCode: error.oauthError } : undefined);
    }
    throw error;
  }

  const connection = await deps.connections.findConnection(deps.db, pending.organization_id, pending.connection_id);
  if (!connection)
    throw mcpConnectionErrors.connection_not_found(
      'The connection was deleted during the authorization; nothing was stored',
    );
  if (connection.identityFingerprint !== pending.identity_fingerprint || connection.authType !== 'oauth') {
    throw mcpConnectionErrors.connection_identity_changed(
      'The connection changed (url, authentication or credential mode) during the authorization; nothing was stored',
    );
  }
  const notAllowed = () =>
    forbidden('The member who started this authorization may no longer connect this identity; nothing was stored');
  // The member as they are now: minutes may pass between authorize and callback (suspended, removed, demoted).
  const starter = await deps.members.getMember(pending.organization_id, pending.member_id);
  const permissions = await deps.members.activeMemberPermissions(pending.organization_id, pending.member_id);
  if (!starter || !(await mayConnect(deps, deps.db, pending, connection, permissions))) throw notAllowed();

  const client = await clientAtCallback(deps, connection, pending);
  let tokens: Awaited<ReturnType<typeof exchangeAuthorizationCode>>;
  try {
    tokens = await exchangeAuthorizationCode({
      tokenEndpoint: pending.token_endpoint,
      issuer: pending.issuer,
      client,
      code,
      codeVerifier: deps.secrets.open(pending.code_verifier_sealed),
      redirectUri: pending.redirect_uri,
      resource: pending.resource,
      requestedScopes: pending.scopes,
      fetch: deps.fetch,
    });
  } catch (error) {
    if (error instanceof OAuthFlowError)
      throw oauthFailure(mcpConnectionErrors.oauth_token_exchange_failed, error, pending.token_endpoint);
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
  // The browser that comes back carries no session: the write is the member's who started the
  // authorization (as they were just read, active), through this request. They have no session here,
  // so the actor is a session-kind Caller without a session id, naming their user and membership
  // (isInstanceAdmin is not looked up: it plays no part in a write inside one organization).
  const actor: Caller = {
    kind: 'session',
    userId: starter.user_id,
    sessionId: null,
    apiKeyId: null,
    isInstanceAdmin: false,
    organizationId: pending.organization_id,
    memberId: pending.member_id,
    role: starter.role,
    permissions: permissions ?? new Set(),
  };
  await writeTransaction(deps.db, { ...origin, actor }, async (tx) => {
    const locked = await deps.connections.findConnection(tx, pending.organization_id, pending.connection_id, true);
    if (!locked)
      throw mcpConnectionErrors.connection_not_found(
        'The connection was deleted during the authorization; nothing was stored',
      );
    if (locked.identityFingerprint !== pending.identity_fingerprint) {
      throw mcpConnectionErrors.connection_identity_changed(
        'The connection changed during the authorization; nothing was stored',
      );
    }
    // The member again, held until the credential is stored: removed, suspended or demoted during
    // the code exchange (or one of those in progress) is refused like a change made before the callback.
    // Held with the one re-check of an acting member, judging no role itself: any refusal is
    // notAllowed, and what the member may connect is mayConnect's answer, as before the exchange.
    const member = await deps.members.holdActingMember(tx, pending.organization_id, pending.member_id, {
      refuse: { inactive: notAllowed, lacksPermission: notAllowed },
    });
    if (!(await mayConnect(deps, tx, pending, locked, member!.permissions))) throw notAllowed();
    tx.audit({
      action: 'mcp_connection.authorized',
      organizationId: pending.organization_id,
      target: { type: 'mcp_connection', id: locked.id, name: locked.name },
      changes: { subject: pending.subject, grantedScopes: tokens.scopes, tokens: redacted },
    });
    await saveOAuthCredential(tx, {
      id: newId('cred'),
      organizationId: pending.organization_id,
      connectionId: pending.connection_id,
      memberId,
      identityFingerprint: pending.identity_fingerprint,
      secretSealed: sealOAuthSecret(deps.secrets, pending.identity_fingerprint, secret),
      expiresAt: tokens.expiresAt,
      grantedScopes: tokens.scopes,
      account: tokens.account,
    });
  });
  return { connectionId: pending.connection_id, subject: pending.subject, grantedScopes: tokens.scopes };
}
