import assert from 'node:assert/strict';
import { test } from 'node:test';
import { batchesInFlight, createBatcher } from '../../src/platform/batcher.ts';

/** A batch runner whose batches finish only when the test says so. */
function controlledRunner() {
  const batches: { items: number[]; finish(error?: Error): void }[] = [];
  const run = (items: number[]) =>
    new Promise<string[]>((resolve, reject) => {
      batches.push({
        items,
        finish: (error) => (error ? reject(error) : resolve(items.map((item) => `result ${item}`))),
      });
    });
  return { batches, run };
}

// A few turns of the event loop: enough for a finished batch to start the next one.
const nextTurn = async () => {
  for (let turn = 0; turn < 3; turn += 1) await new Promise((resolve) => setImmediate(resolve));
};

test('items that arrive together share one batch, and each caller gets its own result', async () => {
  const { batches, run } = controlledRunner();
  const call = createBatcher({ run, maxBatch: 100, maxInFlight: 1 });
  const answers = Promise.all([call(1), call(2), call(3)]);
  await nextTurn();
  assert.deepEqual(
    batches.map((batch) => batch.items),
    [[1, 2, 3]],
  );
  batches[0]!.finish();
  assert.deepEqual(await answers, ['result 1', 'result 2', 'result 3']);
});

test('items arriving while a batch runs wait and go together in the next one', async () => {
  const { batches, run } = controlledRunner();
  const call = createBatcher({ run, maxBatch: 100, maxInFlight: 1 });
  const first = call(1);
  await nextTurn();
  const later = Promise.all([call(2), call(3)]);
  await nextTurn();
  assert.equal(batches.length, 1, 'no second batch while the first runs and maxInFlight is 1');
  batches[0]!.finish();
  assert.equal(await first, 'result 1');
  await nextTurn();
  assert.deepEqual(batches[1]!.items, [2, 3]);
  batches[1]!.finish();
  assert.deepEqual(await later, ['result 2', 'result 3']);
});

test('a batch is at most maxBatch items; a second batch overlaps only when enough items wait', async () => {
  const { batches, run } = controlledRunner();
  const call = createBatcher({ run, maxBatch: 2, maxInFlight: 3, overlapThreshold: 2 });
  const all = Promise.all([1, 2, 3, 4, 5].map((item) => call(item)));
  await nextTurn();
  // [1,2] starts; [3,4] overlaps because 3 items waited; [5] alone is below the threshold.
  assert.deepEqual(
    batches.map((batch) => batch.items),
    [
      [1, 2],
      [3, 4],
    ],
  );
  batches[0]!.finish();
  await nextTurn();
  assert.equal(batches.length, 2, '[5] waits: one item is below the threshold while [3,4] runs');
  batches[1]!.finish();
  await nextTurn();
  assert.deepEqual(batches[2]!.items, [5]);
  batches[2]!.finish();
  assert.deepEqual(
    await all,
    [1, 2, 3, 4, 5].map((item) => `result ${item}`),
  );
});

test('a failed batch rejects every caller in it and not the callers of other batches', async () => {
  const { batches, run } = controlledRunner();
  const call = createBatcher({ run, maxBatch: 100, maxInFlight: 1 });
  const failing = [call(1), call(2)].map((promise) =>
    promise.then(
      () => 'resolved',
      (error: Error) => error.message,
    ),
  );
  await nextTurn();
  const next = call(3);
  batches[0]!.finish(new Error('database went away'));
  assert.deepEqual(await Promise.all(failing), ['database went away', 'database went away']);
  await nextTurn();
  batches[1]!.finish();
  assert.equal(await next, 'result 3');
});

test("a batch failing with an error isolateOn says is an item's own is run again item by item: only that caller fails", async () => {
  const runs: number[][] = [];
  const refused = Object.assign(new Error('item 2 refused'), { itemsOwn: true });
  const call = createBatcher<number, string>({
    async run(items) {
      runs.push(items);
      if (items.includes(2)) throw refused;
      return items.map((item) => `result ${item}`);
    },
    maxBatch: 100,
    maxInFlight: 1,
    isolateOn: (error) => (error as { itemsOwn?: boolean }).itemsOwn === true,
  });
  const answers = await Promise.all([1, 2, 3].map((item) => call(item).catch((error: Error) => error.message)));
  assert.deepEqual(answers, ['result 1', 'item 2 refused', 'result 3']);
  assert.deepEqual(runs, [[1, 2, 3], [1], [2], [3]], 'the batch, then each item alone, one after another');
});

test('an error isolateOn does not claim fails the whole batch, which is not run again', async () => {
  const runs: number[][] = [];
  const call = createBatcher<number, string>({
    async run(items) {
      runs.push(items);
      throw new Error('database went away');
    },
    maxBatch: 100,
    maxInFlight: 1,
    isolateOn: () => false,
  });
  const answers = await Promise.all([1, 2].map((item) => call(item).catch((error: Error) => error.message)));
  assert.deepEqual(answers, ['database went away', 'database went away']);
  assert.deepEqual(runs, [[1, 2]]);
});

test("with groupBy, a batch runs once per key, side by side, and one key's failure is its own", async () => {
  const runs: string[][] = [];
  let running = 0;
  let mostRunning = 0;
  const call = createBatcher<string, string>({
    async run(items) {
      runs.push(items);
      running += 1;
      mostRunning = Math.max(mostRunning, running);
      await new Promise((resolve) => setTimeout(resolve, 10));
      running -= 1;
      if (items.some((item) => item.startsWith('b'))) throw new Error('tenant b refused');
      return items.map((item) => `stored ${item}`);
    },
    maxBatch: 100,
    maxInFlight: 1,
    groupBy: (item) => item[0]!,
  });
  const answers = await Promise.all(
    ['a1', 'b1', 'a2', 'c1', 'b2'].map((item) => call(item).catch((error: Error) => error.message)),
  );
  assert.deepEqual(answers, ['stored a1', 'tenant b refused', 'stored a2', 'stored c1', 'tenant b refused']);
  assert.deepEqual(runs, [['a1', 'a2'], ['b1', 'b2'], ['c1']], 'one run per key, the items in arrival order');
  assert.equal(mostRunning, 3, 'the keys of one batch ran side by side');
});

test("batches in flight: half the pool, at least one (PGlite's single connection), at most the cap", () => {
  assert.deepEqual(
    [1, 2, 3, 10, 20].map((connections) => batchesInFlight(connections)),
    [1, 1, 1, 5, 10],
  );
  assert.deepEqual(
    [1, 10, 20].map((connections) => batchesInFlight(connections, 4)),
    [1, 4, 4],
  );
});
