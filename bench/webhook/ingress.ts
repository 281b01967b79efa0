// The messenger webhook (spec operation 8) against what an integrator would otherwise run, in one run:
//   bare          a bare Node server (bare-node.ts): parses the update, no secret, no database
//   hand-written  a durable ingress as written by hand (hand-written.ts): one INSERT ... ON CONFLICT
//                 DO NOTHING per request, committed before the answer
//   claim alone   orgplane with RUN_WORKERS=false: the claim (which is the queue entry) and nothing else
//   orgplane      orgplane as `npm start` runs it: in-process workers delivering every update, signed,
//                 to a receiver in its own process (receiver.ts)
// Each in rounds at full load (distinct update_ids, BENCH_CONNECTIONS connections), in a rotating
// order; after every orgplane round the run waits until its workers delivered everything, so no round
// pays for another's deliveries. Then each at a steady offered rate (autocannon overallRate) for p99.
import { startBotPlatform } from '../../test/support/bot-platform.ts';
import { cpuPerRequest, postgresCpuMicros, processCpuMicros } from '../support/cpu.ts';
import { createDatabase, json, load, spawnServer, type BenchProcess, type LoadResult } from '../support/servers.ts';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

const seconds = Number(process.env.BENCH_SECONDS ?? 4);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 100);
const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
const steadyRate = Number(process.env.BENCH_STEADY_RATE ?? 1000);
const steadySeconds = Number(process.env.BENCH_STEADY_SECONDS ?? 10);
const backends = (process.env.BENCH_BACKENDS ?? 'postgres,pglite').split(',') as ('postgres' | 'pglite')[];

let nextUpdateId = 1;
const update = (id: number) =>
  JSON.stringify({
    update_id: id,
    message: {
      message_id: id,
      from: { id: 1000 + (id % 500), is_bot: false, first_name: 'Bench' },
      chat: { id: 1000 + (id % 500), type: 'private' },
      date: 1_700_000_000,
      text: `message ${id}`,
    },
  });

interface Target {
  name: string;
  server: BenchProcess;
  url: string;
  headers: Record<string, string>;
  /** Updates this target accepted so far (for orgplane: what its workers must deliver). */
  accepted: number;
  delivers: boolean;
}

/** The drain after a round: CPU per delivered update, and how busy each party was over its wall time. */
interface DrainCpu {
  serverUsPerUpdate: number;
  postgresUsPerUpdate: number;
  receiverUsPerUpdate: number;
  /** CPU time over wall time: 1.0 is one core kept busy throughout. */
  serverCores: number;
  postgresCores: number;
}

type Measured = LoadResult & {
  cpu: { serverUs: number; postgresUs: number; loadGeneratorUs: number };
  receiverUs: number;
  deliveredPerSecond: number;
  drainSeconds: number;
  drain: DrainCpu | null;
};

const platform = await startBotPlatform();
const receiver = await spawnServer(['bench/webhook/receiver.ts'], {});
const delivered = async () => (await json(`${receiver.url}/count`, 'GET')).delivered as number;
const bare = await spawnServer(['bench/webhook/bare-node.ts'], {});
const handDatabase = await createDatabase();
const handSecret = 'bench-secret-0123456789abcdef';
const hand = await spawnServer(['bench/webhook/hand-written.ts'], {
  DATABASE_URL: handDatabase.url,
  WEBHOOK_SECRET: handSecret,
});
const stops: (() => Promise<void>)[] = [];

async function orgplane(backend: 'postgres' | 'pglite', workers: boolean, name: string): Promise<Target> {
  const env: Record<string, string> = {
    DATA_DIR: await mkdtemp(path.join(tmpdir(), 'orgplane-bench-')),
    MESSENGER_API_ROOT: platform.url,
    ALLOWED_PRIVATE_NETWORKS: '127.0.0.0/8',
    RUN_WORKERS: String(workers),
  };
  if (backend === 'postgres') {
    const database = await createDatabase();
    env.DATABASE_URL = database.url;
    stops.push(database.drop);
  }
  const server = await spawnServer(['src/main.ts', 'start'], env);
  stops.unshift(server.stop);
  const { sessionToken } = await json(`${server.url}/v1/auth/sign-up`, 'POST', {
    email: `bench.${Date.now()}.${name}@example.test`,
    password: 'bench password 1',
    name: 'Bench',
  });
  await json(`${server.url}/v1/orgs`, 'POST', { name: 'Bench Org' }, sessionToken);
  const bot = platform.addBot();
  const created = await json(
    `${server.url}/v1/messenger/connections`,
    'POST',
    { botToken: bot.token, deliveryUrl: `${receiver.url}/deliver` },
    sessionToken,
  );
  const secret = platform.webhookOf(bot.token)!.secretToken!;
  return {
    name,
    server,
    url: `${server.url}/v1/webhooks/messenger/${created.connection.id}`,
    headers: { 'x-telegram-bot-api-secret-token': secret },
    accepted: 0,
    delivers: workers,
  };
}

async function measure(target: Target, duration: number, overallRate?: number): Promise<Measured> {
  const receiverBefore = processCpuMicros(receiver.child.pid!) ?? 0;
  const deliveredBefore = await delivered();
  const result = await cpuPerRequest(target.server.child.pid!, () =>
    load({
      url: target.url,
      method: 'POST',
      headers: { 'content-type': 'application/json', ...target.headers },
      connections,
      seconds: duration,
      nextBody: () => update(nextUpdateId++),
      ...(overallRate ? { overallRate } : {}),
    }),
  );
  // Reported, not fatal: on a loaded machine a few requests time out (autocannon's 10 s).
  if (result.non2xx || result.errors)
    console.log(`${target.name}: ${result.non2xx} non-2xx and ${result.errors} errors in a ${duration} s run`);
  const deliveredDuring = (await delivered()) - deliveredBefore;
  target.accepted += result.requests - result.non2xx;
  let drainSeconds = 0;
  let drain: DrainCpu | null = null;
  if (target.delivers) {
    // Every accepted update delivered before anything else is measured.
    const started = performance.now();
    const before = {
      server: processCpuMicros(target.server.child.pid!) ?? 0,
      postgres: postgresCpuMicros(),
      receiver: processCpuMicros(receiver.child.pid!) ?? 0,
      delivered: await delivered(),
    };
    while ((await delivered()) < deliveredFloor + target.accepted)
      await new Promise((resolve) => setTimeout(resolve, 100));
    drainSeconds = (performance.now() - started) / 1000;
    const updates = Math.max(1, (await delivered()) - before.delivered);
    const server = (processCpuMicros(target.server.child.pid!) ?? 0) - before.server;
    const postgres = postgresCpuMicros() - before.postgres;
    const wallMicros = Math.max(1, drainSeconds * 1e6);
    drain = {
      serverUsPerUpdate: Math.round(server / updates),
      postgresUsPerUpdate: Math.round(postgres / updates),
      receiverUsPerUpdate: Math.round(((processCpuMicros(receiver.child.pid!) ?? 0) - before.receiver) / updates),
      serverCores: server / wallMicros,
      postgresCores: postgres / wallMicros,
    };
  }
  const receiverUs = Math.round(
    ((processCpuMicros(receiver.child.pid!) ?? 0) - receiverBefore) / Math.max(1, result.requests),
  );
  return { ...result, receiverUs, deliveredPerSecond: Math.round(deliveredDuring / duration), drainSeconds, drain };
}

// Deliveries the receiver had counted before the orgplane-with-workers target of this backend started.
let deliveredFloor = 0;
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)]!;
const lines: string[] = [];
console.log(
  `Webhook ingress, ${connections} connections, ${rounds} rounds of ${seconds} s (order rotating), then ${steadySeconds} s at a steady ${steadyRate} req/s offered`,
);
try {
  for (const backend of backends) {
    const claimOnly = await orgplane(backend, false, 'claim');
    deliveredFloor = await delivered();
    const full = await orgplane(backend, true, 'orgplane');
    const targets: Target[] = [
      { name: 'bare', server: bare, url: `${bare.url}/webhook`, headers: {}, accepted: 0, delivers: false },
      {
        name: 'hand-written',
        server: hand,
        url: `${hand.url}/webhook/emc_bench`,
        headers: { 'x-telegram-bot-api-secret-token': handSecret },
        accepted: 0,
        delivers: false,
      },
      claimOnly,
      full,
    ];
    for (const target of targets) await measure(target, 2); // warm-up
    const byTarget = new Map<string, Measured[]>(targets.map((t) => [t.name, []]));
    const ratios: { hand: number; claim: number }[] = [];
    for (let round = 0; round < rounds; round++) {
      const order = targets.map((_, i) => targets[(i + round) % targets.length]!);
      const results = new Map<string, Measured>();
      for (const target of order) results.set(target.name, await measure(target, seconds));
      for (const [name, result] of results) byTarget.get(name)!.push(result);
      const rps = (name: string) => results.get(name)!.requestsPerSecond;
      ratios.push({ hand: rps('orgplane') / rps('hand-written'), claim: rps('orgplane') / rps('claim') });
    }
    const steady = new Map<string, Measured>();
    for (const target of targets) steady.set(target.name, await measure(target, steadySeconds, steadyRate));

    lines.push(
      `\n### ${backend}${backend === 'pglite' ? ' (orgplane and the claim alone on PGlite; the hand-written ingress on PostgreSQL)' : ''}\n`,
    );
    lines.push(
      '| target | req/s (median round) | every round req/s | p50 ms | p99 ms | CPU us/req server / postgres / load gen. / receiver | delivered/s during load | drain s after a round | steady ' +
        steadyRate +
        '/s: req/s, p50, p99 ms |',
    );
    lines.push('|---|---|---|---|---|---|---|---|---|');
    for (const target of targets) {
      const all = byTarget.get(target.name)!;
      const mid = [...all].sort((a, b) => a.requestsPerSecond - b.requestsPerSecond)[Math.floor((all.length - 1) / 2)]!;
      const s = steady.get(target.name)!;
      lines.push(
        `| ${target.name} | ${mid.requestsPerSecond} | ${all.map((r) => r.requestsPerSecond).join(', ')} | ${mid.p50Ms} | ${mid.p99Ms} | ${mid.cpu.serverUs} / ${mid.cpu.postgresUs} / ${mid.cpu.loadGeneratorUs} / ${mid.receiverUs} | ${target.delivers ? mid.deliveredPerSecond : '-'} | ${target.delivers ? mid.drainSeconds.toFixed(1) : '-'} | ${s.requestsPerSecond}, ${s.p50Ms}, **${s.p99Ms}** |`,
      );
    }
    const drains = (byTarget.get('orgplane') ?? []).flatMap((r) =>
      r.drain ? [{ ...r.drain, seconds: r.drainSeconds }] : [],
    );
    if (drains.length) {
      lines.push(
        '\nThe drain after each orgplane round (the workers alone, no load): CPU per delivered update, and cores kept busy over its wall time',
      );
      lines.push(
        '\n| round | drain s | server us/update | postgres us/update | receiver us/update | server cores | postgres cores |',
      );
      lines.push('|---|---|---|---|---|---|---|');
      for (const [i, d] of drains.entries())
        lines.push(
          `| ${i + 1} | ${d.seconds.toFixed(1)} | ${d.serverUsPerUpdate} | ${d.postgresUsPerUpdate} | ${d.receiverUsPerUpdate} | ${d.serverCores.toFixed(2)} | ${d.postgresCores.toFixed(2)} |`,
        );
    }
    lines.push(
      `\norgplane / hand-written, per round: ${ratios.map((r) => r.hand.toFixed(2)).join(', ')}; median **${median(ratios.map((r) => r.hand)).toFixed(2)}** (target >= 2)`,
    );
    lines.push(
      `orgplane / claim alone, per round: ${ratios.map((r) => r.claim.toFixed(2)).join(', ')}; median **${median(ratios.map((r) => r.claim)).toFixed(2)}** (target >= 0.9)`,
    );
    console.log(lines.splice(0).join('\n'));
    while (stops.length) await stops.shift()!();
  }
} finally {
  for (const stop of stops) await stop().catch(() => {});
  await hand.stop();
  await handDatabase.drop();
  await bare.stop();
  await receiver.stop();
  await platform.close();
}
