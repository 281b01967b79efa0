// Coalesces concurrent calls into batches, so that N requests arriving together cost the database one
// statement (or one transaction) instead of N. Every caller gets its own result or the batch's error;
// nothing is answered before the batch that holds it has finished.
//
// A batch starts on the next turn of the event loop after an item arrives, so the requests parsed in
// the same I/O phase share it. While batches are running, new items wait and go together in the next
// one; another batch starts beside running ones only when enough items wait (fewer, larger batches
// cost the database less per item) and never more than `maxInFlight` at once.

export interface BatcherOptions<T, R> {
  /** Runs one batch; returns one result per item, in the items' order. */
  run(items: T[]): Promise<R[]>;
  /** Most items in one batch. */
  maxBatch: number;
  /** Most batches running at once. */
  maxInFlight: number;
  /** Items that must be waiting before a batch starts beside running ones (default 1: always). */
  overlapThreshold?: number;
}

interface Waiting<T, R> {
  item: T;
  resolve(result: R): void;
  reject(error: unknown): void;
}

export type Batcher<T, R> = (item: T) => Promise<R>;

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
        void runBatch(waiting.splice(0, maxBatch)).finally(() => {
          inFlight -= 1;
          schedule();
        });
      }
    });
  }

  async function runBatch(batch: Waiting<T, R>[]) {
    let results: R[];
    try {
      results = await run(batch.map((entry) => entry.item));
    } catch (error) {
      for (const entry of batch) entry.reject(error);
      return;
    }
    batch.forEach((entry, index) => entry.resolve(results[index] as R));
  }

  return (item) =>
    new Promise<R>((resolve, reject) => {
      waiting.push({ item, resolve, reject });
      schedule();
    });
}
