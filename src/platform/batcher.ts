// Coalesces concurrent calls into batches, so that N requests arriving together cost the database one
// statement (or one transaction) instead of N. Every caller gets its own result or the batch's error;
// nothing is answered before the batch that holds it has finished.
//
// A batch starts on the next turn of the event loop after an item arrives, so the requests parsed in
// the same I/O phase share it. While batches are running, new items wait and go together in the next
// one; another batch starts beside running ones only when enough items wait (fewer, larger batches
// cost the database less per item) and never more than `maxInFlight` at once.
//
// A batch that fails fails all its callers, unless `isolateOn` says the error may be one item's own
// (bad data rather than a database that went away): then its items are run again one at a time, so
// that one caller's item does not fail the others.

export interface BatcherOptions<T, R> {
  /** Runs one batch; returns one result per item, in the items' order. */
  run(items: T[]): Promise<R[]>;
  /** Most items in one batch. */
  maxBatch: number;
  /** Most batches running at once. */
  maxInFlight: number;
  /** Items that must be waiting before a batch starts beside running ones (default 1: always). */
  overlapThreshold?: number;
  /** True when a batch's error may belong to one of its items; its items are then run one by one. */
  isolateOn?: (error: unknown) => boolean;
  /**
   * Items that may not share a run (a statement that must stay on one tenant): a batch's items are run
   * by key, one `run` per key, side by side (the pool bounds them), each failing or isolating alone.
   */
  groupBy?: (item: T) => string;
}

interface Waiting<T, R> {
  item: T;
  resolve(result: R): void;
  reject(error: unknown): void;
}

export type Batcher<T, R> = (item: T) => Promise<R>;

/**
 * How many batches of one kind may run at once on a pool of `connections`: half of it, so the other
 * half stays for every other statement (one on PGlite, whose pool is a single connection), and at
 * most `cap`.
 */
export function batchesInFlight(connections: number, cap = Number.POSITIVE_INFINITY): number {
  return Math.max(1, Math.min(cap, Math.floor(connections / 2)));
}

export function createBatcher<T, R>(options: BatcherOptions<T, R>): Batcher<T, R> {
  const { run, maxBatch, maxInFlight } = options;
  const overlapThreshold = options.overlapThreshold ?? 1;
  const waiting: Waiting<T, R>[] = [];
  let inFlight = 0;
  let scheduled = false;

  const canStart = () =>
    waiting.length > 0 && inFlight < maxInFlight && (inFlight === 0 || waiting.length >= overlapThreshold);

  function schedule() {
    if (scheduled || !canStart()) return;
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      while (canStart()) {
        inFlight += 1;
        void runGrouped(waiting.splice(0, maxBatch)).finally(() => {
          inFlight -= 1;
          schedule();
        });
      }
    });
  }

  async function runGrouped(batch: Waiting<T, R>[]) {
    const { groupBy } = options;
    if (!groupBy) return runBatch(batch);
    await Promise.all([...Map.groupBy(batch, (entry) => groupBy(entry.item)).values()].map(runBatch));
  }

  async function runBatch(batch: Waiting<T, R>[]) {
    let results: R[];
    try {
      results = await run(batch.map((entry) => entry.item));
    } catch (error) {
      if (batch.length > 1 && options.isolateOn?.(error)) {
        // One at a time, in the batch's slot: a rare path, and it keeps the in-flight bound.
        for (const entry of batch) await runBatch([entry]);
        return;
      }
      for (const entry of batch) entry.reject(error);
      return;
    }
    for (const [index, entry] of batch.entries()) entry.resolve(results[index] as R);
  }

  return (item) =>
    new Promise<R>((resolve, reject) => {
      waiting.push({ item, resolve, reject });
      schedule();
    });
}
