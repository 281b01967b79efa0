// `npm start` and `npm run worker` as an operator (or a container runtime, or a terminal's Ctrl-C) stops
// them: the signal reaches npm, and the server must stop with it. Under `sh -c` npm's signal ended the
// shell and left the server running, holding its port and the data directory's lock.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { freePort } from '../support/app.ts';

const repository = new URL('../..', import.meta.url).pathname;
// The npm that runs this suite (npm test sets npm_execpath); `npm` on PATH when run by hand.
const npm = process.env.npm_execpath
  ? { command: process.execPath, prefix: [process.env.npm_execpath] }
  : { command: 'npm', prefix: [] as string[] };

async function answers(url: string): Promise<boolean> {
  return fetch(url, { signal: AbortSignal.timeout(1000) }).then(
    (response) => response.ok,
    () => false,
  );
}

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  test(`${signal} to \`npm start\` stops the server: npm exits, the port is free and the data directory's lock is released`, async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'orgplane-npm-start-'));
    const port = await freePort();
    const { DATABASE_URL: _embedded, ...environment } = process.env;
    const npmStart = spawn(npm.command, [...npm.prefix, 'start'], {
      cwd: repository,
      env: { ...environment, DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    npmStart.stdout.on('data', (chunk) => (output += chunk));
    npmStart.stderr.on('data', (chunk) => (output += chunk));
    const exited = new Promise<number | null>((resolve) => npmStart.once('exit', (code) => resolve(code)));
    try {
      const deadline = Date.now() + 90_000;
      while (!(await answers(`http://127.0.0.1:${port}/health`))) {
        assert.ok(Date.now() < deadline && npmStart.exitCode === null, `npm start did not come up:\n${output}`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      assert.ok(existsSync(path.join(dataDir, 'pglite.lock')), 'the running server holds the lock');

      npmStart.kill(signal);
      const npmExit = await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 20_000, 'running'))]);
      assert.notEqual(npmExit, 'running', `npm did not exit within 20 s of ${signal}:\n${output}`);
      // The server is npm's child: give it the moment its graceful stop takes, then it must be gone.
      const stopBy = Date.now() + 20_000;
      while ((await answers(`http://127.0.0.1:${port}/health`)) && Date.now() < stopBy)
        await new Promise((resolve) => setTimeout(resolve, 200));
      assert.equal(await answers(`http://127.0.0.1:${port}/health`), false, `the server still answers:\n${output}`);
      while (existsSync(path.join(dataDir, 'pglite.lock')) && Date.now() < stopBy)
        await new Promise((resolve) => setTimeout(resolve, 200));
      assert.equal(existsSync(path.join(dataDir, 'pglite.lock')), false, `the lock is still held:\n${output}`);
    } finally {
      npmStart.kill('SIGKILL');
      await rm(dataDir, { recursive: true, force: true });
    }
  });
}
