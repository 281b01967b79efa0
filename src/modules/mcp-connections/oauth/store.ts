// SQL of the OAuth flow's own tables (migration 0200). Every query filters on organization_id.

import type { Queryable } from '../../../db/database.ts';
import { isForeignKeyViolation } from '../../../db/errors.ts';
import type { CallbackMode, CredentialSubject } from './state.ts';
import type { RegistrationSource, TokenEndpointAuthMethod } from './registration.ts';

export interface PendingAuthorizationRow {
  id: string;
  organization_id: string;
  connection_id: string;
  identity_fingerprint: string;
  member_id: string;
  subject: CredentialSubject;
  callback_mode: CallbackMode;
  redirect_uri: string;
  issuer: string;
  iss_parameter_supported: boolean;
  token_endpoint: string;
  resource: string;
  scopes: string[];
  registration_source: RegistrationSource;
  client_id: string;
  code_verifier_sealed: string;
  expires_at: Date;
  /** SHA-256 (hex) of the nonce in the starting browser's cookie (browser-binding.ts). */
  browser_binding_hash: string;
}

export async function insertPendingAuthorization(db: Queryable, row: PendingAuthorizationRow): Promise<void> {
  await db.query(
    `INSERT INTO mcp_oauth_pending_authorizations
       (id, organization_id, connection_id, identity_fingerprint, member_id, subject, callback_mode, redirect_uri, issuer,
        iss_parameter_supported, token_endpoint, resource, scopes, registration_source, client_id, code_verifier_sealed, expires_at,
        browser_binding_hash)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)`,
    [
      row.id,
      row.organization_id,
      row.connection_id,
      row.identity_fingerprint,
      row.member_id,
      row.subject,
      row.callback_mode,
      row.redirect_uri,
      row.issuer,
      row.iss_parameter_supported,
      row.token_endpoint,
      row.resource,
      JSON.stringify(row.scopes),
      row.registration_source,
      row.client_id,
      row.code_verifier_sealed,
      row.expires_at,
      row.browser_binding_hash,
    ],
  );
}

/** The browser binding of a pending authorization, without claiming it (null: none, or expired). */
export async function pendingBinding(db: Queryable, organizationId: string, id: string): Promise<string | null> {
  const { rows } = await db.query<{ browser_binding_hash: string }>(
    `SELECT browser_binding_hash FROM mcp_oauth_pending_authorizations WHERE organization_id = $1 AND id = $2 AND expires_at > now()`,
    [organizationId, id],
  );
  return rows[0]?.browser_binding_hash ?? null;
}

/**
 * Claims a pending authorization: deletes it and returns it, once. A second claim (a replayed
 * state), or one after expiry, returns null. The delete is the single-use guarantee: of any
 * number of concurrent callbacks with the same state, exactly one gets the row.
 */
export async function claimPendingAuthorization(
  db: Queryable,
  organizationId: string,
  id: string,
): Promise<PendingAuthorizationRow | null> {
  const { rows } = await db.query<PendingAuthorizationRow>(
    `DELETE FROM mcp_oauth_pending_authorizations
      WHERE organization_id = $1 AND id = $2
      RETURNING *`,
    [organizationId, id],
  );
  const row = rows[0];
  if (!row || row.expires_at.getTime() <= Date.now()) return null;
  return row;
}

/** Drops expired pending authorizations of one organization (called opportunistically). */
export async function deleteExpiredPendingAuthorizations(db: Queryable, organizationId: string): Promise<void> {
  await db.query(`DELETE FROM mcp_oauth_pending_authorizations WHERE organization_id = $1 AND expires_at < now()`, [
    organizationId,
  ]);
}

export async function deletePendingAuthorizations(
  db: Queryable,
  organizationId: string,
  connectionId: string,
): Promise<number> {
  const { rowCount } = await db.query(
    `DELETE FROM mcp_oauth_pending_authorizations WHERE organization_id = $1 AND connection_id = $2`,
    [organizationId, connectionId],
  );
  return rowCount ?? 0;
}

export interface RegisteredClientRow {
  organization_id: string;
  connection_id: string;
  issuer: string;
  identity_fingerprint: string;
  client_id: string;
  client_secret_sealed: string | null;
  client_secret_expires_at: Date | null;
  token_endpoint_auth_method: TokenEndpointAuthMethod;
  redirect_uris: string[];
}

export async function findRegisteredClient(
  db: Queryable,
  organizationId: string,
  connectionId: string,
  issuer: string,
  identityFingerprint: string,
): Promise<RegisteredClientRow | null> {
  const { rows } = await db.query<RegisteredClientRow>(
    `SELECT * FROM mcp_oauth_registered_clients
      WHERE organization_id = $1 AND connection_id = $2 AND issuer = $3 AND identity_fingerprint = $4`,
    [organizationId, connectionId, issuer, identityFingerprint],
  );
  return rows[0] ?? null;
}

/**
 * Saves a registration unless another process saved one first for the same connection, issuer and
 * identity; returns the row that is now stored, so concurrent first authorizations share one client.
 */
export async function saveRegisteredClient(db: Queryable, row: RegisteredClientRow): Promise<RegisteredClientRow> {
  const { rows } = await db.query<RegisteredClientRow>(
    `INSERT INTO mcp_oauth_registered_clients
       (organization_id, connection_id, issuer, identity_fingerprint, client_id, client_secret_sealed,
        client_secret_expires_at, token_endpoint_auth_method, redirect_uris)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
     ON CONFLICT (organization_id, connection_id, issuer) DO UPDATE
       SET identity_fingerprint = EXCLUDED.identity_fingerprint,
           client_id = EXCLUDED.client_id,
           client_secret_sealed = EXCLUDED.client_secret_sealed,
           client_secret_expires_at = EXCLUDED.client_secret_expires_at,
           token_endpoint_auth_method = EXCLUDED.token_endpoint_auth_method,
           redirect_uris = EXCLUDED.redirect_uris,
           created_at = EXCLUDED.created_at
       -- Replace only a registration made for another identity or another callback; keep a valid one.
       WHERE mcp_oauth_registered_clients.identity_fingerprint <> EXCLUDED.identity_fingerprint
          OR mcp_oauth_registered_clients.redirect_uris <> EXCLUDED.redirect_uris
     RETURNING *`,
    [
      row.organization_id,
      row.connection_id,
      row.issuer,
      row.identity_fingerprint,
      row.client_id,
      row.client_secret_sealed,
      row.client_secret_expires_at,
      row.token_endpoint_auth_method,
      JSON.stringify(row.redirect_uris),
    ],
  );
  if (rows[0]) return rows[0];
  const existing = await findRegisteredClient(
    db,
    row.organization_id,
    row.connection_id,
    row.issuer,
    row.identity_fingerprint,
  );
  return existing ?? row;
}

export async function deleteRegisteredClients(
  db: Queryable,
  organizationId: string,
  connectionId: string,
): Promise<void> {
  await db.query(`DELETE FROM mcp_oauth_registered_clients WHERE organization_id = $1 AND connection_id = $2`, [
    organizationId,
    connectionId,
  ]);
}

export interface ConnectionStateRow {
  organization_id: string;
  connection_id: string;
  identity_fingerprint: string;
  issuer: string | null;
  registration_source: RegistrationSource | null;
  setup_required: boolean;
  issuer_review_required: boolean;
  problem_code: string | null;
  checked_at: Date;
}

export async function upsertConnectionState(db: Queryable, row: Omit<ConnectionStateRow, 'checked_at'>): Promise<void> {
  await db.query(
    `INSERT INTO mcp_oauth_connection_state
       (organization_id, connection_id, identity_fingerprint, issuer, registration_source, setup_required, issuer_review_required, problem_code, checked_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, now())
     ON CONFLICT (organization_id, connection_id) DO UPDATE
       SET identity_fingerprint = EXCLUDED.identity_fingerprint, issuer = EXCLUDED.issuer,
           registration_source = EXCLUDED.registration_source, setup_required = EXCLUDED.setup_required,
           issuer_review_required = EXCLUDED.issuer_review_required, problem_code = EXCLUDED.problem_code, checked_at = EXCLUDED.checked_at,
           step_up_scopes = CASE WHEN mcp_oauth_connection_state.identity_fingerprint = EXCLUDED.identity_fingerprint
                                 THEN mcp_oauth_connection_state.step_up_scopes ELSE '[]'::jsonb END`,
    [
      row.organization_id,
      row.connection_id,
      row.identity_fingerprint,
      row.issuer,
      row.registration_source,
      row.setup_required,
      row.issuer_review_required,
      row.problem_code,
    ],
  );
}

export async function deleteConnectionState(
  db: Queryable,
  organizationId: string,
  connectionId: string,
): Promise<void> {
  await db.query(`DELETE FROM mcp_oauth_connection_state WHERE organization_id = $1 AND connection_id = $2`, [
    organizationId,
    connectionId,
  ]);
}

/**
 * Records what the OAuth flow learned about how the client is obtained, on the connection row
 * (columns the connections module reserves for the OAuth flow). Only while the connection still
 * has the identity the flow ran for; updated_at (the edit concurrency token) is left alone, as
 * this is not an edit.
 */
export async function recordConnectionRegistration(
  db: Queryable,
  organizationId: string,
  connectionId: string,
  identityFingerprint: string,
  source: RegistrationSource | null,
  clientRequired: boolean,
): Promise<void> {
  await db.query(
    `UPDATE mcp_connections SET oauth_registration_source = $4, oauth_client_required = $5
      WHERE organization_id = $1 AND id = $2 AND identity_fingerprint = $3`,
    [organizationId, connectionId, identityFingerprint, source, clientRequired],
  );
}

/** Remembers scopes a server demanded (step-up) for the next authorization of this identity. */
export async function addStepUpScopes(
  db: Queryable,
  organizationId: string,
  connectionId: string,
  identityFingerprint: string,
  scopes: string[],
): Promise<void> {
  await db.query(
    `INSERT INTO mcp_oauth_connection_state (organization_id, connection_id, identity_fingerprint, step_up_scopes)
     VALUES ($1, $2, $3, $4)
     ON CONFLICT (organization_id, connection_id) DO UPDATE
       SET step_up_scopes = CASE WHEN mcp_oauth_connection_state.identity_fingerprint = EXCLUDED.identity_fingerprint
                                 THEN EXCLUDED.step_up_scopes ELSE '[]'::jsonb END`,
    [organizationId, connectionId, identityFingerprint, JSON.stringify(scopes)],
  );
}

export async function stepUpScopes(
  db: Queryable,
  organizationId: string,
  connectionId: string,
  identityFingerprint: string,
): Promise<string[]> {
  const { rows } = await db.query<{ step_up_scopes: string[] }>(
    `SELECT step_up_scopes FROM mcp_oauth_connection_state WHERE organization_id = $1 AND connection_id = $2 AND identity_fingerprint = $3`,
    [organizationId, connectionId, identityFingerprint],
  );
  return rows[0]?.step_up_scopes ?? [];
}

/** The connections (of those given) whose configured issuer an administrator must review. */
export async function issuerReviewFlags(
  db: Queryable,
  organizationId: string,
  connectionIds: string[],
): Promise<Set<string>> {
  if (connectionIds.length === 0) return new Set();
  const { rows } = await db.query<{ connection_id: string }>(
    `SELECT s.connection_id FROM mcp_oauth_connection_state s
       JOIN mcp_connections c ON c.organization_id = s.organization_id AND c.id = s.connection_id AND c.identity_fingerprint = s.identity_fingerprint
      WHERE s.organization_id = $1 AND s.connection_id = ANY($2::text[]) AND s.issuer_review_required`,
    [organizationId, connectionIds],
  );
  return new Set(rows.map((row) => row.connection_id));
}

/** How discovery found the authorization server of the connection's current identity (migration 0202). */
export async function recordDiscoveryPath(
  db: Queryable,
  organizationId: string,
  connectionId: string,
  identityFingerprint: string,
  path: string,
): Promise<void> {
  await db
    .query(
      `INSERT INTO mcp_oauth_connection_state AS s (organization_id, connection_id, identity_fingerprint, discovery_path)
     SELECT c.organization_id, c.id, c.identity_fingerprint, $4 FROM mcp_connections c
      WHERE c.organization_id = $1 AND c.id = $2 AND c.identity_fingerprint = $3
     ON CONFLICT (organization_id, connection_id) DO UPDATE
       SET discovery_path = CASE WHEN s.identity_fingerprint = EXCLUDED.identity_fingerprint THEN EXCLUDED.discovery_path ELSE s.discovery_path END`,
      [organizationId, connectionId, identityFingerprint, path],
    )
    .catch((error: unknown) => {
      if (!isForeignKeyViolation(error)) throw error; // the connection was deleted meanwhile
    });
}

/** The discovery paths recorded for these connections' current identities. */
export async function discoveryPaths(
  db: Queryable,
  organizationId: string,
  connectionIds: string[],
): Promise<Map<string, string>> {
  if (connectionIds.length === 0) return new Map();
  const { rows } = await db.query<{ connection_id: string; discovery_path: string }>(
    `SELECT s.connection_id, s.discovery_path FROM mcp_oauth_connection_state s
       JOIN mcp_connections c ON c.organization_id = s.organization_id AND c.id = s.connection_id AND c.identity_fingerprint = s.identity_fingerprint
      WHERE s.organization_id = $1 AND s.connection_id = ANY($2::text[]) AND s.discovery_path IS NOT NULL`,
    [organizationId, connectionIds],
  );
  return new Map(rows.map((row) => [row.connection_id, row.discovery_path]));
}
