// Shared pieces of the benchmarks: real server processes, a bare Fastify baseline, autocannon runs.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';

// Databases and ports come from the test helpers, so benchmarks and tests make them one way.
import { createPostgresDatabase as createDatabase, freePort } from '../../test/support/app.ts';

export { createDatabase, freePort };

const root = new URL('../../', import.meta.url).pathname;

export interface BenchProcess {
  url: string;
  child: ChildProcess;
  /** Milliseconds from spawn until /health answered 200. */
  readyAfterMs: number;
  stop(): Promise<void>;
}

async function waitHealthy(url: string, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`process exited early:\n${output()}`);
    try {
      // Bounded: a port can be answered by something that accepts and never replies.
      if ((await fetch(`${url}/health`, { signal: AbortSignal.timeout(2_000) })).status === 200) return;
    } catch {
      // not yet listening
    }
    if (Date.now() > deadline) throw new Error(`not healthy in time:\n${output()}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Spawns a command (the orgplane server or the bare baseline) and waits for its /health. */
export async function spawnServer(
  args: string[],
  env: Record<string, string>,
  command = process.execPath,
): Promise<BenchProcess> {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(command, args, {
    cwd: root,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', RUN_WORKERS: 'false', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const url = `http://127.0.0.1:${port}`;
  await waitHealthy(url, child, () => output);
  const readyAfterMs = performance.now() - started;
  return {
    url,
    child,
    readyAfterMs,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

export async function startOrgplane(backend: 'postgres' | 'pglite', extraEnv: Record<string, string> = {}) {
  const env: Record<string, string> = { DATA_DIR: await mkdtemp(path.join(tmpdir(), 'orgplane-bench-')), ...extraEnv };
  let drop = async () => {};
  if (backend === 'postgres') {
    const database = await createDatabase();
    env.DATABASE_URL = database.url;
    drop = database.drop;
  }
  const server = await spawnServer(['src/main.ts', 'start'], env);
  return {
    ...server,
    async stop() {
      await server.stop();
      await drop();
    },
  };
}

export const startBareFastify = () => spawnServer(['bench/support/bare-fastify.ts'], {});

export interface LoadResult {
  /** Responses completed in the run. */
  requests: number;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
  errors: number;
}

export async function load(options: {
  url: string;
  headers?: Record<string, string>;
  connections?: number;
  seconds?: number;
  method?: string;
  body?: string;
  /** A new body for every request (instead of `body`). */
  nextBody?: () => string;
  /** A steady offered rate, requests per second over all connections (autocannon's overallRate). */
  overallRate?: number;
}): Promise<LoadResult> {
  const method = (options.method ?? 'GET') as 'GET';
  const result = await autocannon({
    url: options.url,
    method,
    headers: options.headers ?? {},
    ...(options.body ? { body: options.body } : {}),
    ...(options.nextBody
      ? { requests: [{ method, setupRequest: (request: any) => ({ ...request, body: options.nextBody!() }) }] }
      : {}),
    connections: options.connections ?? 50,
    duration: options.seconds ?? 10,
    ...(options.overallRate ? { overallRate: options.overallRate } : {}),
  });
  return {
    requests: result.requests.total,
    requestsPerSecond: Math.round(result.requests.average),
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
  };
}

export async function json(url: string, method: string, body?: unknown, token?: string): Promise<any> {
  const response = await fetch(url, {
    method,
    headers: {
      ...(body ? { 'content-type': 'application/json' } : {}),
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${url}: ${response.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

export interface Round<T extends LoadResult = LoadResult> {
  route: T;
  baseline: T;
  /** The route's requests per second over the baseline's, both measured in this round. */
  ratio: number;
}

/**
 * The route against its baseline in `rounds` rounds, each the two back to back, so every ratio
 * compares two runs a few seconds apart. On this shared VM the machine's speed drifts by up to 2x
 * within minutes (the bare route alone was seen at 19k and 36k req/s in consecutive runs), so one
 * long pair says more about the moment than about the code; many short pairs and the median round
 * are the figure to quote, with every round shown beside it. Which of the two goes first alternates,
 * so a drift within a round, or what the first run leaves behind, favours neither.
 */
export async function compareInRounds<T extends LoadResult>(
  rounds: number,
  baseline: () => Promise<T>,
  route: () => Promise<T>,
): Promise<{ rounds: Round<T>[]; median: Round<T> }> {
  const results: Round<T>[] = [];
  for (let i = 0; i < rounds; i++) {
    let base: T;
    let measured: T;
    if (i % 2 === 0) {
      base = await baseline();
      measured = await route();
    } else {
      measured = await route();
      base = await baseline();
    }
    results.push({ route: measured, baseline: base, ratio: measured.requestsPerSecond / base.requestsPerSecond });
  }
  const sorted = [...results].sort((a, b) => a.ratio - b.ratio);
  return { rounds: results, median: sorted[Math.floor((sorted.length - 1) / 2)]! };
}
