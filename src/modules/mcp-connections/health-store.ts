// SQL of the background credential health job (health-job.ts). A process finds which organizations
// have a due connection, then claims each organization's with FOR NO KEY UPDATE SKIP LOCKED and leases
// them (health_lease_until, health_lease_token on the connection): any number of processes share the
// due connections, each checked by one of them, and a process that dies holding a lease leaves the
// connection to whoever runs once the lease has ended.
// NO KEY UPDATE, not UPDATE: it does not wait for (or block) the key-share locks OAuth writes hold.
import type { Queryable } from '../../db/database.ts';
import type { HealthReason } from './contracts.ts';

export interface DueCredential {
  id: string;
  memberId: string | null;
  kind: 'apikey' | 'oauth';
  secretSealed: string;
  expiresAt: Date | null;
  /** The interval has passed (or it was never probed): probe it. */
  probeDue: boolean;
  /** An OAuth access token within the refresh margin of its expiry: refresh it. */
  refreshDue: boolean;
  /** The server accepted it at least once since it was stored. */
  validated: boolean;
  failures: number;
}

// A credential is due when its probe is (NULL: never checked), or when its OAuth access token is
// within the margin of its expiry. A credential whose last check was inconclusive waits for its next
// probe rather than being retried at every poll. reconnect_required waits for a person.
const dueCondition = `k.health <> 'reconnect_required' AND (
    k.health_due_at IS NULL OR k.health_due_at <= $1::timestamptz
    OR (k.kind = 'oauth' AND k.health_failures = 0 AND k.expires_at <= $1::timestamptz + make_interval(secs => $2::float8)))`;

// A connection whose lease has ended (or that has none), not checked by this run yet.
const claimable = (now: string, exclude: string) =>
  `c.auth_type <> 'none' AND (c.health_lease_until IS NULL OR c.health_lease_until <= ${now}::timestamptz) AND NOT (c.id = ANY(${exclude}::text[]))`;

/**
 * The organizations with a connection due and free to claim: a plain read across organizations, with
 * no lock (a distributed database runs a row lock only in a statement on one organization's rows).
 * Each is then claimed by a statement that names it; what another process leased in between is skipped.
 */
export async function organizationsWithDueConnections(
  q: Queryable,
  options: { now: Date; marginSeconds: number; exclude: string[] },
): Promise<string[]> {
  const { rows } = await q.query<{ organization_id: string }>(
    `SELECT c.organization_id FROM mcp_connections c
      WHERE ${claimable('$1', '$3')}
        AND EXISTS (SELECT 1 FROM mcp_connection_credentials k
                     WHERE k.organization_id = c.organization_id AND k.connection_id = c.id
                       AND k.identity_fingerprint = c.identity_fingerprint AND ${dueCondition})
      GROUP BY c.organization_id ORDER BY c.organization_id`,
    [options.now, options.marginSeconds, options.exclude],
  );
  return rows.map((row) => row.organization_id);
}

/**
 * Leases up to `limit` of the organization's connections with a due credential to this run (`token`),
 * skipping those another process holds or leased, and those this run has checked already (`exclude`).
 * The credentials' scan names the organization itself, not only through c: a correlated EXISTS may be
 * planned as a hashed subplan that reads the whole table.
 */
export async function claimDueConnections(
  q: Queryable,
  organizationId: string,
  options: { now: Date; marginSeconds: number; limit: number; leaseUntil: Date; token: string; exclude: string[] },
): Promise<string[]> {
  const { rows } = await q.query<{ id: string }>(
    `WITH claimed AS (
       SELECT c.id FROM mcp_connections c
        WHERE c.organization_id = $3 AND ${claimable('$1', '$7')}
          AND EXISTS (SELECT 1 FROM mcp_connection_credentials k
                       WHERE k.organization_id = $3 AND k.connection_id = c.id
                         AND k.identity_fingerprint = c.identity_fingerprint AND ${dueCondition})
        ORDER BY c.id
        LIMIT $4
        FOR NO KEY UPDATE OF c SKIP LOCKED)
     UPDATE mcp_connections c SET health_lease_until = $5, health_lease_token = $6
       FROM claimed WHERE c.organization_id = $3 AND c.id = claimed.id
     RETURNING c.id`,
    [
      options.now,
      options.marginSeconds,
      organizationId,
      options.limit,
      options.leaseUntil,
      options.token,
      options.exclude,
    ],
  );
  return rows.map((row) => row.id);
}

/** The due credentials of a leased connection, for its current identity only. */
export async function dueCredentials(
  q: Queryable,
  organizationId: string,
  connectionId: string,
  identityFingerprint: string,
  now: Date,
  marginSeconds: number,
): Promise<DueCredential[]> {
  const { rows } = await q.query<DueCredential>(
    `SELECT k.id, k.member_id AS "memberId", k.kind, k.secret_sealed AS "secretSealed", k.expires_at AS "expiresAt",
            (k.health_due_at IS NULL OR k.health_due_at <= $1::timestamptz) AS "probeDue",
            (k.kind = 'oauth' AND k.expires_at IS NOT NULL AND k.expires_at <= $1::timestamptz + make_interval(secs => $2::float8)) AS "refreshDue",
            k.validated_at IS NOT NULL AS validated, k.health_failures AS failures
       FROM mcp_connection_credentials k
      WHERE k.organization_id = $3 AND k.connection_id = $4 AND k.identity_fingerprint = $5 AND ${dueCondition}
      ORDER BY k.id`,
    [now, marginSeconds, organizationId, connectionId, identityFingerprint],
  );
  return rows;
}

/**
 * A check that learned something: the health it found (a passed probe validates), and the next probe.
 * The time inside CASE comes from a joined one-row subquery (`clock.now`): Citus refuses now() inside
 * CASE or COALESCE in an UPDATE of a distributed table (so does recordInconclusive).
 */
export async function recordCheck(
  q: Queryable,
  organizationId: string,
  id: string,
  health: 'ready' | 'reconnect_required',
  reason: HealthReason | null,
  nextProbeAt: Date,
): Promise<void> {
  await q.query(
    `UPDATE mcp_connection_credentials
        SET health = $3, health_reason = $4, health_checked_at = now(), updated_at = now(), health_failures = 0,
            validated_at = CASE WHEN $3 = 'ready' THEN clock.now ELSE validated_at END, health_due_at = $5
       FROM (SELECT now() AS now) clock
      WHERE organization_id = $1 AND id = $2`,
    [organizationId, id, health, reason, nextProbeAt],
  );
}

/** Only the next probe (a refresh alone, or a credential that could not be opened). */
export async function scheduleProbe(
  q: Queryable,
  organizationId: string,
  id: string,
  nextProbeAt: Date,
): Promise<void> {
  await q.query('UPDATE mcp_connection_credentials SET health_due_at = $3 WHERE organization_id = $1 AND id = $2', [
    organizationId,
    id,
    nextProbeAt,
  ]);
}

/**
 * A check that failed without a definite answer: one more consecutive failure; at the threshold the
 * credential is reconnect_required with `reason`. Answers the health it has now.
 */
export async function recordInconclusive(
  q: Queryable,
  organizationId: string,
  id: string,
  threshold: number,
  reason: HealthReason,
  nextProbeAt: Date,
): Promise<{ failures: number; health: string } | undefined> {
  const { rows } = await q.query<{ failures: number; health: string }>(
    `UPDATE mcp_connection_credentials k
        SET health_failures = k.health_failures + 1, health_due_at = $5,
            health = CASE WHEN k.health_failures + 1 >= $3 THEN 'reconnect_required' ELSE k.health END,
            health_reason = CASE WHEN k.health_failures + 1 >= $3 THEN $4 ELSE k.health_reason END,
            health_checked_at = CASE WHEN k.health_failures + 1 >= $3 THEN clock.now ELSE k.health_checked_at END,
            updated_at = now()
       FROM (SELECT now() AS now) clock
      WHERE k.organization_id = $1 AND k.id = $2 AND k.health <> 'reconnect_required'
      RETURNING k.health_failures AS failures, k.health`,
    [organizationId, id, threshold, reason, nextProbeAt],
  );
  return rows[0];
}

/** Ends this run's leases on the organization's connections (not one another process took after it expired). */
export async function releaseConnections(
  q: Queryable,
  organizationId: string,
  ids: string[],
  token: string,
): Promise<void> {
  if (ids.length === 0) return;
  await q.query(
    `UPDATE mcp_connections SET health_lease_until = NULL, health_lease_token = NULL
      WHERE organization_id = $1 AND id = ANY($2::text[]) AND health_lease_token = $3`,
    [organizationId, ids, token],
  );
}
