// Revoking stored OAuth tokens at the authorization server (RFC 7009) when orgplane forgets them
// without the person asking: their connection is deleted, or the member is removed from the
// organization. Both deletions cascade through the credential rows (and a deleted connection takes
// its registered client with it), so what a revocation needs, the tokens and the client that
// obtained them, is read in the deleting transaction, before the rows go; the revocation runs once
// it has committed, best effort: a failure is logged without the token and the deletion stands.
import type { Queryable } from '../../../db/database.ts';
import type { ConnectionRow } from '../contracts.ts';
import { revokeQuietly } from './access-tokens.ts';
import { refreshClient } from './client-acquisition.ts';
import { openOAuthSecret, type OAuthTokenSecret } from './credential-store.ts';
import type { OAuthDeps } from './deps.ts';
import type { OAuthClientCredentials } from './registration.ts';

/** Run after the deleting transaction commits. */
export type Revocation = () => Promise<void>;

type RevocationDeps = Pick<OAuthDeps, 'db' | 'secrets' | 'publicUrl' | 'fetch' | 'connections' | 'logger'>;

interface Target {
  connection: ConnectionRow;
  secret: OAuthTokenSecret;
  client: OAuthClientCredentials | undefined;
}

async function targetOf(
  deps: RevocationDeps,
  tx: Queryable,
  connection: ConnectionRow,
  sealed: string,
): Promise<Target | null> {
  const secret = openOAuthSecret(deps.secrets, connection.identityFingerprint, sealed);
  if (!secret) return null;
  // The client as it is now; one that can no longer be had is left to revokeQuietly, which logs it.
  const client = await refreshClient(deps, connection, secret, tx).catch(() => undefined);
  return { connection, secret, client };
}

function revokeAll(deps: RevocationDeps, targets: Target[]): Revocation {
  return async () => {
    for (const { connection, secret, client } of targets) await revokeQuietly(deps, connection, secret, client);
  };
}

/** In the transaction deleting `connection`: every OAuth token stored for it (shared and each member's). */
export async function prepareConnectionRevocation(
  deps: RevocationDeps,
  tx: Queryable,
  connection: ConnectionRow,
): Promise<Revocation> {
  const { rows } = await tx.query<{ secretSealed: string }>(
    `SELECT secret_sealed AS "secretSealed" FROM mcp_connection_credentials
      WHERE organization_id = $1 AND connection_id = $2 AND kind = 'oauth' AND identity_fingerprint = $3`,
    [connection.organizationId, connection.id, connection.identityFingerprint],
  );
  const targets: Target[] = [];
  for (const row of rows) {
    const target = await targetOf(deps, tx, connection, row.secretSealed);
    if (target) targets.push(target);
  }
  return revokeAll(deps, targets);
}

/** In the transaction removing a member: their own OAuth tokens, on every connection of the organization. */
export async function prepareMemberRevocation(
  deps: RevocationDeps,
  tx: Queryable,
  organizationId: string,
  memberId: string,
): Promise<Revocation> {
  const { rows } = await tx.query<{ connectionId: string; secretSealed: string }>(
    `SELECT connection_id AS "connectionId", secret_sealed AS "secretSealed" FROM mcp_connection_credentials
      WHERE organization_id = $1 AND member_id = $2 AND kind = 'oauth'`,
    [organizationId, memberId],
  );
  const targets: Target[] = [];
  for (const row of rows) {
    const connection = await deps.connections.findConnection(tx, organizationId, row.connectionId);
    if (connection?.authType !== 'oauth') continue;
    const target = await targetOf(deps, tx, connection, row.secretSealed);
    if (target) targets.push(target);
  }
  return revokeAll(deps, targets);
}
