// What the connections service is built from. Each function of the service's files takes the few
// of these it uses (Pick<ConnectionDeps, ...>), so what a step depends on is read from its signature.
import type { Database, Queryable } from '../../db/database.ts';
import type { OutboundClient } from '../../platform/outbound.ts';
import type { RateLimiter } from '../../platform/rate-limiter.ts';
import type { SecretBox } from '../../platform/secrets.ts';
import type { MembershipCore } from '../identity/index.ts';
import type { Diagnostic, HighestPassed } from './probe/index.ts';
import type { ConnectionRow, ConnectionStore, HealthReason } from './store.ts';

export interface TestResult {
  ok: boolean;
  highestPassed: HighestPassed;
  tools: string[];
  diagnostic: Diagnostic | null;
}

/** The teams side of the organization: which of `ids` are its teams. */
export interface TeamDirectory {
  listTeamIds(organizationId: string, ids: string[], tx?: Queryable): Promise<string[]>;
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

export interface ConnectionDeps {
  db: Database;
  store: ConnectionStore;
  secrets: SecretBox;
  outbound: OutboundClient;
  members: Pick<MembershipCore, 'holdActingMember' | 'lockMemberIds' | 'listMemberIds'>;
  teams: TeamDirectory;
  publicUrl: string;
  /** Bounds the probes a tenant and a member can start (probing.ts probeLimits). */
  limiter: RateLimiter;
  oauth: ConnectionOAuthHooks;
  /** Receives probe failures with their full detail, under the diagnostic's referenceId. */
  logger?: { warn(details: Record<string, unknown>, message: string): void };
  probeTimeoutMs?: number;
}
