// The delivery workers of one process: take due updates from the claims table (queue-store.ts), up to
// the free capacity, attempt each, and settle it there. Taken again at once while there was work; when
// there was none, after the polling interval or when woken (an update accepted by this process, or a
// delivery finished, which frees its key).
//
// A take is one organization's. The loop goes round the organizations that have updates pending: one
// that filled its take keeps its turn after the others, one that did not leaves the round, and when the
// round is empty the organizations are looked up again (at most once per take, so an organization whose
// keys are all busy costs no more than a take and that lookup).
//
// Attempts and retries: an update's attempt is leased for MESSENGER_DELIVERY_EXPIRE_SECONDS; a worker
// that dies mid-delivery leaves the lease to expire, and then any worker takes the update again (at
// least once). A failed attempt is retried after about MESSENGER_DELIVERY_RETRY_DELAY_SECONDS, doubling
// each time (with jitter) up to MESSENGER_DELIVERY_MAX_RETRY_DELAY_SECONDS; after the last attempt the
// update is `dead` and its key moves on. Successes are settled together (group commit).

import type { DeliverySettings } from '../../config.ts';
import type { Database } from '../../db/database.ts';
import { batchesInFlight, createBatcher } from '../../platform/batcher.ts';
import { startPollLoop } from '../../platform/poll-loop.ts';
import { retryDelaySeconds } from '../../platform/signed-delivery.ts';
import type { DeliveredMark, KeyCursor, LeasedUpdate, QueueStore } from './queue-store.ts';

export interface DeliveryLoopDeps {
  db: Database;
  queueStore: QueueStore;
  /** Delivers the update; resolves with its reply's outcome, rejects when the attempt failed. */
  attempt(update: LeasedUpdate): Promise<{ status: 'sent' | 'failed' | null; error: string | null }>;
  /** lastError of an update to be retried, and of a dead-lettered one. */
  retryingError(attempt: number, error: unknown): string;
  deadError(attempts: number, error: unknown): string;
  settings: DeliverySettings;
  log?: { warn(obj: object, msg: string): void };
}

export interface DeliveryLoop {
  wake(): void;
  /** Stops taking updates and waits for the attempts in hand. */
  stop(): Promise<void>;
}

/** The furthest key of a take (a take's rows come back in no order): where the next one resumes. */
function lastKey(updates: LeasedUpdate[]): KeyCursor | null {
  let last: KeyCursor | null = null;
  for (const { connectionId, orderKey } of updates) {
    if (!last || connectionId > last.connectionId || (connectionId === last.connectionId && orderKey > last.orderKey))
      last = { connectionId, orderKey };
  }
  return last;
}

export function startDeliveryLoop(deps: DeliveryLoopDeps): DeliveryLoop {
  const { db, queueStore, settings } = deps;
  const concurrency = Math.max(1, settings.concurrency);
  const pollMs = Math.max(500, settings.pollingIntervalSeconds * 1000);
  const inFlight = new Set<Promise<void>>();
  // The organizations still to visit in this round, and where each one's walk of its keys resumes.
  let round: string[] = [];
  const cursors = new Map<string, KeyCursor | null>();

  const markDelivered = createBatcher<DeliveredMark, void>({
    run: async (items) => {
      await queueStore.markDelivered(db, items);
      return items.map(() => undefined);
    },
    maxBatch: 500,
    maxInFlight: batchesInFlight(db.maxConnections, 2),
  });

  /** Takes up to `want` of the organization's updates, going round its keys from where its last take stopped. */
  async function takeOf(organizationId: string, want: number): Promise<LeasedUpdate[]> {
    const cursor = cursors.get(organizationId) ?? null;
    const taken = await queueStore.take(db, organizationId, want, settings.expireInSeconds, cursor);
    let next = lastKey(taken);
    if (taken.length < want && cursor !== null) {
      // The end of its keys: round again from the first (a leased key is not taken twice).
      const more = await queueStore.take(db, organizationId, want - taken.length, settings.expireInSeconds, null);
      taken.push(...more);
      next = lastKey(more);
    }
    cursors.set(organizationId, next);
    return taken;
  }

  /** Takes up to `free` updates, from the organizations of the round in turn. */
  async function take(free: number): Promise<LeasedUpdate[]> {
    const taken: LeasedUpdate[] = [];
    const visited = new Set<string>();
    let lookedUp = false;
    while (taken.length < free) {
      if (round.length === 0) {
        if (lookedUp) break;
        lookedUp = true;
        const pending = new Set(await queueStore.organizationsWithPendingUpdates(db));
        for (const organizationId of cursors.keys()) if (!pending.has(organizationId)) cursors.delete(organizationId);
        round = [...pending].filter((organizationId) => !visited.has(organizationId));
        continue;
      }
      const organizationId = round.shift()!;
      visited.add(organizationId);
      const want = free - taken.length;
      const got = await takeOf(organizationId, want);
      taken.push(...got);
      if (got.length === want) round.push(organizationId);
    }
    return taken;
  }

  async function settle(update: LeasedUpdate): Promise<void> {
    try {
      const reply = await deps.attempt(update);
      await markDelivered({
        organizationId: update.organizationId,
        connectionId: update.connectionId,
        updateId: update.updateId,
        replyStatus: reply.status,
        error: reply.error,
      });
      return;
    } catch (error) {
      const { connectionId, updateId, attempt } = update;
      try {
        if (attempt < settings.maxAttempts) {
          await queueStore.markFailed(
            db,
            update,
            'retrying',
            deps.retryingError(attempt, error),
            retryDelaySeconds(settings, attempt),
          );
        } else {
          await queueStore.markFailed(db, update, 'dead', deps.deadError(attempt, error), 0);
          deps.log?.warn({ connectionId, updateId, attempts: attempt }, 'messenger: update dead-lettered');
        }
      } catch (settleError) {
        // The lease expires and the update is taken again: nothing is lost, only delayed.
        deps.log?.warn(
          { err: settleError, connectionId, updateId },
          'messenger: a delivery attempt could not be settled',
        );
      }
    }
  }

  /** Takes what there is room for and starts its attempts; true when the take filled the room (take again at once). */
  async function takeAndStart(): Promise<boolean> {
    const free = concurrency - inFlight.size;
    if (free <= 0) return false;
    let taken: LeasedUpdate[] = [];
    try {
      taken = await take(free);
    } catch (error) {
      deps.log?.warn({ err: error }, 'messenger: taking deliveries failed');
      // A failed round in /metrics; the loop waits its interval, as after an empty take.
      throw error;
    }
    for (const update of taken) {
      const task = settle(update).finally(() => {
        inFlight.delete(task);
        // A finished attempt frees capacity and its key: look again.
        loop.wake();
      });
      inFlight.add(task);
    }
    return taken.length > 0 && taken.length === free;
  }

  const loop = startPollLoop({ name: 'messenger-delivery', intervalMs: pollMs, round: takeAndStart });
  return {
    wake: loop.wake,
    async stop() {
      await loop.stop();
      await Promise.allSettled([...inFlight]);
    },
  };
}
