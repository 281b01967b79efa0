// The webhook ingress rules (spec operation 8): verify the per-connection secret, then durably claim
// the update and enqueue its processing in one transaction.
//
// Group commit: claims arriving while a claim transaction is in flight wait and go together in the
// next one (one INSERT for the claims, one for the jobs). Every caller is answered only after the
// transaction that holds its claim committed, so nothing is acknowledged that is not stored. Under
// light load a batch is a single claim; under heavy load batches grow and the per-update cost falls.

import type { Database } from '../../db/database.ts';
import type { JobQueue } from '../../platform/queue.ts';
import { createBatcher } from '../../platform/batcher.ts';
import { hashToken, safeEqual } from '../../platform/tokens.ts';
import type { MessengerStore } from './store.ts';
import { chatIdOf, orderingKeyOf } from './updates.ts';

export const DELIVERY_QUEUE = 'messenger-delivery';

export interface DeliveryJob {
  connectionId: string;
  updateId: number;
  chatId: string | null;
  update: Record<string, unknown>;
}

export type ClaimOutcome =
  | { accepted: true }
  | { accepted: false; reason: 'duplicate' | 'connection_disabled' | 'connection_not_found' };

export interface Ingress {
  /** True when `secret` is the connection's webhook secret (constant-time, against the stored hash). */
  verifySecret(connectionId: string, secret: string | undefined): Promise<boolean>;
  /** Claims the update and enqueues it; resolves once committed. Rejects when the database could not store it. */
  claim(connectionId: string, update: Record<string, unknown> & { update_id: number }): Promise<ClaimOutcome>;
  /** Forgets a connection's cached secret (after it was deleted here). */
  forget(connectionId: string): void;
}

interface ClaimRequest {
  connectionId: string;
  updateId: number;
  chatId: string | null;
  update: Record<string, unknown>;
}

const SECRET_CACHE_TTL_MS = 60_000;
const SECRET_CACHE_MAX = 10_000;
const MAX_BATCH = 500;
const OVERLAP_THRESHOLD = 8;
// A hash no secret has, so an unknown connection costs the same comparison as a known one.
const NO_SECRET_HASH = hashToken('no connection has this secret');

export function createIngress(deps: { db: Database; queue: JobQueue; store: MessengerStore; onEnqueued?: () => void }): Ingress {
  const { db, queue, store } = deps;
  // connection id -> webhook secret hash. The hash never changes for a connection, and the claim
  // transaction re-checks that the connection exists and is active, so a stale entry can never make
  // a deleted or disabled connection accept an update.
  const secretHashes = new Map<string, { hash: string; expires: number }>();
  // One transaction at a time on PGlite (one connection). On PostgreSQL a few overlap, so that the
  // round trips of one batch do not idle the stream; at most half the pool, the rest stays for
  // reads, the secret lookups and the workers.
  const poolSize = (db.pool as { options?: { max?: number } }).options?.max ?? 10;
  const claimInBatch = createBatcher<ClaimRequest, ClaimOutcome>({
    run: commitBatch,
    maxBatch: MAX_BATCH,
    maxInFlight: db.backend === 'pglite' ? 1 : Math.max(1, Math.min(4, Math.floor(poolSize / 2))),
    overlapThreshold: OVERLAP_THRESHOLD,
  });

  async function secretHashOf(connectionId: string): Promise<string | undefined> {
    const cached = secretHashes.get(connectionId);
    if (cached && cached.expires > Date.now()) return cached.hash;
    const row = await store.getConnectionById(db, connectionId);
    if (!row) {
      secretHashes.delete(connectionId);
      return undefined;
    }
    if (secretHashes.size >= SECRET_CACHE_MAX) secretHashes.delete(secretHashes.keys().next().value!);
    secretHashes.set(connectionId, { hash: row.webhook_secret_hash, expires: Date.now() + SECRET_CACHE_TTL_MS });
    return row.webhook_secret_hash;
  }

  async function commitBatch(batch: ClaimRequest[]): Promise<ClaimOutcome[]> {
    // The same update twice in one batch: the first one speaks for both.
    const firsts = new Map<string, ClaimRequest>();
    for (const item of batch) {
      const key = `${item.connectionId}:${item.updateId}`;
      if (!firsts.has(key)) firsts.set(key, item);
    }
    const unique = [...firsts.values()];
    // Database.transaction hears the client's 'error' event for the whole checkout, so a database
    // restart mid-claim fails this transaction (and the request gets a 503) instead of crashing.
    const result = await db.transaction(async (tx) => {
      const claimed = await store.claimUpdates(tx, unique);
      // Sorted by update_id so that, inside one batch, a chat's updates queue in update_id order.
      const jobs = unique
        .filter((item) => claimed.claimed.has(`${item.connectionId}:${item.updateId}`))
        .sort((a, b) => a.updateId - b.updateId)
        .map((item) => ({
          key: orderingKeyOf(item.connectionId, item.update, item.chatId),
          data: { connectionId: item.connectionId, updateId: item.updateId, chatId: item.chatId, update: item.update } satisfies DeliveryJob,
        }));
      await queue.enqueue(tx, DELIVERY_QUEUE, jobs);
      return claimed;
    });
    const outcomes = new Map<string, ClaimOutcome>();
    for (const [key, item] of firsts) {
      const connection = result.connections.get(item.connectionId);
      if (result.claimed.has(key)) outcomes.set(key, { accepted: true });
      else if (!connection) outcomes.set(key, { accepted: false, reason: 'connection_not_found' });
      else if (connection.status !== 'active') outcomes.set(key, { accepted: false, reason: 'connection_disabled' });
      else outcomes.set(key, { accepted: false, reason: 'duplicate' });
    }
    if (result.claimed.size > 0) deps.onEnqueued?.();
    return batch.map((item) => {
      const key = `${item.connectionId}:${item.updateId}`;
      const outcome = outcomes.get(key)!;
      if (firsts.get(key) === item || !outcome.accepted) return outcome;
      return { accepted: false, reason: 'duplicate' };
    });
  }

  return {
    async verifySecret(connectionId, secret) {
      const hash = await secretHashOf(connectionId);
      const matches = safeEqual(hashToken(secret ?? ''), hash ?? NO_SECRET_HASH);
      return matches && hash !== undefined && secret !== undefined && secret !== '';
    },

    claim(connectionId, update) {
      return claimInBatch({ connectionId, updateId: update.update_id, chatId: chatIdOf(update), update });
    },

    forget(connectionId) {
      secretHashes.delete(connectionId);
    },
  };
}
