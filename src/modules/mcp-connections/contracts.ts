// What the connections module shares with its sub-modules (./oauth/, ./probe/): the connection as they
// read it, and the contracts between them, handed over when they are built. A sub-module imports this file
// and nothing else of its parent (.dependency-cruiser.mjs, sub-module-uses-parent-contracts), and this
// file imports no sub-module that imports it back, so no import circle runs through it.
import type { Queryable } from '../../db/database.ts';
import type { Diagnostic, HighestPassed, ServerCatalog } from './probe/index.ts';

export type AuthType = 'oauth' | 'apikey' | 'none';
export type CredentialMode = 'shared' | 'per_member';
export type Health = 'unknown' | 'ready' | 'reconnect_required';
export type HealthReason = 'authorization_rejected' | 'credential_expired' | 'post_authorization_validation_failed';

/** The JWS algorithms of a private_key_jwt client assertion (oauth/client-assertion.ts signs with them). */
export const signingAlgorithms = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
] as const;
export type SigningAlgorithm = (typeof signingAlgorithms)[number];

export interface ConnectionRow extends ConnectionFields {
  id: string;
  organizationId: string;
  oauthClientRequired: boolean;
  createdBy: string | null;
  createdByName: string | null;
  createdAt: Date;
  identityUpdatedAt: Date;
  updatedAt: Date;
}

/** Writable columns of a connection (everything but ids, creator and timestamps). */
export interface ConnectionFields {
  name: string;
  url: string;
  normalizedUrl: string;
  authType: AuthType;
  credentialMode: CredentialMode;
  identityFingerprint: string;
  orgWide: boolean;
  oauthClientId: string | null;
  oauthClientSecretSealed: string | null;
  oauthTokenEndpointAuthMethod: 'client_secret_basic' | 'client_secret_post' | 'private_key_jwt' | null;
  /** private_key_jwt: the sealed PEM private key and the JWS algorithm of the client assertion. */
  oauthClientPrivateKeySealed: string | null;
  oauthClientSigningAlgorithm: SigningAlgorithm | null;
  /** How the shared identity's tokens are obtained: a person authorizing, or the client itself (RFC 6749 §4.4). */
  oauthGrantType: 'authorization_code' | 'client_credentials';
  oauthRegistrationSource: 'pre-registered' | 'client-metadata' | 'dynamic' | null;
  authorizationServerIssuer: string | null;
  requestedScopes: string[];
  health: Health;
  healthReason: HealthReason | null;
  healthCheckedAt: Date | null;
}

export interface TestResult {
  ok: boolean;
  highestPassed: HighestPassed;
  tools: string[];
  diagnostic: Diagnostic | null;
}

/** What the OAuth flows (./oauth/) contribute to connections; given when the service is built. */
export interface ConnectionOAuthHooks {
  /**
   * Runs inside the edit transaction that changes a connection's identity, after its credentials are
   * deleted: the OAuth flows drop the pending authorizations and clients made for the old identity.
   */
  dropIdentityState(tx: Queryable, organizationId: string, connectionId: string): Promise<void>;
  /** POST .../test of an OAuth connection: refresh first, why a token was refused, one scope step-up. */
  testConnection(row: ConnectionRow, memberId: string | null): Promise<TestResult>;
  /** The background health job's check of one OAuth credential (oauth/health-check.ts). */
  checkCredential(
    row: ConnectionRow,
    credential: { memberId: string | null; validated: boolean },
    wants: { refresh: boolean; probe: boolean },
  ): Promise<CredentialCheck>;
  /**
   * In the transaction deleting the connection, before its rows go: reads its OAuth tokens and their
   * client, and returns what revokes them at the authorization server (RFC 7009), to run once it commits.
   */
  prepareRevocation(tx: Queryable, connection: ConnectionRow): Promise<() => Promise<void>>;
}

/**
 * What a background check of one credential found. `refused` is definite (the credential cannot be
 * used again: reconnect_required at once); `inconclusive` says nothing about the credential (the
 * server or its token endpoint could not be reached, a 5xx), and counts toward the failure threshold.
 */
export type CredentialCheck =
  | { kind: 'healthy'; probed: boolean; refreshed: boolean }
  | { kind: 'refused'; reason: HealthReason; probed: boolean; refreshed: boolean; alreadyMarked: boolean }
  | { kind: 'inconclusive'; step: 'refresh' | 'probe'; code: string; probed: boolean; refreshed: boolean }
  /** No usable credential any more (deleted or replaced meanwhile, or it cannot be opened). */
  | { kind: 'gone' };

/**
 * What the OAuth flows use of connections, and nothing more: they read a connection, hold it while they
 * write rows that name it, ask whether a member may use it, and record what a test's probe saw. The
 * connections service never hands out its store (records.ts builds this over it).
 */
export interface ConnectionRecords {
  /** The connection; with `lock`, row-locked (FOR UPDATE) until the transaction ends. */
  findConnection(q: Queryable, organizationId: string, id: string, lock?: boolean): Promise<ConnectionRow | undefined>;
  /** Whether the connection exists, key-share locked until the transaction ends (a DELETE waits; an edit does not). */
  holdConnection(q: Queryable, organizationId: string, id: string): Promise<boolean>;
  /** Whether the member is granted the connection (org-wide, directly, or through a team). */
  memberMayUse(q: Queryable, organizationId: string, connectionId: string, memberId: string): Promise<boolean>;
  /** Stores what a successful probe of the connection's identity saw (catalog-store.ts recordCatalog). */
  recordCatalog(
    q: Queryable,
    organizationId: string,
    connectionId: string,
    identityFingerprint: string,
    catalog: ServerCatalog,
  ): Promise<void>;
}
