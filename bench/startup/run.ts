// Time from starting the server on an empty data directory until GET /health answers 200 (embedded PGlite).
import { spawnServer } from '../support/servers.ts';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

const runs = Number(process.env.BENCH_RUNS ?? 5);
const measure = async (label: string, command: string, args: string[]) => {
  const times: number[] = [];
  for (let run = 0; run < runs; run++) {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'orgplane-startup-'));
    const server = await spawnServer(args, { DATA_DIR: dataDir }, command);
    times.push(server.readyAfterMs);
    await server.stop();
  }
  times.sort((a, b) => a - b);
  console.log(
    `| ${label} | ${times.map((t) => Math.round(t)).join(', ')} | ${Math.round(times[Math.floor(times.length / 2)]!)} |`,
  );
};

console.log(`Empty DATA_DIR until /health is 200 (ms), ${runs} runs each\n`);
console.log('| command | runs (sorted) | median |');
console.log('|---|---|---|');
await measure('node src/main.ts start', process.execPath, ['src/main.ts', 'start']);
await measure('npm start', 'npm', ['start', '--silent']);
