// POST /v1/mcp-connections/{id}/test of an OAuth connection (the connections service calls it through
// its OAuth hooks): the stored token, refreshed first, presented to the probe, with one scope step-up;
// without a credential, a check of what an authorization would need.
import type { ConnectionRow, TestResult } from '../contracts.ts';
import { probeConnection } from '../probe/index.ts';
import { usableAccessToken } from './access-tokens.ts';
import { stepUpScopes as stepUp } from './authorize.ts';
import { planClient, recordState, tryDiscover } from './client-acquisition.ts';
import { findOAuthCredential, markCredentialHealth } from './credential-store.ts';
import type { OAuthDeps } from './deps.ts';
import { oauthDiagnostic, reachedServer } from './diagnostic.ts';
import { resourceChallenge } from './challenge.ts';
import { OAuthFlowError, type CredentialHealthReason } from './errors.ts';
import { holdConnection } from './guards.ts';
import { addStepUpScopes, recordConnectionRegistration } from './store.ts';

/**
 * POST /v1/mcp-connections/{id}/test for an OAuth connection (the connections module hands
 * these over): the stored token, refreshed first when it is about to expire, presented to the
 * probe. A token the MCP server rejects with 401 although it looks valid is
 * post_authorization_validation_failed (phase AUTH_RESOURCE_VALIDATION); one the authorization
 * server has just issued (by a refresh) and the MCP server still rejects is authorization_rejected. A 403
 * insufficient_scope tries one step-up: a refresh asking for the scopes the server named, and
 * one more probe; if that cannot be had, the scopes are remembered for the next authorization
 * and the credential needs a reconnect.
 */
export async function testOAuthConnection(
  deps: OAuthDeps,
  connection: ConnectionRow,
  memberId: string | null,
): Promise<TestResult> {
  const organizationId = connection.organizationId;
  const probeWith = (bearerToken?: string) =>
    probeConnection({
      url: connection.url,
      authType: 'none',
      ...(bearerToken ? { bearerToken } : {}),
      outbound: deps.outbound,
      ...(deps.logger ? { logger: deps.logger } : {}),
    });
  const failed = (error: OAuthFlowError): TestResult => ({
    ok: false,
    highestPassed: 'configured',
    tools: [],
    diagnostic: oauthDiagnostic(error, connection.url, false),
  });

  const token = await usableAccessToken(deps, organizationId, connection.id, memberId);
  if (token.status === 'none') return checkSetup(deps, connection);
  if (token.status === 'reconnect_required') {
    return failed(
      new OAuthFlowError(
        'CONTINUITY_REFRESH',
        'reconnect_required',
        `The stored credential cannot be used (${token.reason}); connect again`,
      ),
    );
  }
  if (token.status === 'unavailable') return failed(token.error);

  let accessToken = token.accessToken;
  // Issued by the authorization server moments ago (a refresh, or the step-up's): refused anyway,
  // the server rejects the authorization itself, not a stale token.
  let justIssued = token.refreshed;
  let steppedUp = false;
  for (;;) {
    const result = await probeWith(accessToken);
    const credential = await findOAuthCredential(deps.db, organizationId, connection.id, memberId);
    if (result.ok) {
      await deps.connections.recordCatalog(
        deps.db,
        organizationId,
        connection.id,
        connection.identityFingerprint,
        result.catalog,
      );
      if (credential) await markCredentialHealth(deps.db, organizationId, credential.id, 'ready', null);
      return { ok: true, highestPassed: result.highestPassed, tools: result.tools, diagnostic: null };
    }
    const outcome = {
      ok: false as const,
      highestPassed: result.diagnostic.highestPassed,
      tools: [] as string[],
      diagnostic: result.diagnostic,
    };
    if (result.diagnostic.phase !== 'AUTH_RESOURCE_VALIDATION' || !credential) return outcome;
    const { status, challenge } = await resourceChallenge(connection.url, accessToken, deps.fetch).catch(() => ({
      status: 0,
      challenge: null,
    }));
    if (status === 403 && challenge?.error === 'insufficient_scope' && !steppedUp) {
      steppedUp = true;
      const upgraded = await stepUpScope(deps, connection, memberId, token.scopes, challenge.scope);
      if (!upgraded) return outcome;
      accessToken = upgraded;
      justIssued = true;
      continue;
    }
    const reason: CredentialHealthReason =
      status === 403 || justIssued ? 'authorization_rejected' : 'post_authorization_validation_failed';
    await markCredentialHealth(deps.db, organizationId, credential.id, 'reconnect_required', reason);
    return outcome;
  }
}

/**
 * One scope step-up after the MCP server refused a token of `grantedScopes` with 403
 * insufficient_scope naming `challengeScope` (from the test's probe, or from whoever called the
 * server with a token of `usableAccessToken`): a refresh asking for the scopes granted and named.
 * Answers the new access token; or null, when nothing new was named or the refresh was refused:
 * then the scopes are remembered for the next authorization and the credential needs a reconnect.
 */
export async function stepUpScope(
  deps: OAuthDeps,
  connection: ConnectionRow,
  memberId: string | null,
  grantedScopes: string[],
  challengeScope: string | null | undefined,
): Promise<string | null> {
  const organizationId = connection.organizationId;
  const wanted = stepUp(grantedScopes, challengeScope);
  if (wanted) {
    const upgraded = await usableAccessToken(deps, organizationId, connection.id, memberId, {
      forceRefresh: true,
      scopes: wanted,
    });
    if (upgraded.status === 'ok') return upgraded.accessToken;
    // Written with the connection held: deleted meanwhile, the caller gets a 404 (not a key violation).
    await deps.db.transaction(async (tx) => {
      await holdConnection(deps, tx, connection);
      await addStepUpScopes(tx, organizationId, connection.id, connection.identityFingerprint, wanted);
    });
  }
  const credential = await findOAuthCredential(deps.db, organizationId, connection.id, memberId);
  if (credential)
    await markCredentialHealth(deps.db, organizationId, credential.id, 'reconnect_required', 'authorization_rejected');
  return null;
}

/**
 * Without a credential, the test of an OAuth connection checks what an authorization would
 * need: discovery, and a way to obtain a client. It records setupRequired / issuerReviewRequired
 * (so an administrator sees them without anyone starting an authorization) and registers nothing.
 */
async function checkSetup(deps: OAuthDeps, connection: ConnectionRow): Promise<TestResult> {
  const found = await tryDiscover(deps, connection);
  if (found instanceof OAuthFlowError)
    return {
      ok: false,
      highestPassed: reachedServer(found) ? 'reachable' : 'configured',
      tools: [],
      diagnostic: oauthDiagnostic(found, connection.url, reachedServer(found)),
    };
  const plan = await planClient(deps, connection, found);
  if (plan.source === null) {
    const error = new OAuthFlowError('AUTH_CLIENT_REGISTRATION', 'setup_required', plan.reason);
    return {
      ok: false,
      highestPassed: 'reachable',
      tools: [],
      diagnostic: oauthDiagnostic(error, connection.url, true),
    };
  }
  // A dynamic registration not made yet is possible, not used: the source stays as it was.
  const source = plan.source === 'dynamic' && !plan.client ? connection.oauthRegistrationSource : plan.source;
  await recordState(deps, connection, {
    issuer: found.issuer,
    source,
    setupRequired: false,
    issuerReview: false,
    problem: null,
  });
  if (source === null)
    await recordConnectionRegistration(
      deps.db,
      connection.organizationId,
      connection.id,
      connection.identityFingerprint,
      null,
      false,
    );
  const shared = connection.credentialMode === 'shared';
  const error = new OAuthFlowError(
    'AUTH_USER_OR_WORKLOAD',
    shared ? 'shared_not_connected' : 'not_connected',
    shared
      ? 'The shared identity of this connection has not been authorized yet'
      : 'You have not connected your account to this server yet',
  );
  return { ok: false, highestPassed: 'reachable', tools: [], diagnostic: oauthDiagnostic(error, connection.url, true) };
}
