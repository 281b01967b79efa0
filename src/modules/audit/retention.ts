// Retention: events older than AUDIT_RETENTION_DAYS are pruned, chain by chain, each leaving a
// checkpoint so that the events kept still verify. A process that runs workers prunes once a day
// (and once AUDIT_RETENTION_FIRST_RUN_SECONDS after it starts); `orgplane audit prune` does it on demand. Pruning twice, or in
// two processes at once, is harmless: each chain is pruned under the lock its appends take.
import type { Database } from '../../db/database.ts';
import type { BackgroundWorker } from '../../platform/background.ts';
import { countJobRound } from '../../platform/job-metrics.ts';
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

export interface RetentionSettings {
  /** AUDIT_RETENTION_DAYS */
  days: number;
  /** Seconds from the start to the first pruning (AUDIT_RETENTION_FIRST_RUN_SECONDS); daily after it. */
  firstRunSeconds: number;
}

/** The pruning of a process that runs workers: once `firstRunSeconds` after it starts, then daily. */
export function retentionWorker(
  db: Database,
  settings: RetentionSettings,
  log: {
    info(details: Record<string, unknown>, message: string): void;
    error(details: Record<string, unknown>, message: string): void;
  },
): BackgroundWorker {
  return {
    name: 'audit-retention',
    start() {
      let running: Promise<void> | undefined;
      const run = () => {
        if (running) return;
        running = pruneAuditEvents(db, settings.days)
          .then(
            (result) => {
              countJobRound('audit-retention', false);
              log.info({ ...result, retentionDays: settings.days }, 'audit: pruned');
            },
            (error: unknown) => {
              countJobRound('audit-retention', true);
              log.error({ err: error }, 'audit: pruning failed');
            },
          )
          .finally(() => {
            running = undefined;
          });
      };
      const first = setTimeout(run, settings.firstRunSeconds * 1000);
      const daily = setInterval(run, dayMs);
      first.unref();
      daily.unref();
      return {
        async stop() {
          clearTimeout(first);
          clearInterval(daily);
          await running;
        },
      };
    },
  };
}
