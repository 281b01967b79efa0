// How often each background worker ran a round and how often a round failed, for /metrics. Counted
// where rounds are run (poll-loop.ts, and a timer job's own run), so a module adds no metrics code of
// its own. One set per process: every app of the process exposes the same counters, as a process's
// workers are the process's.
import { Counter } from 'prom-client';

export const jobRuns = new Counter({
  name: 'orgplane_background_job_runs_total',
  help: 'Rounds run by each background worker of this process (a round takes and handles what is due)',
  labelNames: ['worker'],
  registers: [],
});

export const jobFailures = new Counter({
  name: 'orgplane_background_job_failures_total',
  help: 'Rounds of each background worker of this process that failed (an error ended the round)',
  labelNames: ['worker'],
  registers: [],
});

/** Counts one round of `worker`; `failed` when it ended in an error. */
export function countJobRound(worker: string, failed: boolean): void {
  jobRuns.inc({ worker });
  if (failed) jobFailures.inc({ worker });
}
