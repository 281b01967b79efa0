// The `orgplane` CLI and server as separate OS processes, as an operator runs them.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from './app.ts';

const mainFile = new URL('../../src/main.ts', import.meta.url).pathname;

export interface ServerProcess {
  child: ChildProcess;
  url: string;
  output(): string;
  /** Resolves with the exit code once the process has ended. */
  exited: Promise<number | null>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Runs `orgplane start` as its own OS process (as in production) and waits until /health answers 200. */
export async function startServerProcess(env: Record<string, string> = {}): Promise<ServerProcess> {
  const dataDir = env.DATA_DIR ?? (await mkdtemp(path.join(tmpdir(), 'orgplane-proc-')));
  const server = await spawnServer({ DATA_DIR: dataDir, LOG_LEVEL: 'info', ...env });
  if (!(await server.healthy)) {
    server.child.kill('SIGKILL');
    throw new Error(`server process did not become healthy:\n${server.output()}`);
  }
  return {
    child: server.child,
    url: server.url,
    output: server.output,
    exited: server.exited,
    stop: (signal = 'SIGTERM') => stopProcess(server, signal),
  };
}

export interface CliProcess {
  child: ChildProcess;
  pid: number;
  output(): string;
  /** Resolves with the exit code (null when ended by a signal). */
  exited: Promise<number | null>;
}

/**
 * Spawns `orgplane <args>` with `env` over this process's environment. DATABASE_URL is taken from
 * `env` only, so that a command meant for the embedded database never reaches a PostgreSQL by accident.
 */
export function spawnCli(args: string[], env: Record<string, string>, main = mainFile): CliProcess {
  const { DATABASE_URL: _ignored, ...inherited } = process.env;
  const child = spawn(process.execPath, [main, ...args], {
    // Test processes sign everyone up from 127.0.0.1: the per-address sign-up limit is raised as in startTestApp.
    env: {
      ...inherited,
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      SIGN_UP_ATTEMPTS_PER_ADDRESS: '1000000',
      SSO_START_ATTEMPTS_PER_ADDRESS: '1000000',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, pid: child.pid!, output: () => output, exited };
}

/** Runs `orgplane <args>` to its end (killed after 60 s). */
export async function runCli(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; output: string }> {
  const cli = spawnCli(args, env);
  const timer = setTimeout(() => cli.child.kill('SIGKILL'), 60_000);
  const code = await cli.exited;
  clearTimeout(timer);
  return { code, output: cli.output() };
}

/**
 * `orgplane start` on a free port; `healthy` resolves true once /health answers 200, false if it exits
 * first. `main`: another checkout's src/main.ts (an earlier release, for upgrade tests).
 */
export async function spawnServer(
  env: Record<string, string>,
  main = mainFile,
): Promise<CliProcess & { url: string; healthy: Promise<boolean> }> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const server = spawnCli(['start'], { PORT: String(port), ...env }, main);
  const healthy = (async () => {
    const deadline = Date.now() + 60_000;
    while (server.child.exitCode === null && server.child.signalCode === null && Date.now() < deadline) {
      const ok = await fetch(`${url}/health`).then(
        (response) => response.status === 200,
        () => false,
      );
      if (ok) return true;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return false;
  })();
  return { ...server, url, healthy };
}

/** Stops a process with `signal` and waits for its end. */
export async function stopProcess(cli: CliProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
  if (cli.child.exitCode === null && cli.child.signalCode === null) cli.child.kill(signal);
  return cli.exited;
}
