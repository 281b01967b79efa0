// The webhook ingress rules (spec operation 8): verify the per-connection secret, then durably claim
// the update: its claim row is also its delivery queue entry (one write per update, migration 0504).
//
// Group commit: claims arriving while a claim statement is in flight wait and go together in the
// next one. A batch is one SQL statement (its own transaction) per organization whose claims it holds,
// run side by side; every caller is answered only after its statement returned, which is after its
// commit, so nothing is acknowledged that is not stored. Under light load a batch is a
// single claim; under heavy load batches grow and the per-update cost falls. A batch the database
// refuses for its data is claimed again one update at a time: an update it cannot store is answered
// 503 alone, and the updates that shared its batch are stored and acknowledged.

import type { Database } from '../../db/database.ts';
import { isDataError } from '../../db/errors.ts';
import { batchesInFlight, createBatcher } from '../../platform/batcher.ts';
import { hashToken, tokenMatchesHash } from '../../platform/tokens.ts';
import type { MessengerStore } from './store.ts';
import { chatIdOf, orderKeyOf } from './updates.ts';

export type ClaimOutcome =
  | { accepted: true }
  | { accepted: false; reason: 'duplicate' | 'connection_disabled' | 'connection_not_found' };

export interface Ingress {
  /**
   * True when `secret` is the connection's webhook secret (constant-time, against the stored hash).
   * Answers synchronously when the connection's hash is cached (the hot path: no promise per request).
   */
  verifySecret(connectionId: string, secret: string | undefined): boolean | Promise<boolean>;
  /**
   * Claims the update (which queues it); resolves once committed. Rejects when the database could not
   * store it. `body` is the update as received, which is what gets delivered.
   */
  claim(
    connectionId: string,
    update: Record<string, unknown> & { update_id: number },
    body: string,
  ): Promise<ClaimOutcome>;
  /** Forgets a connection's cached secret (after it was deleted here). */
  forget(connectionId: string): void;
}

interface KnownConnection {
  hash: Buffer;
  organizationId: string;
  expires: number;
}

interface ClaimRequest {
  organizationId: string;
  connectionId: string;
  updateId: number;
  chatId: string | null;
  orderKey: string;
  body: string;
}

const SECRET_CACHE_TTL_MS = 60_000;
const SECRET_CACHE_MAX = 10_000;
const MAX_BATCH = 500;
const OVERLAP_THRESHOLD = 16;
// A hash no secret has, so an unknown connection costs the same comparison as a known one.
const NO_SECRET_HASH = Buffer.from(hashToken('no connection has this secret'), 'hex');

export function createIngress(deps: { db: Database; store: MessengerStore; onEnqueued?: () => void }): Ingress {
  const { db, store } = deps;
  // connection id -> its webhook secret hash and organization. Neither ever changes for a connection,
  // and the claim statement re-checks that the connection exists and is active, so a stale entry can
  // never make a deleted or disabled connection accept an update.
  const connections = new Map<string, KnownConnection>();
  // One claim statement at a time on PGlite (one connection). On PostgreSQL a few overlap, so that
  // one batch's round trip does not idle the stream; at most half the pool, the rest stays for
  // reads, the secret lookups and the workers. A second one starts only when 16 claims wait
  // (bench/webhook: 8 and 32 did no better, batches of ~25-35 at 100 connections).
  const claimInBatch = createBatcher<ClaimRequest, ClaimOutcome>({
    run: commitBatch,
    maxBatch: MAX_BATCH,
    maxInFlight: batchesInFlight(db.maxConnections, 4),
    overlapThreshold: OVERLAP_THRESHOLD,
    isolateOn: isDataError,
    // A claim statement stores one organization's updates (one shard on Citus, where its lock runs).
    groupBy: (request) => request.organizationId,
  });

  async function loadConnection(connectionId: string): Promise<KnownConnection | undefined> {
    const row = await store.findConnectionByRoute(db, connectionId);
    const hash = row && Buffer.from(row.webhook_secret_hash, 'hex');
    // Not a SHA-256 digest: no secret can match it (and the comparison needs equal lengths).
    if (!row || !hash || hash.length !== NO_SECRET_HASH.length) {
      connections.delete(connectionId);
      return undefined;
    }
    if (connections.size >= SECRET_CACHE_MAX) connections.delete(connections.keys().next().value!);
    const known = { hash, organizationId: row.organization_id, expires: Date.now() + SECRET_CACHE_TTL_MS };
    connections.set(connectionId, known);
    return known;
  }

  function decide(secret: string | undefined, stored: Buffer | undefined): boolean {
    // An empty or absent secret never matches, but still costs the same comparison.
    const matches = tokenMatchesHash(secret ?? '', stored ?? NO_SECRET_HASH);
    return matches && stored !== undefined && secret !== undefined && secret !== '';
  }

  async function commitBatch(batch: ClaimRequest[]): Promise<ClaimOutcome[]> {
    // The same update twice in one batch: the first one speaks for both.
    const firsts = new Map<string, ClaimRequest>();
    for (const item of batch) {
      const key = `${item.connectionId}:${item.updateId}`;
      if (!firsts.has(key)) firsts.set(key, item);
    }
    const unique = [...firsts.values()];
    // One statement: the claims commit together, before it returns.
    const result = await store.claim(db, batch[0]!.organizationId, unique);
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
    verifySecret(connectionId, secret) {
      const cached = connections.get(connectionId);
      if (cached && cached.expires > Date.now()) return decide(secret, cached.hash);
      return loadConnection(connectionId).then((known) => decide(secret, known?.hash));
    },

    claim(connectionId, update, body) {
      const chatId = chatIdOf(update);
      const request = { connectionId, updateId: update.update_id, chatId, orderKey: orderKeyOf(update, chatId), body };
      // Known since the secret was verified; an entry past its time still names the right organization.
      const known = connections.get(connectionId);
      if (known) return claimInBatch({ ...request, organizationId: known.organizationId });
      return loadConnection(connectionId).then((found): Promise<ClaimOutcome> | ClaimOutcome =>
        found
          ? claimInBatch({ ...request, organizationId: found.organizationId })
          : { accepted: false, reason: 'connection_not_found' },
      );
    },

    forget(connectionId) {
      connections.delete(connectionId);
    },
  };
}
