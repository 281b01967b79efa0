// Real processes for the messenger's multi-process tests (PostgreSQL only: PGlite is one process's
// database): servers started with `orgplane start`, workers with `orgplane worker`, and a TCP
// proxy in front of PostgreSQL that can drop and refuse connections, as a database restart does.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from '../support/app.ts';

const root = new URL('../../', import.meta.url).pathname;
const nodeBin = path.join(root, 'node_modules/.bin/node');

export interface Child {
  process: ChildProcess;
  output(): string;
  /** Resolves on exit (code or signal). */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stop(): Promise<void>;
}

function startChild(args: string[], env: Record<string, string>, ready: (output: string) => boolean): Promise<Child> {
  const child = spawn(nodeBin, args, { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  const handle: Child = {
    process: child,
    output: () => output,
    exited,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(timer);
      }
    },
  };
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (ready(output)) resolve(handle);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    void exited.then(({ code, signal }) => reject(new Error(`process exited early (${code ?? signal}):\n${output}`)));
  });
}

export interface ServerProcess extends Child {
  url: string;
}

/** `orgplane start` on a free port. */
export async function startServerProcess(env: Record<string, string>): Promise<ServerProcess> {
  const port = await freePort();
  const dataDir = await mkdtemp(path.join(tmpdir(), 'orgplane-msg-'));
  const url = `http://127.0.0.1:${port}`;
  const child = await startChild(
    ['src/main.ts', 'start'],
    {
      PORT: String(port),
      HOST: '127.0.0.1',
      PUBLIC_URL: url,
      DATA_DIR: dataDir,
      LOG_LEVEL: 'info',
      ...env,
    },
    (output) => output.includes('orgplane listening'),
  );
  const stop = child.stop;
  return {
    ...child,
    url,
    async stop() {
      await stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** `orgplane worker`: delivery workers only. */
export function startWorkerProcess(env: Record<string, string>): Promise<Child> {
  return startChild(['src/main.ts', 'worker'], { LOG_LEVEL: 'info', ...env }, (output) =>
    output.includes('orgplane worker running'),
  );
}

export interface TcpProxy {
  port: number;
  /** Drops every open connection and refuses new ones, as a stopped server does. */
  cut(): void;
  /** Accepts connections again. */
  restore(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  let down = false;
  const server: Server = createServer((client) => {
    if (down) {
      client.destroy();
      return;
    }
    const upstream = connect(target.port, target.host);
    sockets.add(client);
    sockets.add(upstream);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    port,
    cut() {
      down = true;
      for (const socket of sockets) socket.destroy();
      sockets.clear();
    },
    restore() {
      down = false;
    },
    async close() {
      down = true;
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
