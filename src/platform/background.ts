// What a module runs in the background of a process that runs workers (`orgplane start` with
// RUN_WORKERS, and `orgplane worker`): each module lists its jobs (its index.ts), the composition root
// (src/composition.ts) gathers every module's list, and both commands start that one list here.

export interface BackgroundWorker {
  /** Its name in the log line that lists what a process started. */
  name: string;
  start(): RunningWorker;
}

export interface RunningWorker {
  /** Stops taking work and resolves once the work in hand is finished. */
  stop(): Promise<void>;
}

export interface RunningWorkers {
  names: string[];
  /** True from the start until stop() is called (GET /ready's workers check). */
  readonly running: boolean;
  /** Stops them all, each finishing what it holds. */
  stop(): Promise<void>;
}

export function startBackgroundWorkers(
  workers: BackgroundWorker[],
  log: { info(details: Record<string, unknown>, message: string): void },
): RunningWorkers {
  const running = workers.map((worker) => worker.start());
  const names = workers.map((worker) => worker.name);
  log.info({ workers: names }, 'background workers started');
  let started = true;
  return {
    names,
    get running() {
      return started;
    },
    async stop() {
      started = false;
      await Promise.all(running.map((worker) => worker.stop()));
    },
  };
}

/**
 * What a module with background work gives the composition root: `register` adds its routes and hooks
 * to an HTTP app (not called by `orgplane worker`), `workers` are its jobs. Both share what the module
 * built once (the messenger's ingress wakes its own delivery loop; MCP's OAuth service serves the
 * routes and the health job).
 */
export interface AppModule {
  register(app: import('fastify').FastifyInstance): Promise<void>;
  workers: BackgroundWorker[];
}
