// SQL of the delivery queue, which is the claims table itself (migration 0504): an accepted update's
// row is its queue entry. A worker takes due entries with FOR UPDATE SKIP LOCKED and leases them;
// it settles an attempt on the row (delivered, retrying with a due time, dead). A take walks one
// organization's entries (a lock, and a recursive walk, run on Citus only within one tenant); which
// organizations have entries pending is found by a plain read across them (ORGANIZATIONS_PENDING).

import type { Database, Queryable } from '../../db/database.ts';

/** An update a worker has leased for one delivery attempt, with what the attempt needs. */
export interface LeasedUpdate {
  organizationId: string;
  connectionId: string;
  updateId: number;
  chatId: string | null;
  orderKey: string;
  /** This attempt's number (1 for the first); it fences the attempt's settle. */
  attempt: number;
  body: string;
  deliveryUrl: string;
  deliverySecretSealed: string;
  botTokenSealed: string;
}

/** Where a take resumes, so that every key gets its turn (the scan goes round the keys). */
export interface KeyCursor {
  connectionId: string;
  orderKey: string;
}

// The heads of the keys (each key's earliest pending update), found by skipping from key to key
// through the pending index rather than reading every pending row, starting after the cursor; then,
// of those heads, the ones due, not leased and in a key no attempt holds, locked and leased. A key
// waits while its head waits for a retry: one chat's updates go one at a time, in update_id order.
// Each head is checked on its own, in a subquery the planner cannot flatten (OFFSET 0), with the busy-
// key check inside it: the walk then stops as soon as `limit` heads are taken, and the check is one
// probe of the small leased index per head. Written as one join, the planner (PGlite's always, as it
// has no statistics) read every key's head and every pending row first: a take of one update cost
// 5.6 ms on PGlite and 3.6 ms on PostgreSQL with 15,000 pending in 500 chats, 1.7 and 1.4 ms now
// (bench/webhook/README.md, "the take").
// Leases and settles commit without waiting for their WAL flush (synchronous_commit off for that
// transaction alone, set inside the statement so it stays one round trip). What a crash can lose is
// the last few hundred milliseconds of them: a lease (the update is taken again) or a delivered mark
// (it is delivered again), which the at-least-once contract allows; the claim that acknowledged the
// update stays a synchronous commit. The flush was half of a worker's database time: the drain of
// 10,000 updates went from 552-567 to 940-1,191 a second (bench/webhook/drain.ts, README.md).
// The take is a SELECT over its UPDATE (a CTE) with the setting in its select list: Citus plans an
// UPDATE whose FROM holds a volatile function in steps, and refuses the recursive walk there; the
// SELECT goes whole to the organization's node, setting included (test/citus).
const WITHOUT_WAITING_FOR_FLUSH = `(SELECT set_config('synchronous_commit', 'off', true)) AS commit_without_flush`;

const TAKE = `WITH RECURSIVE heads AS (
   (SELECT connection_id, order_key, update_id FROM messenger_updates
     WHERE organization_id = $5 AND status IN ('queued', 'retrying') AND order_key IS NOT NULL AND (connection_id, order_key) > ($3::text, $4::text)
     ORDER BY connection_id, order_key, update_id LIMIT 1)
   UNION ALL
   SELECT n.connection_id, n.order_key, n.update_id FROM heads h CROSS JOIN LATERAL (
     SELECT connection_id, order_key, update_id FROM messenger_updates
      WHERE organization_id = $5 AND status IN ('queued', 'retrying') AND order_key IS NOT NULL AND (connection_id, order_key) > (h.connection_id, h.order_key)
      ORDER BY connection_id, order_key, update_id LIMIT 1) n
 ), picked AS (
   SELECT u.organization_id, u.connection_id, u.update_id FROM heads h
     CROSS JOIN LATERAL (
       SELECT x.organization_id, x.connection_id, x.update_id FROM messenger_updates x
        -- order_key too, though (connection_id, update_id) is the key: with it the pending index is
        -- probed by its whole prefix; without it the planner chose that index anyway and read every
        -- pending entry of the connection for each head (36.8 ms against 7.9 ms for a take of 8 with
        -- 13,000 pending in 500 chats, bench/webhook/README.md).
        WHERE x.organization_id = $5 AND x.connection_id = h.connection_id AND x.order_key = h.order_key AND x.update_id = h.update_id
          AND x.status IN ('queued', 'retrying') AND x.body IS NOT NULL AND x.run_after <= now()
          AND (x.leased_until IS NULL OR x.leased_until <= now())
          AND NOT EXISTS (
            SELECT 1 FROM messenger_updates l
             WHERE l.organization_id = $5 AND l.connection_id = h.connection_id AND l.order_key = h.order_key
               AND l.leased_until IS NOT NULL AND l.status IN ('queued', 'retrying') AND l.leased_until > now())
        OFFSET 0) u
    LIMIT $1
    FOR UPDATE OF u SKIP LOCKED
 ), taken AS (
   UPDATE messenger_updates m
      SET attempts = m.attempts + 1, last_attempt_at = now(), leased_until = now() + $2 * interval '1 second'
     FROM picked, messenger_connections c
    WHERE m.organization_id = $5 AND m.organization_id = picked.organization_id AND m.connection_id = picked.connection_id AND m.update_id = picked.update_id
      AND c.organization_id = $5 AND c.id = m.connection_id
   RETURNING m.organization_id, m.connection_id, m.update_id, m.chat_id, m.order_key, m.attempts, m.body, c.delivery_url, c.delivery_secret_sealed, c.bot_token_sealed
 )
 SELECT taken.*, ${WITHOUT_WAITING_FOR_FLUSH} FROM taken`;

// The organizations with pending updates, for the workers to visit one by one: a plain read (no lock)
// across every organization, one probe of the pending index per connection.
const ORGANIZATIONS_PENDING = `SELECT c.organization_id FROM messenger_connections c
  WHERE EXISTS (SELECT 1 FROM messenger_updates u
                 WHERE u.organization_id = c.organization_id AND u.connection_id = c.id
                   AND u.status IN ('queued', 'retrying') AND u.order_key IS NOT NULL)
  GROUP BY c.organization_id`;

const DELIVERED = `UPDATE messenger_updates m
    SET status = 'delivered', delivered_at = now(), reply_status = v.reply_status, last_error = v.last_error, body = NULL, leased_until = NULL
   FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::text[]) AS v (organization_id, connection_id, update_id, reply_status, last_error),
        ${WITHOUT_WAITING_FOR_FLUSH}
  WHERE m.organization_id = v.organization_id AND m.connection_id = v.connection_id AND m.update_id = v.update_id`;

interface TakenRow {
  organization_id: string;
  connection_id: string;
  update_id: string;
  chat_id: string | null;
  order_key: string;
  attempts: number;
  body: string;
  delivery_url: string;
  delivery_secret_sealed: string;
  bot_token_sealed: string;
}

/** An attempt that delivered its update, to be marked (several together). */
export interface DeliveredMark {
  organizationId: string;
  connectionId: string;
  updateId: number;
  replyStatus: 'sent' | 'failed' | null;
  error: string | null;
}

export function createQueueStore() {
  return {
    /** The organizations that have updates pending (due now or later). */
    async organizationsWithPendingUpdates(db: Database): Promise<string[]> {
      const { rows } = await db.prepared<{ organization_id: string }>(
        'messenger_organizations_pending',
        ORGANIZATIONS_PENDING,
        [],
      );
      return rows.map((row) => row.organization_id);
    },

    /**
     * Leases up to `limit` due updates of the organization's free keys after `after` (from its first
     * key when null).
     */
    async take(
      db: Database,
      organizationId: string,
      limit: number,
      leaseSeconds: number,
      after: KeyCursor | null,
    ): Promise<LeasedUpdate[]> {
      const { rows } = await db.prepared<TakenRow>('messenger_take', TAKE, [
        limit,
        leaseSeconds,
        after?.connectionId ?? '',
        after?.orderKey ?? '',
        organizationId,
      ]);
      return rows.map((row) => ({
        organizationId: row.organization_id,
        connectionId: row.connection_id,
        updateId: Number(row.update_id),
        chatId: row.chat_id,
        orderKey: row.order_key,
        attempt: row.attempts,
        body: row.body,
        deliveryUrl: row.delivery_url,
        deliverySecretSealed: row.delivery_secret_sealed,
        botTokenSealed: row.bot_token_sealed,
      }));
    },

    /** Marks updates delivered (whatever attempt delivered them) and drops their kept bodies. */
    async markDelivered(db: Database, items: DeliveredMark[]): Promise<void> {
      await db.prepared('messenger_delivered', DELIVERED, [
        items.map((item) => item.organizationId),
        items.map((item) => item.connectionId),
        items.map((item) => item.updateId),
        items.map((item) => item.replyStatus),
        items.map((item) => item.error),
      ]);
    },

    /**
     * Ends a failed attempt: `retrying` (due again after `retryInSeconds`) or `dead`. Only the attempt
     * that holds the update settles it: a late answer of an attempt taken over since changes nothing.
     */
    async markFailed(
      db: Queryable,
      update: Pick<LeasedUpdate, 'organizationId' | 'connectionId' | 'updateId' | 'attempt'>,
      status: 'retrying' | 'dead',
      error: string,
      retryInSeconds: number,
    ): Promise<void> {
      await db.query(
        `UPDATE messenger_updates
            SET status = $4, last_error = $5, leased_until = NULL, run_after = now() + $6 * interval '1 second'
          WHERE organization_id = $7 AND connection_id = $1 AND update_id = $2 AND attempts = $3 AND status <> 'delivered'`,
        [update.connectionId, update.updateId, update.attempt, status, error, retryInSeconds, update.organizationId],
      );
    },
  };
}

export type QueueStore = ReturnType<typeof createQueueStore>;
