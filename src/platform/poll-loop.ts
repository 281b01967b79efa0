// The loop of every worker that waits for work in the database (audit-log streams, messenger deliveries):
// a round looks for work and starts or does it; the next round comes at once when the round says there
// is more, else after the polling interval, or sooner when woken (this process queued work, or finished
// some and has room for more). A wake during a round is not lost: the round after it comes at once.

import { countJobRound } from './job-metrics.ts';

export interface PollLoopOptions {
  /** Idle wait between rounds, milliseconds. */
  intervalMs: number;
  /** One round; resolves true to go again at once (there is more), false to wait. A rejection counts as
   * a failed round (orgplane_background_job_failures_total) and waits like an idle one. */
  round(): Promise<boolean>;
  /** The worker's name in /metrics (its rounds and failed rounds); uncounted without one. */
  name?: string;
}

export interface PollLoop {
  /** Ends the idle wait now (or, during a round, the one after it). */
  wake(): void;
  /** Stops after the round in progress and resolves when it has ended. */
  stop(): Promise<void>;
  /** True once stop() was called: a round in progress may end early. */
  readonly stopping: boolean;
}

export function startPollLoop(options: PollLoopOptions): PollLoop {
  let stopping = false;
  let woken = false;
  let sleeper: { timer: NodeJS.Timeout; resolve: () => void } | undefined;

  function wake() {
    woken = true;
    if (sleeper) {
      clearTimeout(sleeper.timer);
      sleeper.resolve();
    }
  }

  function sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        sleeper = undefined;
        resolve();
      };
      sleeper = { timer: setTimeout(done, ms), resolve: done };
    });
  }

  async function run() {
    while (!stopping) {
      woken = false;
      let more = false;
      try {
        more = await options.round();
        if (options.name) countJobRound(options.name, false);
      } catch {
        if (options.name) countJobRound(options.name, true);
      }
      if (stopping) break;
      if (more) continue;
      if (!woken) await sleep(options.intervalMs);
    }
  }

  const running = run();
  return {
    wake,
    get stopping() {
      return stopping;
    },
    async stop() {
      stopping = true;
      wake();
      await running;
    },
  };
}
