// OAuth tokens in the MCP connections module's credential table (mcp_connection_credentials).
//
// The sealed secret is a JSON envelope that names the identity fingerprint it was obtained for,
// so a token opens only for that identity. Besides the tokens it carries what a refresh needs
// (token endpoint, issuer, resource, client id and how the client was obtained), so a refresh
// never depends on a fresh discovery. Queries here touch only kind = 'oauth' rows and always
// filter on organization_id.

import type { Queryable } from '../../../db/database.ts';
import type { SecretBox } from '../../../platform/secrets.ts';
import type { CredentialHealthReason } from './errors.ts';
import type { RegistrationSource } from './registration.ts';
import type { ProviderAccount } from './account.ts';

export interface OAuthTokenSecret {
  accessToken: string;
  refreshToken: string | null;
  tokenEndpoint: string;
  issuer: string;
  resource: string;
  registrationSource: RegistrationSource;
  clientId: string;
  scopes: string[];
}

interface Envelope {
  v: 1;
  kind: 'oauth';
  identityFingerprint: string;
  oauth: OAuthTokenSecret;
}

/** The envelope the connections module documents for OAuth credentials (see its service.ts). */
export function sealOAuthSecret(secrets: SecretBox, identityFingerprint: string, secret: OAuthTokenSecret): string {
  const envelope: Envelope = { v: 1, kind: 'oauth', identityFingerprint, oauth: secret };
  return secrets.seal(JSON.stringify(envelope));
}

/** Null when the envelope is not an OAuth one, cannot be opened, or was made for another identity. */
export function openOAuthSecret(
  secrets: SecretBox,
  identityFingerprint: string,
  sealed: string,
): OAuthTokenSecret | null {
  try {
    const envelope = JSON.parse(secrets.open(sealed)) as Partial<Envelope>;
    if (envelope.kind !== 'oauth' || envelope.identityFingerprint !== identityFingerprint) return null;
    const oauth = envelope.oauth;
    return oauth && typeof oauth.accessToken === 'string' && typeof oauth.tokenEndpoint === 'string' ? oauth : null;
  } catch {
    return null;
  }
}

export interface OAuthCredentialRow {
  id: string;
  connectionId: string;
  memberId: string | null;
  identityFingerprint: string;
  secretSealed: string;
  expiresAt: Date | null;
  grantedScopes: string[];
  health: 'unknown' | 'ready' | 'reconnect_required';
  healthReason: CredentialHealthReason | null;
}

const columns = `id, connection_id AS "connectionId", member_id AS "memberId", identity_fingerprint AS "identityFingerprint",
  secret_sealed AS "secretSealed", expires_at AS "expiresAt", granted_scopes AS "grantedScopes", health, health_reason AS "healthReason"`;

/**
 * The OAuth credential of a member (memberId) or the shared one (null). `forUpdate` takes the row
 * lock that makes a refresh single-flight: a second process asking for it waits until the first
 * has committed, then sees the refreshed token.
 */
export async function findOAuthCredential(
  db: Queryable,
  organizationId: string,
  connectionId: string,
  memberId: string | null,
  forUpdate = false,
): Promise<OAuthCredentialRow | null> {
  const { rows } = await db.query<OAuthCredentialRow>(
    `SELECT ${columns} FROM mcp_connection_credentials
      WHERE organization_id = $1 AND connection_id = $2 AND member_id IS NOT DISTINCT FROM $3 AND kind = 'oauth'
      ${forUpdate ? 'FOR UPDATE' : ''}`,
    [organizationId, connectionId, memberId],
  );
  return rows[0] ?? null;
}

/** Stores (replacing) the member's or the shared OAuth credential, healthy, with its expiry and scopes. */
export async function saveOAuthCredential(
  db: Queryable,
  row: {
    id: string;
    organizationId: string;
    connectionId: string;
    memberId: string | null;
    identityFingerprint: string;
    secretSealed: string;
    expiresAt: Date | null;
    grantedScopes: string[];
    account?: ProviderAccount;
  },
): Promise<void> {
  await db.query(
    `DELETE FROM mcp_connection_credentials WHERE organization_id = $1 AND connection_id = $2 AND member_id IS NOT DISTINCT FROM $3`,
    [row.organizationId, row.connectionId, row.memberId],
  );
  await db.query(
    `INSERT INTO mcp_connection_credentials
       (id, organization_id, connection_id, member_id, kind, identity_fingerprint, secret_sealed, expires_at, granted_scopes,
        external_account_id, tenant_id, health, health_reason, health_checked_at, obtained_at, updated_at)
     VALUES ($1, $2, $3, $4, 'oauth', $5, $6, $7, $8, $9, $10, 'ready', NULL, clock_timestamp(), clock_timestamp(), clock_timestamp())`,
    [
      row.id,
      row.organizationId,
      row.connectionId,
      row.memberId,
      row.identityFingerprint,
      row.secretSealed,
      row.expiresAt,
      JSON.stringify(row.grantedScopes),
      row.account?.externalAccountId ?? null,
      row.account?.tenantId ?? null,
    ],
  );
}

/** After a refresh: the new secret and expiry, healthy again. */
export async function updateRefreshedCredential(
  db: Queryable,
  organizationId: string,
  id: string,
  secretSealed: string,
  expiresAt: Date | null,
  grantedScopes: string[],
  account?: ProviderAccount,
): Promise<void> {
  // A refresh response that names no account (most do not) keeps what the authorization named.
  await db.query(
    `UPDATE mcp_connection_credentials
        SET secret_sealed = $3, expires_at = $4, granted_scopes = $5, health = 'ready', health_reason = NULL,
            external_account_id = COALESCE($6, external_account_id), tenant_id = COALESCE($7, tenant_id),
            health_checked_at = now(), updated_at = now()
      WHERE organization_id = $1 AND id = $2`,
    [
      organizationId,
      id,
      secretSealed,
      expiresAt,
      JSON.stringify(grantedScopes),
      account?.externalAccountId ?? null,
      account?.tenantId ?? null,
    ],
  );
}

/** What a check found: `ready` only after the server accepted the token (it then counts as validated). */
export async function markCredentialHealth(
  db: Queryable,
  organizationId: string,
  id: string,
  health: 'ready' | 'reconnect_required',
  reason: CredentialHealthReason | null,
): Promise<void> {
  await db.query(
    `UPDATE mcp_connection_credentials SET health = $3, health_reason = $4, health_checked_at = now(), updated_at = now(),
            health_failures = 0, validated_at = CASE WHEN $3 = 'ready' THEN now() ELSE validated_at END
      WHERE organization_id = $1 AND id = $2`,
    [organizationId, id, health, reason],
  );
}

export async function deleteOAuthCredential(
  db: Queryable,
  organizationId: string,
  connectionId: string,
  memberId: string | null,
): Promise<number> {
  const { rowCount } = await db.query(
    `DELETE FROM mcp_connection_credentials WHERE organization_id = $1 AND connection_id = $2 AND member_id IS NOT DISTINCT FROM $3`,
    [organizationId, connectionId, memberId],
  );
  return rowCount ?? 0;
}
