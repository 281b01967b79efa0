// The durable job queue: pg-boss over the foundation's Database, on PostgreSQL and on PGlite alike.
//
// Why pg-boss through a `db` adapter rather than its own connection pool:
// - One pool per process, shared with the rest of the app; on PGlite there is only one connection,
//   so a second pool is not even possible.
// - `enqueue(tx, ...)` runs pg-boss's insert on the caller's transaction client, so the job commits
//   (or rolls back) together with whatever the caller wrote in that transaction (for the messenger,
//   the update's claim). That is what makes "acknowledged" mean "stored and queued" on both backends.
//
// Two things to know about pg-boss on a single-connection pool (PGlite):
// - pg-boss looks a queue up in an in-memory cache before every insert/fetch and, on a miss, queries
//   the database through its own adapter (the pool). Inside a transaction that holds the only
//   connection, that lookup would wait forever. `start()` therefore warms the cache for every queue
//   it defines, and queues are never altered at run time.
// - Its LISTEN/NOTIFY fast path needs a session-pinned connection, which a pooled adapter does not
//   have; workers poll instead, and `wake()` lets a process that just enqueued poke its own workers.
//
// Policy kept here rather than in pg-boss:
// - Attempts and dead letters. pg-boss's `failed` state blocks a `key_strict_fifo` key forever, and
//   a dead letter must not stop the rest of a chat. So the handler wrapper decides: when the last
//   allowed attempt fails, `onDeadLetter` records the failure (in the owner's own table, where users
//   can see it) and the job is completed. pg-boss's own retry limit is set a few attempts higher, as
//   a safety net for when recording the dead letter itself fails.
// - Order inside one enqueue call. pg-boss orders a key's jobs by (created_on, id), and created_on
//   is the transaction's clock, equal for every job of one transaction; ids are given here as
//   time-ordered UUIDs so a batch keeps the caller's order.

import { randomUUID } from 'node:crypto';
import { PgBoss } from 'pg-boss';
import type { Database, Queryable } from '../db/database.ts';
import { whileHoldingLock } from '../db/locks.ts';

export interface QueueDefinition {
  name: string;
  /** Attempts in all, the first included; when the last one fails the job is dead-lettered. */
  maxAttempts: number;
  /** Delay before the first retry, in whole seconds; each further retry waits about twice as long (with jitter). */
  retryDelaySeconds: number;
  /** Upper bound of one retry delay, seconds. */
  maxRetryDelaySeconds: number;
  /** A job still active after this long (its worker died or hung) is failed and retried. */
  expireInSeconds: number;
  /** Jobs sharing a key run one at a time, in enqueue order; other keys are not held back. */
  ordered: boolean;
}

export interface NewJob<T> {
  data: T;
  /** Ordering key (required on ordered queues). */
  key?: string;
}

export interface QueueJob<T> {
  id: string;
  data: T;
  key: string | null;
  /** 1 for the first attempt. */
  attempt: number;
  maxAttempts: number;
}

export interface WorkOptions<T> {
  /** Jobs processed at the same time by this process (on ordered queues, of different keys). */
  concurrency?: number;
  /** Idle poll interval, seconds (>= 0.5). */
  pollingIntervalSeconds?: number;
  /** Called once, after the last attempt failed; the job is then completed so its key moves on. */
  onDeadLetter: (job: QueueJob<T>, error: unknown) => Promise<void>;
  /** Errors of the polling loop itself (database unreachable...). */
  onError?: (error: unknown) => void;
}

export interface QueueOptions {
  /** The schema pg-boss owns (created and migrated by `start()`). */
  schema?: string;
  /** How often expired jobs are looked for, seconds (pg-boss supervision). */
  superviseIntervalSeconds?: number;
  onError?: (error: unknown) => void;
}

export interface JobQueue {
  /** Installs or migrates the queue schema, creates the queues and warms pg-boss's queue cache. */
  start(definitions: QueueDefinition[]): Promise<void>;
  /** Inserts jobs on `tx` (a transaction's client, or the database itself), in the given order. */
  enqueue<T extends object>(tx: Queryable, name: string, jobs: NewJob<T>[]): Promise<void>;
  /**
   * pg-boss's own INSERT for these jobs, made but not run, for a caller that runs it inside a statement
   * of its own (as a data-modifying CTE, so that one statement both writes the caller's rows and
   * queues their jobs, committed together). `text` is a plain INSERT whose one parameter, the jobs
   * as a JSON array in the given order, appears exactly once as `$1::text::json`; it is the same
   * text for every call on one queue.
   */
  insertStatement<T extends object>(name: string, jobs: NewJob<T>[]): Promise<{ text: string; jobsJson: string }>;
  /** Starts this process's workers for a queue. */
  work<T>(name: string, options: WorkOptions<T>, handler: (job: QueueJob<T>) => Promise<void>): void;
  /** Wakes this process's idle workers on a queue (after an enqueue committed here). */
  wake(name: string): void;
  /** Stops the workers (waiting for jobs in hand) and pg-boss; does not close the database. */
  stop(): Promise<void>;
}

/** Extra pg-boss attempts beyond `maxAttempts`, used only if recording a dead letter fails. */
const SAFETY_ATTEMPTS = 3;

export function createJobQueue(db: Database, options: QueueOptions = {}): JobQueue {
  const schema = options.schema ?? 'pgboss';
  const adapter = (queryable: Queryable) => ({
    executeSql: (text: string, values?: unknown[]) => queryable.query(text, values),
  });
  const superviseInterval = options.superviseIntervalSeconds ?? 10;
  const boss = new PgBoss({
    db: adapter(db),
    backend: db.backend,
    schema,
    superviseIntervalSeconds: superviseInterval,
    monitorIntervalSeconds: superviseInterval,
    // No cron schedules are used; skip the scheduler's timers.
    schedule: false,
  });
  boss.on('error', (error) => options.onError?.(error));

  const definitions = new Map<string, QueueDefinition>();

  function jobRows<T extends object>(name: string, jobs: NewJob<T>[]) {
    const def = definitions.get(name);
    if (!def) throw new Error(`queue ${name} is not defined`);
    return jobs.map((job) => {
      if (def.ordered && !job.key) throw new Error(`queue ${name} is ordered: every job needs a key`);
      return { id: orderedUuid(), data: job.data, ...(job.key ? { singletonKey: job.key } : {}) };
    });
  }
  const loops: WorkerLoop[] = [];
  let started = false;

  async function startAndDefine(defs: QueueDefinition[]) {
    await boss.start();
    started = true;
    for (const def of defs) {
      definitions.set(def.name, def);
      const queueOptions = {
        policy: def.ordered ? 'key_strict_fifo' : 'standard',
        retryLimit: def.maxAttempts - 1 + SAFETY_ATTEMPTS,
        retryDelay: def.retryDelaySeconds,
        retryBackoff: true,
        retryDelayMax: def.maxRetryDelaySeconds,
        expireInSeconds: def.expireInSeconds,
        // Completed jobs are kept a day for inspection; the owner's tables hold the lasting record.
        deleteAfterSeconds: 24 * 60 * 60,
      };
      const existing = await boss.getQueue(def.name);
      if (!existing) {
        await boss.createQueue(def.name, queueOptions).catch(async (error: unknown) => {
          // Another process created it between our look and our create.
          if (!(await boss.getQueue(def.name))) throw error;
        });
      } else {
        const { policy: _policy, ...mutable } = queueOptions;
        await boss.updateQueue(def.name, mutable);
      }
      // Warm pg-boss's queue cache now, outside any transaction (see the note at the top).
      await boss.getJobById(def.name, '00000000-0000-0000-0000-000000000000');
    }
  }

  return {
    async start(defs) {
      // pg-boss creates its schema when it first starts, and processes starting together on a new
      // database collided there (CREATE SCHEMA IF NOT EXISTS is not safe against itself): one starts
      // it at a time.
      await whileHoldingLock(db, 'orgplane:queue-start', () => startAndDefine(defs));
    },

    async enqueue(tx, name, jobs) {
      if (jobs.length === 0) return;
      await boss.insert(name, jobRows(name, jobs), { db: adapter(tx) });
    },

    async insertStatement(name, jobs) {
      let captured: { text: string; values: unknown[] | undefined } | undefined;
      // pg-boss builds its statement and hands it to the adapter; this one keeps it instead of running it.
      const capture = {
        executeSql: async (text: string, values?: unknown[]) => {
          captured = { text, values };
          return { rows: [], rowCount: 0 };
        },
      };
      await boss.insert(name, jobRows(name, jobs), { db: capture });
      const jobsJson = captured?.values?.[0];
      const text = captured?.text.trim() ?? '';
      if (
        captured?.values?.length !== 1 ||
        typeof jobsJson !== 'string' ||
        !/^INSERT\b/i.test(text) ||
        text.split('$1::text::json').length !== 2 ||
        /\$\d/.test(text.replace('$1::text::json', ''))
      ) {
        // Only a pg-boss upgrade can change this; fail where it is noticed rather than queue wrongly.
        throw new Error('pg-boss insert statement has an unexpected shape; insertStatement cannot embed it');
      }
      return { text, jobsJson };
    },

    work(name, workOptions, handler) {
      const def = definitions.get(name);
      if (!def) throw new Error(`queue ${name} is not defined`);
      const concurrency = workOptions.concurrency ?? 4;
      const loop = new WorkerLoop(boss, def, workOptions, handler, concurrency);
      loops.push(loop);
      loop.start();
    },

    wake(name) {
      for (const loop of loops) if (loop.name === name) loop.wake();
    },

    async stop() {
      await Promise.all(loops.map((loop) => loop.stop()));
      loops.length = 0;
      if (started) {
        started = false;
        await boss.stop({ graceful: true, close: false, timeout: 5_000 });
      }
    },
  };
}

interface FetchedJob {
  id: string;
  data: unknown;
  retryCount: number;
  singletonKey?: string | null;
}

/**
 * One polling loop per queue and process: fetch up to the free capacity, run the jobs concurrently,
 * fetch again at once while there was work, sleep `pollingInterval` (or until woken) when there was not.
 */
class WorkerLoop {
  readonly name: string;
  private readonly boss: PgBoss;
  private readonly def: QueueDefinition;
  private readonly options: WorkOptions<any>;
  private readonly handler: (job: QueueJob<any>) => Promise<void>;
  private readonly concurrency: number;
  private readonly inFlight = new Set<Promise<void>>();
  private stopping = false;
  private sleeper: { timer: NodeJS.Timeout; resolve: () => void } | undefined;
  private woken = false;
  private running: Promise<void> | undefined;

  constructor(
    boss: PgBoss,
    def: QueueDefinition,
    options: WorkOptions<any>,
    handler: (job: QueueJob<any>) => Promise<void>,
    concurrency: number,
  ) {
    this.boss = boss;
    this.def = def;
    this.name = def.name;
    this.options = options;
    this.handler = handler;
    this.concurrency = Math.max(1, concurrency);
  }

  start() {
    this.running = this.run();
  }

  wake() {
    this.woken = true;
    if (this.sleeper) {
      clearTimeout(this.sleeper.timer);
      this.sleeper.resolve();
    }
  }

  async stop() {
    this.stopping = true;
    this.wake();
    await this.running;
    await Promise.allSettled([...this.inFlight]);
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        this.sleeper = undefined;
        resolve();
      };
      this.sleeper = { timer: setTimeout(done, ms), resolve: done };
    });
  }

  private async run() {
    const pollMs = Math.max(500, (this.options.pollingIntervalSeconds ?? 1) * 1000);
    while (!this.stopping) {
      this.woken = false;
      const free = this.concurrency - this.inFlight.size;
      let fetched: FetchedJob[] = [];
      if (free > 0) {
        try {
          fetched = (await this.boss.fetch(this.name, { batchSize: free, includeMetadata: true })) as FetchedJob[];
        } catch (error) {
          this.options.onError?.(error);
        }
      }
      for (const job of fetched) {
        const task = this.process(job).finally(() => {
          this.inFlight.delete(task);
          // A finished job frees capacity: look for more right away.
          this.wake();
        });
        this.inFlight.add(task);
      }
      if (this.stopping) break;
      if (fetched.length > 0 && fetched.length === free) continue;
      if (!this.woken) await this.sleep(pollMs);
    }
  }

  private async process(row: FetchedJob) {
    const job: QueueJob<any> = {
      id: row.id,
      data: row.data,
      key: row.singletonKey ?? null,
      attempt: row.retryCount + 1,
      maxAttempts: this.def.maxAttempts,
    };
    // Settles are fenced to this attempt: if the job expired and another worker took it over, our
    // late answer changes nothing.
    const attempt = { id: row.id, retryCount: row.retryCount };
    try {
      await this.handler(job);
      await this.boss.complete(this.name, attempt);
      return;
    } catch (error) {
      try {
        if (job.attempt >= job.maxAttempts) {
          await this.options.onDeadLetter(job, error);
          await this.boss.complete(this.name, attempt, { deadLettered: true });
        } else {
          await this.boss.fail(this.name, attempt, { message: error instanceof Error ? error.message : String(error) });
        }
      } catch (settleError) {
        // The job stays active and expires, then is retried: nothing is lost, only delayed.
        this.options.onError?.(settleError);
      }
    }
  }
}

let lastMs = 0;
let sequence = 0;

/** A UUIDv7-shaped id whose order follows the order of calls in this process. */
function orderedUuid(): string {
  const now = Date.now();
  if (now > lastMs) {
    lastMs = now;
    sequence = 0;
  } else {
    sequence += 1;
    if (sequence > 0xfff) {
      lastMs += 1;
      sequence = 0;
    }
  }
  // The random tail (variant bits included) from randomUUID, which draws on a buffered pool of
  // entropy; a randomBytes call per id cost ~3% of the webhook ingress's CPU (bench/webhook).
  const time = lastMs.toString(16).padStart(12, '0');
  return `${time.slice(0, 8)}-${time.slice(8, 12)}-7${sequence.toString(16).padStart(3, '0')}-${randomUUID().slice(19)}`;
}
