// The delivery workers' share of the database, without HTTP: a backlog of BENCH_PENDING updates in
// BENCH_CHATS chats, then the loop a worker process runs at full concurrency (8 updates leased; each
// finished one settled, and one more taken from where the last take stopped), through the real queue
// store (queue-store.ts) on a fresh database. Reports the milliseconds per delivered update spent
// taking and settling. On PGlite these statements run in the server's own thread, between the
// webhook's claims (see README.md, "the take").
import { createQueueStore, type KeyCursor, type LeasedUpdate } from '../../src/modules/messenger/queue-store.ts';
import { openBacklog } from './backlog.ts';

const pending = Number(process.env.BENCH_PENDING ?? 15_000);
const chats = Number(process.env.BENCH_CHATS ?? 500);
const deliveries = Number(process.env.BENCH_DELIVERIES ?? 2_000);
const concurrency = 8;
const backends = (process.env.BENCH_BACKENDS ?? 'postgres,pglite').split(',') as ('postgres' | 'pglite')[];
const queue = createQueueStore();

console.log(
  `Delivery loop against a backlog of ${pending} updates in ${chats} chats, ${deliveries} deliveries, ${concurrency} leased at a time`,
);
for (const backend of backends) {
  const { db, close } = await openBacklog(backend, { pending, chats });
  try {
    let cursor: KeyCursor | null = null;
    const leased: LeasedUpdate[] = await queue.take(db, 'org_bench', concurrency, 60, null);
    let takeMs = 0;
    let settleMs = 0;
    let statements = 0;
    for (let i = 0; i < deliveries; i++) {
      const done = leased.shift()!;
      let started = performance.now();
      await queue.markDelivered(db, [
        {
          organizationId: done.organizationId,
          connectionId: done.connectionId,
          updateId: done.updateId,
          replyStatus: null,
          error: null,
        },
      ]);
      settleMs += performance.now() - started;
      started = performance.now();
      // As the delivery loop does: from the cursor, and round again from the first key at the end.
      let taken = await queue.take(db, 'org_bench', 1, 60, cursor);
      statements++;
      if (taken.length === 0 && cursor !== null) {
        taken = await queue.take(db, 'org_bench', 1, 60, null);
        statements++;
      }
      takeMs += performance.now() - started;
      const last = taken.at(-1);
      cursor = last ? { connectionId: last.connectionId, orderKey: last.orderKey } : null;
      leased.push(...taken);
    }
    console.log(
      `${backend}: per delivered update, take ${(takeMs / deliveries).toFixed(2)} ms (${(statements / deliveries).toFixed(2)} statements), settle ${(settleMs / deliveries).toFixed(2)} ms`,
    );
  } finally {
    await close();
  }
}
