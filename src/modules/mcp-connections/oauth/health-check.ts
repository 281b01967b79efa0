// The background health job's check of one OAuth credential (the job, ../health-job.ts, calls it
// through the OAuth hooks): refresh when the job says the token is within its margin, probe when the
// interval says so, and tell what was learned. Nothing here writes the credential's health except
// usableAccessToken, which marks a refused refresh itself (invalid_grant: credential_expired); the
// job records the rest.
//
// A 401 to a token that looked valid is not taken at its word at once: the server may have revoked
// that access token alone. One forced refresh tells: refused, the grant is gone (credential_expired);
// granted, and the new token is refused too, the server rejects the authorization
// (authorization_rejected), or, if no probe has ever passed since the authorization, the
// authorization failed its validation (post_authorization_validation_failed).
//
// A token the server gave without a refresh token cannot be refreshed: within the margin, the forced
// refresh marks it credential_expired then, up to the margin (5 minutes) before it stops working, rather
// than at a poll after it has: a reconnect is needed either way, and the person is told sooner.
import type { ConnectionRow, CredentialCheck } from '../contracts.ts';
import { probeConnection, type ProbeResult } from '../probe/index.ts';
import { usableAccessToken } from './access-tokens.ts';
import type { AccessTokenResult, OAuthDeps } from './deps.ts';

export async function checkOAuthCredential(
  deps: OAuthDeps,
  connection: ConnectionRow,
  credential: { memberId: string | null; validated: boolean },
  wants: { refresh: boolean; probe: boolean },
): Promise<CredentialCheck> {
  const token = (forceRefresh: boolean) =>
    usableAccessToken(
      deps,
      connection.organizationId,
      connection.id,
      credential.memberId,
      forceRefresh ? { forceRefresh } : {},
    );
  const probe = (accessToken: string): Promise<ProbeResult> =>
    probeConnection({
      url: connection.url,
      authType: 'none',
      bearerToken: accessToken,
      outbound: deps.outbound,
      ...(deps.logger ? { logger: deps.logger } : {}),
    });

  let refreshed = false;
  let probed = false;
  const notUsable = (result: Exclude<AccessTokenResult, { status: 'ok' }>): CredentialCheck => {
    if (result.status === 'none') return { kind: 'gone' };
    if (result.status === 'reconnect_required')
      return { kind: 'refused', reason: result.reason, probed, refreshed, alreadyMarked: true };
    return { kind: 'inconclusive', step: 'refresh', code: result.error.code, probed, refreshed };
  };

  let current = await token(wants.refresh);
  if (current.status !== 'ok') return notUsable(current);
  refreshed = current.refreshed;
  if (!wants.probe) return { kind: 'healthy', probed, refreshed };

  let result = await probe(current.accessToken);
  probed = true;
  if (!result.ok && result.diagnostic.phase === 'AUTH_RESOURCE_VALIDATION' && !refreshed) {
    current = await token(true);
    if (current.status !== 'ok') return notUsable(current);
    refreshed = true;
    result = await probe(current.accessToken);
  }
  if (result.ok) return { kind: 'healthy', probed, refreshed };
  if (result.diagnostic.phase !== 'AUTH_RESOURCE_VALIDATION')
    return { kind: 'inconclusive', step: 'probe', code: result.diagnostic.code, probed, refreshed };
  const reason = credential.validated ? 'authorization_rejected' : 'post_authorization_validation_failed';
  return { kind: 'refused', reason, probed, refreshed, alreadyMarked: false };
}
