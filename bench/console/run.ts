// The console's first load, measured with Chromium against a real server on loopback (embedded PGlite):
// the compressed JavaScript it transfers (budget 250 KB) and the time from navigation until the sign-in
// form can be typed into (budget 1 s). Usage: npm run bench -- console
import { mkdtemp } from 'node:fs/promises';
import { tmpdir, loadavg } from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { spawnServer } from '../support/servers.ts';

const runs = Number(process.env.BENCH_RUNS ?? 10);
const dataDir = await mkdtemp(path.join(tmpdir(), 'orgplane-console-bench-'));
const server = await spawnServer(['src/main.ts', 'start'], { DATA_DIR: dataDir });
const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: [
    '--no-sandbox',
    '--disable-gpu',
    '--disable-background-networking',
    '--no-first-run',
    '--disable-component-update',
    '--disable-sync',
  ],
});
try {
  const times: number[] = [];
  let scriptBytes = 0;
  for (let run = 0; run < runs; run++) {
    // A fresh context each run: an empty cache, so every run is a first load.
    const context = await browser.newContext();
    const page = await context.newPage();
    const cdp = await context.newCDPSession(page);
    await cdp.send('Network.enable');
    let transferred = 0;
    const scripts = new Set<string>();
    cdp.on('Network.responseReceived', (event) => {
      if (event.type === 'Script') scripts.add(event.requestId);
    });
    cdp.on('Network.loadingFinished', (event) => {
      if (scripts.has(event.requestId)) transferred += event.encodedDataLength;
    });
    const started = performance.now();
    await page.goto(`${server.url}/`);
    await page.getByLabel('Email').waitFor({ state: 'visible' });
    await page.getByLabel('Email').fill('ready@example.test');
    times.push(performance.now() - started);
    scriptBytes = transferred;
    await context.close();
  }
  times.sort((a, b) => a - b);
  const median = times[Math.floor(times.length / 2)]!;
  console.log(
    `console first load, ${runs} runs, load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  console.log(`compressed JavaScript transferred: ${(scriptBytes / 1024).toFixed(1)} KB (budget 250 KB)`);
  console.log(
    `navigation until the sign-in form takes input (ms): ${times.map((t) => Math.round(t)).join(', ')}; median ${Math.round(median)} (budget 1000)`,
  );
} finally {
  await browser.close();
  await server.stop();
}
