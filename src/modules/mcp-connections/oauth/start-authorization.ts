// Starting an authorization (POST /v1/mcp-connections/{id}/oauth/authorize): who may connect which
// identity, discovery, the client, a pending authorization, and the URL to send the user to.
import type { FreshAuthenticationCheck } from '../../../http/auth.ts';
import type { Caller } from '../../../http/caller.ts';
import { forbidden, notAnActiveMember, rateLimited } from '../../../http/errors.ts';
import { newId } from '../../../platform/ids.ts';
import { writeTransaction, type CallerContext } from '../../../platform/write-context.ts';
import type { ConnectionRow } from '../contracts.ts';
import { buildAuthorizationUrl, createPkcePair, selectScopes } from './authorize.ts';
import { bindingCookie, bindingHash, browserNonce } from './browser-binding.ts';
import { clientFor, discoverFor } from './client-acquisition.ts';
import type { OAuthDeps } from './deps.ts';
import { holdConnection, sharedNeedsAdmin, visibleConnection } from './guards.ts';
import { signState, type CallbackMode, type CredentialSubject } from './state.ts';
import { deleteExpiredPendingAuthorizations, insertPendingAuthorization, stepUpScopes } from './store.ts';
import { mcpConnectionErrors } from '../error-codes.ts';

/** How long an authorization may take between authorize and callback. */
export const AUTHORIZATION_TTL_SECONDS = 10 * 60;

/** Authorizations a member may start per window, across all processes (counted in the database). */
export const authorizeLimits = { perMember: 30, windowSeconds: 60 };

function subjectFor(caller: Caller, connection: ConnectionRow): { subject: CredentialSubject; memberId: string } {
  if (!caller.memberId) throw forbidden('Connecting through OAuth needs a signed-in member, not an API key');
  if (connection.credentialMode === 'shared') {
    if (!caller.permissions.has('mcp_connections.manage')) throw sharedNeedsAdmin();
    return { subject: 'shared', memberId: caller.memberId };
  }
  return { subject: 'member', memberId: caller.memberId };
}

/**
 * POST /v1/mcp-connections/{id}/oauth/authorize: discovery, registration, a pending
 * authorization, and the URL to send the user to.
 */
export async function authorize(
  deps: OAuthDeps,
  ctx: CallerContext,
  connectionId: string,
  carriedNonce: string | null,
  requireFresh: FreshAuthenticationCheck,
): Promise<{ authorizationUrl: string; expiresAt: Date; callbackMode: CallbackMode; browserCookie: string }> {
  const caller = ctx.actor;
  const connection = await visibleConnection(deps, caller, connectionId);
  if (connection.authType !== 'oauth')
    throw mcpConnectionErrors.not_oauth_connection('This connection does not use OAuth');
  if (connection.oauthGrantType === 'client_credentials') {
    throw mcpConnectionErrors.client_credentials_grant(
      'This connection obtains its token with the client credentials grant, without a browser: POST .../test obtains it',
    );
  }
  const { subject, memberId } = subjectFor(caller, connection);
  // Authorizing the organization's identity decides where every member's calls go: privileged.
  if (subject === 'shared') requireFresh();
  const budget = await deps.limiter.hit(
    `mcp-oauth-authorize:${memberId}`,
    authorizeLimits.perMember,
    authorizeLimits.windowSeconds,
  );
  if (!budget.allowed) throw rateLimited(budget, 'Too many authorizations started; retry later');
  const discovery = await discoverFor(deps, connection);
  const selected = selectScopes({
    requested: connection.requestedScopes,
    challengeScope: discovery.challengeScope,
    resourceScopes: discovery.resourceScopes,
  });
  // Scopes a server demanded later (403 insufficient_scope) that a refresh could not add.
  const scopes = [
    ...new Set([
      ...selected,
      ...(await stepUpScopes(deps.db, connection.organizationId, connection.id, connection.identityFingerprint)),
    ]),
  ];
  const { client, source, mode, redirectUri } = await clientFor(deps, connection, discovery, scopes);

  const pkce = createPkcePair();
  const nonce = browserNonce(carriedNonce);
  const id = newId('moa');
  const expiresAt = new Date(Date.now() + AUTHORIZATION_TTL_SECONDS * 1000);
  await deleteExpiredPendingAuthorizations(deps.db, connection.organizationId);
  await writeTransaction(deps.db, ctx, async (tx) => {
    // The caller again, held until the row naming them is written: removed, suspended or demoted
    // since the request was authenticated (or one of those in progress) is what the route answers them now.
    await deps.members.holdActingMember(tx, connection.organizationId, memberId, {
      ...(subject === 'shared' ? { permission: 'mcp_connections.manage' as const } : {}),
      refuse: { inactive: notAnActiveMember, lacksPermission: sharedNeedsAdmin },
    });
    await holdConnection(deps, tx, connection);
    tx.audit({
      action: 'mcp_connection.authorization_started',
      organizationId: connection.organizationId,
      target: { type: 'mcp_connection', id: connection.id, name: connection.name },
      changes: { subject, scopes },
    });
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
      code_verifier_sealed: deps.secrets.seal(pkce.verifier),
      expires_at: expiresAt,
      browser_binding_hash: bindingHash(nonce),
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
  return {
    authorizationUrl,
    expiresAt,
    callbackMode: mode,
    browserCookie: bindingCookie(deps.publicUrl, nonce, AUTHORIZATION_TTL_SECONDS),
  };
}
