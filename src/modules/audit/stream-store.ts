// SQL of audit-log streams (migration 0701): the one stream of an organization, and its delivery
// state. A stream's queue is its organization's chain itself: the events after cursor_seq, in seq
// order (the chain's rows are found by chain_id, the organization's id, which is how audit_events is
// distributed). Workers take streams with FOR UPDATE SKIP LOCKED and lease them, so one attempt at a time
// delivers a stream whatever the number of processes; the lease number fences that attempt's settle.
import type { Database, Queryable } from '../../db/database.ts';

export interface StreamRow {
  organization_id: string;
  url: string;
  signing_secret_sealed: string;
  enabled: boolean;
  cursor_seq: number;
  last_delivered_event_id: string | null;
  last_delivered_at: Date | null;
  failed_attempts: number;
  last_error: string | null;
  last_error_at: Date | null;
  dead_at: Date | null;
  run_after: Date;
  created_at: Date;
  updated_at: Date;
}

/** A stream with what is waiting for it: the events after its cursor. */
export interface StreamView extends StreamRow {
  pending_events: number;
  oldest_pending_at: Date | null;
}

/** A stream a worker holds for one attempt. */
export interface LeasedStream {
  organizationId: string;
  url: string;
  signingSecretSealed: string;
  cursorSeq: number;
  lease: number;
  /** This attempt's number for the batch at the cursor (1 when it has not failed yet). */
  attempt: number;
}

const COLUMNS = `organization_id, url, signing_secret_sealed, enabled, cursor_seq, last_delivered_event_id, last_delivered_at,
  failed_attempts, last_error, last_error_at, dead_at, run_after, created_at, updated_at`;

export async function findStream(db: Queryable, organizationId: string): Promise<StreamView | undefined> {
  const { rows } = await db.query<StreamView>(
    `SELECT ${COLUMNS}, p.pending_events, p.oldest_pending_at FROM audit_streams s
       CROSS JOIN LATERAL (SELECT count(*)::int AS pending_events, min(e.occurred_at) AS oldest_pending_at FROM audit_events e
                            WHERE e.chain_id = s.organization_id AND e.seq > s.cursor_seq) p
      WHERE s.organization_id = $1`,
    [organizationId],
  );
  return rows[0];
}

/** The stream locked until the transaction ends (undefined when there is none). */
export async function lockStream(
  tx: Queryable,
  organizationId: string,
): Promise<{ organization_id: string } | undefined> {
  const { rows } = await tx.query<{ organization_id: string }>(
    'SELECT organization_id FROM audit_streams WHERE organization_id = $1 FOR UPDATE',
    [organizationId],
  );
  return rows[0];
}

/** The position of the organization's newest event (or its retention checkpoint): a new stream starts after it. */
export async function chainHead(tx: Queryable, organizationId: string): Promise<number> {
  const { rows } = await tx.query<{ head: string }>(
    `SELECT GREATEST(
       (SELECT COALESCE(max(seq), 0) FROM audit_events WHERE chain_id = $1),
       (SELECT COALESCE(max(seq), 0) FROM audit_checkpoints WHERE chain_id = $1)) AS head`,
    [organizationId],
  );
  return Number(rows[0]?.head ?? 0);
}

export async function insertStream(
  tx: Queryable,
  s: { organizationId: string; url: string; signingSecretSealed: string; enabled: boolean; cursorSeq: number },
): Promise<void> {
  await tx.query(
    'INSERT INTO audit_streams (organization_id, url, signing_secret_sealed, enabled, cursor_seq) VALUES ($1, $2, $3, $4, $5)',
    [s.organizationId, s.url, s.signingSecretSealed, s.enabled, s.cursorSeq],
  );
}

/**
 * Changes the URL and whether it is enabled (and the secret, when given). Enabling clears the failures
 * and the dead letter, and makes the stream due at once: delivery resumes at its cursor, nothing skipped.
 * The time comes from a joined one-row subquery (`clock.now`): Citus refuses now() inside CASE or
 * COALESCE in an UPDATE of a distributed table (so does markFailed).
 */
export async function updateStream(
  tx: Queryable,
  organizationId: string,
  changes: { url: string; enabled: boolean; signingSecretSealed: string | null },
): Promise<void> {
  await tx.query(
    `UPDATE audit_streams
        SET url = $2, enabled = $3, signing_secret_sealed = COALESCE($4, signing_secret_sealed),
            failed_attempts = CASE WHEN $3 THEN 0 ELSE failed_attempts END,
            dead_at = CASE WHEN $3 THEN NULL ELSE dead_at END,
            run_after = CASE WHEN $3 THEN clock.now ELSE run_after END,
            updated_at = now()
       FROM (SELECT now() AS now) clock
      WHERE organization_id = $1`,
    [organizationId, changes.url, changes.enabled, changes.signingSecretSealed],
  );
}

export async function deleteStream(tx: Queryable, organizationId: string): Promise<boolean> {
  const { rowCount } = await tx.query('DELETE FROM audit_streams WHERE organization_id = $1', [organizationId]);
  return (rowCount ?? 0) > 0;
}

// A stream is due when it is enabled, not dead, not waiting for a retry, not leased, and its
// organization's chain has an event after its cursor.
const DUE = `s.enabled AND s.dead_at IS NULL AND s.run_after <= now()
      AND (s.leased_until IS NULL OR s.leased_until <= now())
      AND EXISTS (SELECT 1 FROM audit_events e WHERE e.chain_id = s.organization_id AND e.seq > s.cursor_seq)`;

// Which organizations have a due stream: a plain read across organizations, with no lock (a distributed
// database runs a row lock only in a statement on one organization's rows). Each is then leased by a
// statement that names it; one another worker leased in between is skipped, not waited for.
const DUE_ORGANIZATIONS = `SELECT s.organization_id FROM audit_streams s WHERE ${DUE} ORDER BY s.run_after LIMIT $1`;

const LEASE = `WITH picked AS (
   SELECT s.organization_id FROM audit_streams s WHERE s.organization_id = $1 AND ${DUE}
   FOR UPDATE OF s SKIP LOCKED
 )
 UPDATE audit_streams t
    SET leased_until = now() + $2 * interval '1 second', lease = t.lease + 1
   FROM picked
  WHERE t.organization_id = $1 AND picked.organization_id = t.organization_id
 RETURNING t.organization_id, t.url, t.signing_secret_sealed, t.cursor_seq, t.lease, t.failed_attempts`;

type LeasedRow = {
  organization_id: string;
  url: string;
  signing_secret_sealed: string;
  cursor_seq: number;
  lease: number;
  failed_attempts: number;
};

export async function takeStreams(db: Database, limit: number, leaseSeconds: number): Promise<LeasedStream[]> {
  const due = await db.query<{ organization_id: string }>(DUE_ORGANIZATIONS, [limit]);
  const leased: LeasedStream[] = [];
  for (const { organization_id: organizationId } of due.rows) {
    const { rows } = await db.query<LeasedRow>(LEASE, [organizationId, leaseSeconds]);
    for (const row of rows) {
      leased.push({
        organizationId: row.organization_id,
        url: row.url,
        signingSecretSealed: row.signing_secret_sealed,
        cursorSeq: row.cursor_seq,
        lease: row.lease,
        attempt: row.failed_attempts + 1,
      });
    }
  }
  return leased;
}

/** A batch was accepted: the cursor moves past it. Only the attempt holding the lease settles. */
export async function markDelivered(
  db: Queryable,
  stream: LeasedStream,
  last: { seq: number; eventId: string },
): Promise<void> {
  await db.query(
    `UPDATE audit_streams
        SET cursor_seq = $3, last_delivered_event_id = $4, last_delivered_at = now(), failed_attempts = 0, leased_until = NULL, run_after = now()
      WHERE organization_id = $1 AND lease = $2`,
    [stream.organizationId, stream.lease, last.seq, last.eventId],
  );
}

/** An attempt failed: due again after `retryInSeconds`, or dead after `maxAttempts` failures of the batch. Returns whether it is now dead. */
export async function markFailed(
  db: Queryable,
  stream: LeasedStream,
  error: string,
  retryInSeconds: number,
  maxAttempts: number,
): Promise<boolean> {
  const { rows } = await db.query<{ dead: boolean }>(
    `UPDATE audit_streams
        SET failed_attempts = failed_attempts + 1, last_error = $3, last_error_at = now(), leased_until = NULL,
            run_after = now() + $4 * interval '1 second',
            dead_at = CASE WHEN failed_attempts + 1 >= $5 THEN clock.now ELSE NULL END
       FROM (SELECT now() AS now) clock
      WHERE organization_id = $1 AND lease = $2
      RETURNING dead_at IS NOT NULL AS dead`,
    [stream.organizationId, stream.lease, error, retryInSeconds, maxAttempts],
  );
  return rows[0]?.dead ?? false;
}

/** Gives a leased stream back unchanged (it had nothing to send after all). */
export async function release(db: Queryable, stream: LeasedStream): Promise<void> {
  await db.query('UPDATE audit_streams SET leased_until = NULL WHERE organization_id = $1 AND lease = $2', [
    stream.organizationId,
    stream.lease,
  ]);
}
