// Where the ingress server's time goes: orgplane under full webhook load with RUN_WORKERS off and on,
// each under V8's CPU profiler (--cpu-prof), then the profile's self time summed by where the code
// lives (PGlite's WebAssembly and its JS glue, node-postgres, Fastify and the HTTP stack, orgplane's own
// code, garbage collection, idle) and the top functions. It answers why orgplane on PGlite slows down
// with its in-process workers running, which the throughput figures of ingress.ts alone cannot.
import { startBotPlatform } from '../../test/support/bot-platform.ts';
import { createDatabase, json, load, spawnServer } from '../support/servers.ts';
import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

const seconds = Number(process.env.BENCH_SECONDS ?? 8);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 100);
const backend = (process.env.BENCH_BACKEND ?? 'pglite') as 'postgres' | 'pglite';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Offsets in microseconds from the process's spawn: only samples of the load window are counted. */
interface Window {
  fromUs: number;
  toUs: number;
}

/** The part of the system a frame belongs to, by its script's path. */
function area(frame: ProfileNode['callFrame']): string {
  const { url, functionName } = frame;
  if (functionName === '(garbage collector)') return 'garbage collection';
  if (functionName === '(idle)') return 'idle';
  if (functionName === '(program)' || functionName === '(root)') return 'V8 and native (program)';
  if (url.startsWith('wasm://')) return 'PGlite WebAssembly';
  if (url.includes('@electric-sql/pglite')) return 'PGlite JavaScript';
  if (url.includes('/node_modules/pg') || url.includes('pg-protocol')) return 'node-postgres';
  if (url.includes('pg-boss')) return 'pg-boss';
  if (
    url.includes('fastify') ||
    url.includes('find-my-way') ||
    url.includes('avvio') ||
    url.includes('light-my-request')
  )
    return 'Fastify';
  if (url.includes('/node_modules/zod')) return 'zod';
  if (url.includes('pino')) return 'logging (pino)';
  if (url.startsWith('node:') || url === '') return 'Node.js core (HTTP, streams, crypto, timers)';
  if (
    url.includes('/src/modules/messenger/delivery-loop') ||
    url.includes('/src/modules/messenger/worker') ||
    url.includes('/src/modules/messenger/queue-store')
  )
    return 'orgplane: delivery workers';
  if (url.includes('/src/')) return 'orgplane: other';
  return 'other dependencies';
}

function summarize(profile: Profile, window: Window) {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfMicros = new Map<number, number>();
  // The profile starts as Node boots, a few tens of milliseconds after the spawn: close enough for a
  // window of seconds.
  let at = 0;
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0;
    at += delta;
    if (at >= window.fromUs && at <= window.toUs) selfMicros.set(id, (selfMicros.get(id) ?? 0) + delta);
  });
  const areas = new Map<string, number>();
  const functions = new Map<string, number>();
  let total = 0;
  for (const [id, micros] of selfMicros) {
    const frame = byId.get(id)!.callFrame;
    total += micros;
    areas.set(area(frame), (areas.get(area(frame)) ?? 0) + micros);
    const name = `${frame.functionName || '(anonymous)'} ${frame.url.replace(/^.*\/(node_modules|src)\//, '$1/')}:${frame.lineNumber + 1}`;
    functions.set(name, (functions.get(name) ?? 0) + micros);
  }
  const sorted = (map: Map<string, number>) => [...map].sort((a, b) => b[1] - a[1]);
  return { total, areas: sorted(areas), functions: sorted(functions).slice(0, 12) };
}

const platform = await startBotPlatform();
const receiver = await spawnServer(['bench/webhook/receiver.ts'], {});
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

try {
  console.log(`Webhook ingress under CPU profile, ${backend}, ${connections} connections, ${seconds} s per run`);
  for (const workers of [false, true]) {
    const profileDir = await mkdtemp(path.join(tmpdir(), 'orgplane-profile-'));
    const env: Record<string, string> = {
      DATA_DIR: await mkdtemp(path.join(tmpdir(), 'orgplane-bench-')),
      MESSENGER_API_ROOT: platform.url,
      ALLOWED_PRIVATE_NETWORKS: '127.0.0.0/8',
      RUN_WORKERS: String(workers),
      NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${profileDir}`,
    };
    let drop = async () => {};
    if (backend === 'postgres') {
      const database = await createDatabase();
      env.DATABASE_URL = database.url;
      drop = database.drop;
    }
    const spawnedAt = performance.now();
    const server = await spawnServer(['src/main.ts', 'start'], env);
    const { sessionToken } = await json(`${server.url}/v1/auth/sign-up`, 'POST', {
      email: `profile.${Date.now()}@example.test`,
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
    const headers = {
      'content-type': 'application/json',
      'x-telegram-bot-api-secret-token': platform.webhookOf(bot.token)!.secretToken!,
    };
    const deliveredBefore = (await json(`${receiver.url}/count`, 'GET')).delivered as number;
    const loadFrom = performance.now();
    const result = await load({
      url: `${server.url}/v1/webhooks/messenger/${created.connection.id}`,
      method: 'POST',
      headers,
      connections,
      seconds,
      nextBody: () => update(nextUpdateId++),
    });
    const loadWindow = { fromUs: (loadFrom - spawnedAt) * 1000, toUs: (performance.now() - spawnedAt) * 1000 };
    const delivered = ((await json(`${receiver.url}/count`, 'GET')).delivered as number) - deliveredBefore;
    await server.stop(); // the profile is written as the process exits
    await drop();
    const file = (await readdir(profileDir)).find((name) => name.endsWith('.cpuprofile'));
    if (!file) throw new Error(`no profile written in ${profileDir}`);
    const summary = summarize(JSON.parse(await readFile(path.join(profileDir, file), 'utf8')) as Profile, loadWindow);
    const accepted = result.requests - result.non2xx;
    console.log(
      `\n#### RUN_WORKERS=${workers}: ${result.requestsPerSecond} req/s, p99 ${result.p99Ms} ms; ${delivered} delivered during the run; ${(summary.total / 1e6).toFixed(1)} s of profile in the load window\n`,
    );
    console.log('| where | share of the profile | us per accepted update |');
    console.log('|---|---|---|');
    for (const [name, micros] of summary.areas)
      console.log(
        `| ${name} | ${((100 * micros) / summary.total).toFixed(1)} % | ${Math.round(micros / Math.max(1, accepted))} |`,
      );
    console.log('\nTop functions by self time:');
    for (const [name, micros] of summary.functions)
      console.log(`- ${((100 * micros) / summary.total).toFixed(1)} % ${name}`);
  }
} finally {
  await receiver.stop();
  await platform.close();
}
