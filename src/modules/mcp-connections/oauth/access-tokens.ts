// Access tokens of stored OAuth credentials: a usable one (refreshed first, one refresh at a time per
// credential across processes), and disconnecting (forget the tokens, then revoke them).
//
// The refresh transaction is not a write of a caller: the token is refreshed for whoever needs it
// (a test, another module), so it is opened on the database, not through writeTransaction.
import type { FreshAuthenticationCheck } from '../../../http/auth.ts';
import { forbidden, missingPermission } from '../../../http/errors.ts';
import { writeTransaction, type CallerContext } from '../../../platform/write-context.ts';
import type { ConnectionRow } from '../contracts.ts';
import { refreshClient } from './client-acquisition.ts';
import { clientCredentialsToken, obtainedByClient } from './client-credentials.ts';
import {
  deleteOAuthCredential,
  findOAuthCredential,
  markCredentialHealth,
  openOAuthSecret,
  sealOAuthSecret,
  updateRefreshedCredential,
  type OAuthTokenSecret,
} from './credential-store.ts';
import type { AccessTokenResult, OAuthDeps } from './deps.ts';
import type { OAuthClientCredentials } from './registration.ts';
import { fetchAuthorizationServerMetadata } from './metadata-fetch.ts';
import { OAuthFlowError } from './errors.ts';
import { visibleConnection } from './guards.ts';
import { classifyRefusal, needsRefresh, refreshAccessToken, revokeToken } from './tokens.ts';

/**
 * A usable access token for the member (or the shared identity, memberId null), refreshed
 * first when it is about to expire. The refresh runs under a row lock on the credential
 * (SELECT ... FOR UPDATE): concurrent callers in any number of processes wait for the first,
 * then find the fresh token and do not refresh again. A refusal marks the credential
 * reconnect_required with its reason; a transient failure leaves it as it was.
 */
export async function usableAccessToken(
  deps: OAuthDeps,
  organizationId: string,
  connectionId: string,
  memberId: string | null,
  options: { forceRefresh?: boolean; scopes?: string[] } = {},
): Promise<AccessTokenResult> {
  const connection = await deps.connections.findConnection(deps.db, organizationId, connectionId);
  if (connection?.authType !== 'oauth') return { status: 'none' };
  // The client's own token is obtained again, not refreshed (client-credentials.ts).
  if (obtainedByClient(connection, memberId))
    return clientCredentialsToken(deps, connection, {
      ...(options.forceRefresh ? { force: true } : {}),
      ...(options.scopes ? { scopes: options.scopes } : {}),
    });
  const current = await findOAuthCredential(deps.db, organizationId, connectionId, memberId);
  if (!current) return { status: 'none' };
  const opened = openOAuthSecret(deps.secrets, connection.identityFingerprint, current.secretSealed);
  if (!opened || current.identityFingerprint !== connection.identityFingerprint) return { status: 'none' };
  if (current.health === 'reconnect_required' && current.healthReason)
    return { status: 'reconnect_required', reason: current.healthReason };
  if (!options.forceRefresh && !needsRefresh(current.expiresAt))
    return { status: 'ok', accessToken: opened.accessToken, scopes: opened.scopes, refreshed: false };

  return deps.db.transaction(async (tx): Promise<AccessTokenResult> => {
    const row = await findOAuthCredential(tx, organizationId, connectionId, memberId, true);
    if (!row) return { status: 'none' };
    const secret = openOAuthSecret(deps.secrets, connection.identityFingerprint, row.secretSealed);
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
      const client = await refreshClient(deps, connection, secret, tx);
      const tokens = await refreshAccessToken({
        tokenEndpoint: secret.tokenEndpoint,
        issuer: secret.issuer,
        client,
        refreshToken: secret.refreshToken,
        resource: secret.resource,
        scopes: secret.scopes,
        ...(options.scopes ? { requestScopes: options.scopes } : {}),
        fetch: deps.fetch,
      });
      const next: OAuthTokenSecret = {
        ...secret,
        accessToken: tokens.accessToken,
        refreshToken: tokens.refreshToken,
        scopes: tokens.scopes,
      };
      await updateRefreshedCredential(
        tx,
        organizationId,
        row.id,
        sealOAuthSecret(deps.secrets, connection.identityFingerprint, next),
        tokens.expiresAt,
        tokens.scopes,
        tokens.account,
      );
      return { status: 'ok', accessToken: tokens.accessToken, scopes: tokens.scopes, refreshed: true };
    } catch (error) {
      if (!(error instanceof OAuthFlowError)) throw error;
      const reason = classifyRefusal(error);
      if (!reason) return { status: 'unavailable', error };
      await markCredentialHealth(tx, organizationId, row.id, 'reconnect_required', reason);
      return { status: 'reconnect_required', reason };
    }
  });
}

/**
 * DELETE /v1/mcp-connections/{id}/credentials: the caller's own credential, or (admins) the
 * shared one. The tokens are forgotten first, then revoked at the authorization server (RFC
 * 7009) when it offers revocation: best effort, since the user's intent is already done.
 */
export async function disconnect(
  deps: OAuthDeps,
  ctx: CallerContext,
  connectionId: string,
  requireFresh: FreshAuthenticationCheck,
): Promise<void> {
  const caller = ctx.actor;
  const connection = await visibleConnection(deps, caller, connectionId);
  let memberId: string | null;
  if (connection.credentialMode === 'shared') {
    if (!caller.permissions.has('mcp_connections.manage'))
      throw missingPermission(
        'mcp_connections.manage',
        'Disconnecting the shared identity of a connection needs mcp_connections.manage',
      );
    // Taking the organization's credential away changes what every member can do: privileged.
    requireFresh();
    memberId = null;
  } else {
    if (!caller.memberId) throw forbidden('Disconnecting needs a signed-in member, not an API key');
    memberId = caller.memberId;
  }
  const stored = await findOAuthCredential(deps.db, connection.organizationId, connection.id, memberId);
  const secret = stored ? openOAuthSecret(deps.secrets, connection.identityFingerprint, stored.secretSealed) : null;
  await writeTransaction(deps.db, ctx, async (tx) => {
    await deleteOAuthCredential(tx, connection.organizationId, connection.id, memberId);
    tx.audit({
      action: 'mcp_connection.disconnected',
      organizationId: connection.organizationId,
      target: { type: 'mcp_connection', id: connection.id, name: connection.name },
      changes: { subject: memberId === null ? 'shared' : 'member' },
    });
  });
  if (secret) await revokeQuietly(deps, connection, secret);
}

/**
 * Revokes the tokens at the authorization server when it offers revocation; a failure is logged
 * (never the token) and swallowed. `client`: the client that obtained them, when it was read before
 * its row went (a deleted connection); otherwise it is read now.
 */
export async function revokeQuietly(
  deps: Pick<OAuthDeps, 'db' | 'secrets' | 'publicUrl' | 'fetch' | 'connections' | 'logger'>,
  connection: ConnectionRow,
  secret: OAuthTokenSecret,
  known?: OAuthClientCredentials,
): Promise<void> {
  try {
    const metadata = await fetchAuthorizationServerMetadata(secret.issuer, deps.fetch);
    if (!metadata.revocation_endpoint) return;
    const client = known ?? (await refreshClient(deps, connection, secret, deps.db));
    const tokens: Array<[string | null, 'refresh_token' | 'access_token']> = [
      [secret.refreshToken, 'refresh_token'],
      [secret.accessToken, 'access_token'],
    ];
    for (const [token, tokenTypeHint] of tokens) {
      if (token)
        await revokeToken({
          revocationEndpoint: metadata.revocation_endpoint,
          issuer: secret.issuer,
          client,
          token,
          tokenTypeHint,
          fetch: deps.fetch,
        });
    }
  } catch (error) {
    deps.logger?.warn(
      { connectionId: connection.id, code: error instanceof OAuthFlowError ? error.code : 'revocation_failed' },
      'MCP OAuth token revocation failed; the credential was deleted anyway',
    );
  }
}
