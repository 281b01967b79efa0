// How fast the delivery workers drain a backlog, and where their time goes: BENCH_PENDING updates in
// BENCH_CHATS chats on a fresh database, then the real delivery loop and processor (delivery-loop.ts,
// worker.ts: lease, signed POST through the guarded client, settle) delivering to the benchmark's
// receiver in its own process, until nothing is pending. Reports updates/s and, per delivered update,
// the wall time the loop spent waiting on its takes, the attempts' own time (summed over the concurrent
// attempts, so it can exceed the wall time), the number of take statements, and the CPU the drain cost:
// this process (which runs the loop and the attempts, as the server does), every postgres process (on
// PGlite: included in this process), and the receiver.
//
//   node_modules/.bin/node bench/webhook/drain.ts            (both backends; BENCH_BACKENDS=postgres for one)
//   BENCH_CONCURRENCY=8,32 ...                               (MESSENGER_DELIVERY_CONCURRENCY values to try)
import { randomBytes } from 'node:crypto';
import { loadConfig } from '../../src/config.ts';
import { createOutboundClient } from '../../src/platform/outbound.ts';
import { createSecretBox } from '../../src/platform/secrets.ts';
import { startDeliveryLoop } from '../../src/modules/messenger/delivery-loop.ts';
import { createBotApi } from '../../src/modules/messenger/platform.ts';
import { createQueueStore } from '../../src/modules/messenger/queue-store.ts';
import { createDeliveryProcessor } from '../../src/modules/messenger/worker.ts';
import { postgresCpuMicros, processCpuMicros } from '../support/cpu.ts';
import { spawnServer } from '../support/servers.ts';
import { openBacklog } from './backlog.ts';

const pending = Number(process.env.BENCH_PENDING ?? 10_000);
const chats = Number(process.env.BENCH_CHATS ?? 500);
const concurrencies = (process.env.BENCH_CONCURRENCY ?? '8').split(',').map(Number);
// Versions of each pending row left dead before the drain (as lease, retry and claim updates leave
// them after a load round, before autovacuum came by); 0: a vacuumed table.
const deadVersions = Number(process.env.BENCH_DEAD_VERSIONS ?? 0);
const backends = (process.env.BENCH_BACKENDS ?? 'postgres,pglite').split(',') as ('postgres' | 'pglite')[];

const receiver = await spawnServer(['bench/webhook/receiver.ts'], {});
const secrets = createSecretBox(randomBytes(32).toString('base64'));
const outbound = createOutboundClient({ allowedPrivateNetworks: ['127.0.0.0/8'] });
const baseSettings = loadConfig({}).messengerDelivery;

console.log(
  `Draining ${pending} updates in ${chats} chats (${deadVersions} dead versions of each) to a receiver in its own process`,
);
console.log(
  '| backend | concurrency | updates/s | take wait ms / update | takes / update | attempt ms / update (summed) | settle ms / update (summed) | CPU us / update: loop process, postgres, receiver |',
);
console.log('|---|---|---|---|---|---|---|---|');
try {
  for (const backend of backends) {
    for (const concurrency of concurrencies) {
      const { db, close } = await openBacklog(backend, {
        pending,
        chats,
        deliveryUrl: `${receiver.url}/deliver`,
        botTokenSealed: secrets.seal('1:bench-token'),
        deliverySecretSealed: secrets.seal('bench-delivery-secret'),
      });
      try {
        if (backend === 'postgres') await db.query('VACUUM ANALYZE messenger_updates');
        for (let i = 0; i < deadVersions; i++)
          await db.query(`UPDATE messenger_updates SET leased_until = now() - interval '1 hour'`);

        const settings = { ...baseSettings, concurrency };
        const processor = createDeliveryProcessor({
          secrets,
          outbound,
          settings,
          botApi: createBotApi({ apiRoot: 'http://127.0.0.1:9', outbound }),
        });
        const queueStore = createQueueStore();
        const spent = { takeMs: 0, takes: 0, attemptMs: 0, settleMs: 0 };
        const timedQueueStore: typeof queueStore = {
          ...queueStore,
          async take(...args) {
            const started = performance.now();
            try {
              return await queueStore.take(...args);
            } finally {
              spent.takeMs += performance.now() - started;
              spent.takes++;
            }
          },
          async markDelivered(...args) {
            const started = performance.now();
            try {
              return await queueStore.markDelivered(...args);
            } finally {
              spent.settleMs += (performance.now() - started) * args[1].length;
            }
          },
        };
        const started = performance.now();
        const cpuBefore = {
          own: processCpuMicros(process.pid) ?? 0,
          postgres: postgresCpuMicros(),
          receiver: processCpuMicros(receiver.child.pid!) ?? 0,
        };
        const loop = startDeliveryLoop({
          db,
          queueStore: timedQueueStore,
          settings,
          attempt: async (update) => {
            const begun = performance.now();
            try {
              return await processor.attempt(update);
            } finally {
              spent.attemptMs += performance.now() - begun;
            }
          },
          retryingError: (_attempt, error) => String(error),
          deadError: (_attempts, error) => String(error),
        });
        for (;;) {
          const { rows } = await db.query<{ left: string }>(
            `SELECT count(*) AS left FROM messenger_updates WHERE status <> 'delivered'`,
          );
          if (Number(rows[0]!.left) === 0) break;
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
        const seconds = (performance.now() - started) / 1000;
        await loop.stop();
        const cpuUs = (micros: number) => Math.round(micros / pending);
        const cpu = [
          cpuUs((processCpuMicros(process.pid) ?? 0) - cpuBefore.own),
          backend === 'postgres' ? cpuUs(postgresCpuMicros() - cpuBefore.postgres) : '-',
          cpuUs((processCpuMicros(receiver.child.pid!) ?? 0) - cpuBefore.receiver),
        ].join(', ');
        const per = (value: number) => (value / pending).toFixed(2);
        console.log(
          `| ${backend} | ${concurrency} | ${Math.round(pending / seconds)} | ${per(spent.takeMs)} | ${per(spent.takes)} | ${per(spent.attemptMs)} | ${per(spent.settleMs)} | ${cpu} |`,
        );
      } finally {
        await close();
      }
    }
  }
} finally {
  await outbound.close();
  await receiver.stop();
}
