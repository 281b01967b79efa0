// The client credentials grant for a connection's shared identity (RFC 6749 §4.4; the MCP
// client-credentials extension, SEP-1046): the administrator's pre-registered client obtains the
// token as itself, authenticated by its secret or by a signed assertion (private_key_jwt, RFC 7523),
// with no person and no browser. It is obtained on first need (a test, a caller of accessToken) and
// obtained again instead of refreshed (§4.4.3: no refresh token is expected), which is what the
// background health job's refresh of a token near its expiry comes to.
import { lockUntilCommit } from '../../../db/locks.ts';
import { newId } from '../../../platform/ids.ts';
import type { ConnectionRow } from '../contracts.ts';
import { preRegisteredClient, tryDiscover } from './client-acquisition.ts';
import {
  findOAuthCredential,
  markCredentialHealth,
  openOAuthSecret,
  saveOAuthCredential,
  sealOAuthSecret,
  type OAuthTokenSecret,
} from './credential-store.ts';
import type { AccessTokenResult, OAuthDeps } from './deps.ts';
import { OAuthFlowError } from './errors.ts';
import { holdConnection } from './guards.ts';
import { chooseRegistration } from './registration.ts';
import { clientCredentialsGrant, classifyRefusal, needsRefresh } from './tokens.ts';

/** Whether this credential is one the client obtains for itself (the shared identity of a client_credentials connection). */
export function obtainedByClient(connection: ConnectionRow, memberId: string | null): boolean {
  return (
    connection.authType === 'oauth' &&
    connection.oauthGrantType === 'client_credentials' &&
    connection.credentialMode === 'shared' &&
    memberId === null
  );
}

/**
 * A usable token of the shared identity, obtained with the client credentials grant when there is
 * none, it is within the refresh margin of its expiry, or `force`. One grant at a time per
 * connection across processes (an advisory lock held until commit): whoever waited finds the
 * token the first one stored. A refusal that says something about the client (invalid_client,
 * unauthorized_client, ...) marks a stored credential reconnect_required; a transient one leaves
 * it as it was.
 */
export async function clientCredentialsToken(
  deps: OAuthDeps,
  connection: ConnectionRow,
  options: { force?: boolean; scopes?: string[] } = {},
): Promise<AccessTokenResult> {
  const usable = (row: Awaited<ReturnType<typeof findOAuthCredential>>) => {
    // A token the server refused is obtained again: for the client's own grant there is no person to reconnect.
    if (!row || row.identityFingerprint !== connection.identityFingerprint || row.health === 'reconnect_required')
      return null;
    const secret = openOAuthSecret(deps.secrets, connection.identityFingerprint, row.secretSealed);
    return secret && !needsRefresh(row.expiresAt) ? secret : null;
  };
  const before = await findOAuthCredential(deps.db, connection.organizationId, connection.id, null);
  const current = usable(before);
  if (current && !options.force)
    return { status: 'ok', accessToken: current.accessToken, scopes: current.scopes, refreshed: false };

  const client = preRegisteredClient(deps, connection);
  const plan = client ? chooseRegistration({ preRegistered: client }) : null;
  if (plan?.source !== 'pre-registered' || plan.client.authMethod === 'none') {
    return {
      status: 'unavailable',
      error: new OAuthFlowError(
        'AUTH_CLIENT_REGISTRATION',
        'setup_required',
        'The client credentials grant needs a configured client with a secret or a private key',
      ),
    };
  }
  const discovery = await tryDiscover(deps, connection);
  if (discovery instanceof OAuthFlowError) return { status: 'unavailable', error: discovery };
  const scopes = options.scopes ?? [
    ...new Set([
      ...connection.requestedScopes,
      ...(connection.requestedScopes.length > 0 ? [] : discovery.resourceScopes),
    ]),
  ];
  const tokenEndpoint = discovery.metadata.token_endpoint;

  return deps.db.transaction(async (tx): Promise<AccessTokenResult> => {
    await lockUntilCommit(tx, `mcp-oauth-client-credentials:${connection.id}`);
    const row = await findOAuthCredential(tx, connection.organizationId, connection.id, null);
    // Someone obtained one while we waited for the lock: use theirs.
    const theirs = row && row.secretSealed !== before?.secretSealed ? usable(row) : null;
    if (theirs) return { status: 'ok', accessToken: theirs.accessToken, scopes: theirs.scopes, refreshed: false };
    let tokens: Awaited<ReturnType<typeof clientCredentialsGrant>>;
    try {
      tokens = await clientCredentialsGrant({
        tokenEndpoint,
        issuer: discovery.issuer,
        client: plan.client,
        resource: discovery.resource,
        scopes,
        fetch: deps.fetch,
      });
    } catch (error) {
      if (!(error instanceof OAuthFlowError)) throw error;
      const reason = classifyRefusal(error);
      if (reason && row)
        await markCredentialHealth(tx, connection.organizationId, row.id, 'reconnect_required', reason);
      return reason && row ? { status: 'reconnect_required', reason } : { status: 'unavailable', error };
    }
    // Written with the connection held: deleted meanwhile, nothing is stored for it (a 404).
    await holdConnection(deps, tx, connection);
    const secret: OAuthTokenSecret = {
      accessToken: tokens.accessToken,
      refreshToken: null,
      tokenEndpoint,
      issuer: discovery.issuer,
      resource: discovery.resource,
      registrationSource: 'pre-registered',
      clientId: plan.client.clientId,
      scopes: tokens.scopes,
    };
    await saveOAuthCredential(tx, {
      id: newId('cred'),
      organizationId: connection.organizationId,
      connectionId: connection.id,
      memberId: null,
      identityFingerprint: connection.identityFingerprint,
      secretSealed: sealOAuthSecret(deps.secrets, connection.identityFingerprint, secret),
      expiresAt: tokens.expiresAt,
      grantedScopes: tokens.scopes,
      account: tokens.account,
    });
    // `refreshed`: just issued by the authorization server (a refusal of it says the server rejects the client).
    return { status: 'ok', accessToken: tokens.accessToken, scopes: tokens.scopes, refreshed: true };
  });
}
