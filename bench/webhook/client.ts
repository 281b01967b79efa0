// What one delivery's HTTP POST costs the delivering process, without a database: BENCH_POSTS signed-size
// POSTs (a Telegram update's JSON) to the benchmark's receiver in its own process, BENCH_CONCURRENCY at
// a time, through (1) the guarded outbound client's fetch (undici's fetch behind the address policy,
// what the delivery workers used), (1b) its post (undici's request behind the same policy, what they
// use now), (2) undici's fetch alone on a keep-alive Agent, (3) undici's `request` on it (no WHATWG
// Request/Response or streams), and (4) node:http with a keep-alive agent. Reports this process's CPU per POST (user + system, from /proc) and POSTs/s.
//
//   node_modules/.bin/node bench/webhook/client.ts
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent, fetch as undiciFetch, request as undiciRequest } from 'undici';
import { createOutboundClient } from '../../src/platform/outbound.ts';
import { processCpuMicros } from '../support/cpu.ts';
import { spawnServer } from '../support/servers.ts';

const posts = Number(process.env.BENCH_POSTS ?? 10_000);
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 8);
const body = JSON.stringify({
  connectionId: 'emc_bench',
  update: {
    update_id: 1,
    message: {
      message_id: 1,
      from: { id: 1001, is_bot: false, first_name: 'Bench' },
      chat: { id: 1001, type: 'private' },
      date: 1_700_000_000,
      text: 'message 1',
    },
  },
});
const headers = { 'content-type': 'application/json', 'x-orgplane-signature': `sha256=${'0'.repeat(64)}` };

const receiver = await spawnServer(['bench/webhook/receiver.ts'], {});
const url = `${receiver.url}/deliver`;
const outbound = createOutboundClient({ allowedPrivateNetworks: ['127.0.0.0/8'] });
const undiciAgent = new Agent();
const httpAgent = new HttpAgent({ keepAlive: true, maxSockets: concurrency });

const clients: Record<string, () => Promise<void>> = {
  "guarded fetch (the workers' client before)": async () => {
    const response = await outbound.fetch(url, { method: 'POST', headers, body });
    await response.text();
  },
  "guarded post (the workers' client now)": async () => {
    await outbound.post(url, { headers, body });
  },
  'undici fetch, unguarded': async () => {
    const response = await undiciFetch(url, { method: 'POST', headers, body, dispatcher: undiciAgent });
    await response.text();
  },
  'undici request': async () => {
    const response = await undiciRequest(url, { method: 'POST', headers, body, dispatcher: undiciAgent });
    await response.body.text();
  },
  'node:http': () =>
    new Promise<void>((resolve, reject) => {
      const req = httpRequest(
        url,
        { method: 'POST', headers: { ...headers, 'content-length': Buffer.byteLength(body) }, agent: httpAgent },
        (res) => {
          res.resume();
          res.on('end', resolve);
        },
      );
      req.on('error', reject);
      req.end(body);
    }),
};

async function run(post: () => Promise<void>, count: number): Promise<{ perSecond: number; cpuUs: number }> {
  let left = count;
  const cpuBefore = processCpuMicros(process.pid) ?? 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (left-- > 0) await post();
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  return {
    perSecond: Math.round(count / seconds),
    cpuUs: Math.round(((processCpuMicros(process.pid) ?? 0) - cpuBefore) / count),
  };
}

console.log(`${posts} POSTs of ${body.length} bytes, ${concurrency} at a time, to a receiver in its own process`);
console.log('| client | round | POSTs/s | CPU us per POST (this process) |');
console.log('|---|---|---|---|');
try {
  for (const post of Object.values(clients)) await run(post, 500); // warm-up
  for (let round = 1; round <= 2; round++) {
    for (const [name, post] of Object.entries(clients)) {
      const result = await run(post, posts);
      console.log(`| ${name} | ${round} | ${result.perSecond} | ${result.cpuUs} |`);
    }
  }
} finally {
  await undiciAgent.close();
  httpAgent.destroy();
  await receiver.stop();
}
