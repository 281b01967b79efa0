// Deletes expired memories. They left search, lists and reads when they expired (filtered at query
// time), so this only gives their space back and takes their postings out of the ranking statistics;
// it may run late, or in several processes at once: a memory already deleted is skipped.
import type { Database } from '../../db/database.ts';
import type { BackgroundWorker } from '../../platform/background.ts';
import { startPollLoop } from '../../platform/poll-loop.ts';
import { findExpired, lockBank } from './lifecycle-store.ts';
import { deleteMemory } from './store.ts';

/** Memories deleted per round; a full round is followed by another at once. */
const roundSize = 200;

/** Deletes up to `roundSize` expired memories, each in its own transaction; resolves how many. */
export async function pruneExpiredMemories(db: Database): Promise<{ found: number; pruned: number }> {
  const expired = await findExpired(db, roundSize);
  let pruned = 0;
  for (const memory of expired) {
    const key = { userId: memory.user_id, organizationId: memory.organization_id };
    // The bank's lock first, as every writer of the bank takes it.
    const done = await db.transaction(
      async (tx) => (await lockBank(tx, key)) !== undefined && deleteMemory(tx, key, memory.id, { onlyLive: false }),
    );
    if (done) pruned++;
  }
  return { found: expired.length, pruned };
}

export function memoryExpiryWorker(
  db: Database,
  intervalMs: number,
  log: { info(details: Record<string, unknown>, message: string): void },
): BackgroundWorker {
  return {
    name: 'memory-expiry',
    start() {
      const loop = startPollLoop({
        name: 'memory-expiry',
        intervalMs,
        async round() {
          const result = await pruneExpiredMemories(db);
          if (result.pruned > 0) log.info(result, 'memory: pruned expired memories');
          return result.found === roundSize;
        },
      });
      return { stop: () => loop.stop() };
    },
  };
}
