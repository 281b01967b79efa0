// The full connection probe (all ten phases) against local MCP servers built with the SDK, over
// loopback. Sequential probes, so each figure is one probe's latency, not a throughput.
//   node_modules/.bin/node bench/mcp-probe/run.ts [probes per server, default 300]

import { probeConnection } from '../../src/modules/mcp-connections/probe/index.ts';
import { createOutboundClient } from '../../src/platform/outbound.ts';
import { startLegacySseServer, startStreamableServer, type RunningServer } from '../../test/support/mcp-servers.ts';

const count = Number(process.argv[2] ?? 300);
const outbound = createOutboundClient({ allowedPrivateNetworks: ['127.0.0.0/8', '::1/128'] });

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

async function bench(label: string, start: () => Promise<RunningServer>, apiKey?: string) {
  const server = await start();
  const run = () =>
    probeConnection({ url: server.url, authType: apiKey ? 'apikey' : 'none', ...(apiKey ? { apiKey } : {}), outbound });
  for (let i = 0; i < 20; i += 1) await run(); // warm-up (JIT, connection pool)
  const times: number[] = [];
  const began = performance.now();
  for (let i = 0; i < count; i += 1) {
    const t0 = performance.now();
    const result = await run();
    times.push(performance.now() - t0);
    if (!result.ok) throw new Error(`${label}: probe failed: ${JSON.stringify(result.diagnostic)}`);
  }
  const elapsed = (performance.now() - began) / 1000;
  await server.close();
  times.sort((a, b) => a - b);
  const f = (n: number) => n.toFixed(2).padStart(7);
  console.log(
    `${label.padEnd(34)} n=${count}  p50 ${f(percentile(times, 50))} ms  p90 ${f(percentile(times, 90))} ms  p99 ${f(percentile(times, 99))} ms  max ${f(times.at(-1)!)} ms  (${(count / elapsed).toFixed(0)} probes/s)`,
  );
}

console.log(`node ${process.version}, ${new Date().toISOString()}`);
await bench('streamable HTTP, stateless', () => startStreamableServer());
await bench('streamable HTTP, stateful', () => startStreamableServer({ stateful: true }));
await bench('streamable HTTP, API key (bearer)', () => startStreamableServer({ apiKey: 'bench-key' }), 'bench-key');
await bench('legacy HTTP+SSE', () => startLegacySseServer());
await outbound.close();
