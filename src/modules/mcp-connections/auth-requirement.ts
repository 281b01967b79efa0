// What a connection's server demands of a client (requiredAuthType), learned by asking it without
// credentials, and what the connection response derives from it (authTypeMismatch,
// authPolicyConfirmed). Table mcp_connection_auth_requirements (migration 0120); every statement
// filters on organization_id.
import type { Queryable } from '../../db/database.ts';
import { isForeignKeyViolation } from '../../db/errors.ts';
import { fetchProtectedResourceMetadata, resourceChallenge, type FetchLike } from './oauth/index.ts';
import type { AuthType } from './contracts.ts';

/**
 * One unauthenticated MCP initialize: answered without a 401/403, the server demands nothing
 * (`none`); refused, it demands OAuth when it points to an authorization server (a Bearer challenge
 * naming RFC 9728 resource metadata, that metadata at its well-known URL, or the RFC 8414 metadata
 * at its origin that MCP 2025-03-26 servers publish), and otherwise some other credential (`apikey`).
 * Null when the server could not be asked: nothing is learned from a failure to reach it.
 */
export async function observeAuthRequirement(url: string, fetchFn: FetchLike): Promise<AuthType | null> {
  let answer: Awaited<ReturnType<typeof resourceChallenge>>;
  try {
    answer = await resourceChallenge(url, null, fetchFn);
  } catch {
    return null;
  }
  if (answer.status !== 401 && answer.status !== 403) return 'none';
  if (answer.challenge?.resourceMetadataUrl) return 'oauth';
  try {
    if (await fetchProtectedResourceMetadata(url, fetchFn, null)) return 'oauth';
  } catch {
    // A broken metadata document is still a server that means OAuth.
    return 'oauth';
  }
  return (await publishesAuthorizationServerMetadata(url, fetchFn)) ? 'oauth' : 'apikey';
}

async function publishesAuthorizationServerMetadata(url: string, fetchFn: FetchLike): Promise<boolean> {
  try {
    const response = await fetchFn(new URL('/.well-known/oauth-authorization-server', new URL(url).origin), {
      method: 'GET',
      headers: { accept: 'application/json' },
    });
    await response.body?.cancel().catch(() => {});
    return response.ok;
  } catch {
    return false;
  }
}

/**
 * Records what the server at `url` demands, for the connection as long as it still has that URL:
 * nothing is written when the connection is gone or was pointed elsewhere meanwhile.
 */
export async function recordAuthRequirement(
  q: Queryable,
  organizationId: string,
  connectionId: string,
  url: string,
  required: AuthType,
): Promise<void> {
  try {
    await q.query(
      `INSERT INTO mcp_connection_auth_requirements AS r (organization_id, connection_id, url, required_auth_type, observed_at)
       SELECT c.organization_id, c.id, c.url, $4, clock_timestamp() FROM mcp_connections c
        WHERE c.organization_id = $1 AND c.id = $2 AND c.url = $3
       ON CONFLICT (organization_id, connection_id) DO UPDATE SET url = EXCLUDED.url, required_auth_type = EXCLUDED.required_auth_type, observed_at = EXCLUDED.observed_at`,
      [organizationId, connectionId, url, required],
    );
  } catch (error) {
    if (!isForeignKeyViolation(error)) throw error;
  }
}

/** What each of these connections' servers demands, with the URL it was seen at. */
export async function authRequirementsOf(
  q: Queryable,
  organizationId: string,
  connectionIds: string[],
): Promise<Map<string, { url: string; requiredAuthType: AuthType }>> {
  const found = new Map<string, { url: string; requiredAuthType: AuthType }>();
  if (connectionIds.length === 0) return found;
  const { rows } = await q.query<{ connectionId: string; url: string; requiredAuthType: AuthType }>(
    `SELECT connection_id AS "connectionId", url, required_auth_type AS "requiredAuthType"
       FROM mcp_connection_auth_requirements WHERE organization_id = $1 AND connection_id = ANY($2::text[])`,
    [organizationId, connectionIds],
  );
  for (const { connectionId, ...requirement } of rows) found.set(connectionId, requirement);
  return found;
}

/**
 * The spec's fields about the authentication policy: `requiredAuthType` (null until a check saw
 * the server at its current URL); `authTypeMismatch` only when that is known (configured differs
 * from required); `authPolicyConfirmed`: a check saw the server demand exactly what is configured.
 */
export function authPolicyFields(
  configured: AuthType,
  url: string,
  requirement: { url: string; requiredAuthType: AuthType } | undefined,
) {
  const required = requirement && requirement.url === url ? requirement.requiredAuthType : null;
  return {
    requiredAuthType: required,
    ...(required !== null ? { authTypeMismatch: required !== configured } : {}),
    authPolicyConfirmed: required === configured,
  };
}

/** Server capabilities the workspace uses: it lists and calls tools, so a server without `tools` lacks what it needs. */
export const neededFeatures = ['tools'] as const;

/** The needed features the server's last catalog (for the current identity) did not declare; undefined when no catalog is known. */
export function missingFeatures(capabilities: Record<string, unknown> | undefined): string[] | undefined {
  if (!capabilities) return undefined;
  return neededFeatures.filter((feature) => capabilities[feature] === undefined || capabilities[feature] === null);
}
