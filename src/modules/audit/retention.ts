// Retention: events older than AUDIT_RETENTION_DAYS are pruned, chain by chain, each leaving a
// checkpoint so that the events kept still verify. A process that runs workers prunes once a day
// (and once shortly after it starts); `orgplane audit prune` does it on demand. Pruning twice, or in
// two processes at once, is harmless: each chain is pruned under the lock its appends take.
import type { Database } from '../../db/database.ts';
import * as store from './store.ts';

const dayMs = 24 * 60 * 60 * 1000;

export async function pruneAuditEvents(
  db: Database,
  retentionDays: number,
  now = new Date(),
): Promise<{ chains: number; pruned: number }> {
  const before = new Date(now.getTime() - retentionDays * dayMs);
  let pruned = 0;
  const chains = await store.chainsWithEventsBefore(db, before);
  for (const chainId of chains) pruned += await db.transaction((tx) => store.pruneChain(tx, chainId, before));
  return { chains: chains.length, pruned };
}

/** Prunes shortly after start and then daily, until stopped. */
export function schedulePruning(db: Database, retentionDays: number, onError: (error: unknown) => void): () => void {
  const run = () => void pruneAuditEvents(db, retentionDays).catch(onError);
  const first = setTimeout(run, 60_000);
  const daily = setInterval(run, dayMs);
  first.unref();
  daily.unref();
  return () => {
    clearTimeout(first);
    clearInterval(daily);
  };
}
