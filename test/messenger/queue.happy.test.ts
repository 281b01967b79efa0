// The durable queue (src/platform/queue.ts) on the selected backend: jobs enqueued in a transaction
// commit with it, ordered keys run in order while other keys proceed, retries and dead letters.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createJobQueue, type JobQueue, type QueueJob } from '../../src/platform/queue.ts';
import { openTestDatabase, type TestDatabase } from '../support/app.ts';
import { eventually } from './support.ts';

interface Data {
  key: string;
  n: number;
  failTimes?: number;
}

describe('job queue', () => {
  let database: TestDatabase;
  let queue: JobQueue;
  const runs: Array<{ key: string; n: number; attempt: number }> = [];
  const deadLetters: Array<{ n: number; attempt: number; error: string }> = [];

  before(async () => {
    database = await openTestDatabase();
    await database.db.query('CREATE TABLE claims (id text PRIMARY KEY)');
    queue = createJobQueue(database.db, { superviseIntervalSeconds: 1 });
    await queue.start([
      {
        name: 'ordered-test',
        maxAttempts: 3,
        retryDelaySeconds: 1,
        maxRetryDelaySeconds: 2,
        expireInSeconds: 30,
        ordered: true,
      },
    ]);
    queue.work<Data>(
      'ordered-test',
      {
        concurrency: 4,
        pollingIntervalSeconds: 0.5,
        async onDeadLetter(job: QueueJob<Data>, error) {
          deadLetters.push({ n: job.data.n, attempt: job.attempt, error: (error as Error).message });
        },
      },
      async (job) => {
        runs.push({ key: job.data.key, n: job.data.n, attempt: job.attempt });
        if (job.data.failTimes !== undefined && job.attempt <= job.data.failTimes)
          throw new Error(`failing attempt ${job.attempt}`);
      },
    );
  });

  after(async () => {
    await queue?.stop();
    await database?.drop();
  });

  test('a job enqueued in a rolled-back transaction never runs; a committed one runs once', async () => {
    await assert.rejects(
      database.db.transaction(async (tx) => {
        await tx.query("INSERT INTO claims VALUES ('rolled-back')");
        await queue.enqueue(tx, 'ordered-test', [{ key: 'rb', data: { key: 'rb', n: 1 } }]);
        throw new Error('abort the transaction');
      }),
    );
    await database.db.transaction(async (tx) => {
      await tx.query("INSERT INTO claims VALUES ('committed')");
      await queue.enqueue(tx, 'ordered-test', [{ key: 'ok', data: { key: 'ok', n: 2 } }]);
    });
    queue.wake('ordered-test');
    await eventually(() => runs.some((run) => run.key === 'ok'), { what: 'the committed job' });
    // The rolled-back job was enqueued first; had it been stored it would have run by now too.
    const stored = await database.db.query("SELECT count(*)::int AS n FROM pgboss.job WHERE data->>'key' = 'rb'");
    assert.equal(stored.rows[0].n, 0);
    assert.equal(runs.filter((run) => run.key === 'ok').length, 1);
  });

  test('jobs of one key run in enqueue order, one at a time, a failing head holding back only its own key', async () => {
    await database.db.transaction(async (tx) => {
      await queue.enqueue(tx, 'ordered-test', [
        { key: 'chat-a', data: { key: 'chat-a', n: 1, failTimes: 1 } },
        { key: 'chat-a', data: { key: 'chat-a', n: 2 } },
        { key: 'chat-b', data: { key: 'chat-b', n: 1 } },
        { key: 'chat-a', data: { key: 'chat-a', n: 3 } },
        { key: 'chat-b', data: { key: 'chat-b', n: 2 } },
      ]);
    });
    queue.wake('ordered-test');
    await eventually(() => runs.filter((run) => run.key === 'chat-a').length === 4, { what: 'chat-a jobs' });
    await eventually(() => runs.filter((run) => run.key === 'chat-b').length === 2, { what: 'chat-b jobs' });
    const chatA = runs.filter((run) => run.key === 'chat-a').map((run) => `${run.n}/${run.attempt}`);
    assert.deepEqual(chatA, ['1/1', '1/2', '2/1', '3/1']);
    const chatB = runs.filter((run) => run.key === 'chat-b').map((run) => run.n);
    assert.deepEqual(chatB, [1, 2]);
    // chat-b did not wait for chat-a's retry.
    const indexOfRetry = runs.findIndex((run) => run.key === 'chat-a' && run.attempt === 2);
    const indexOfLastB = runs.findIndex((run) => run.key === 'chat-b' && run.n === 2);
    assert.ok(indexOfLastB < indexOfRetry, 'chat-b ran while chat-a waited for its retry');
  });

  test('after the last attempt a job is dead-lettered once, and its key moves on', async () => {
    await database.db.transaction(async (tx) => {
      await queue.enqueue(tx, 'ordered-test', [
        { key: 'chat-dead', data: { key: 'chat-dead', n: 1, failTimes: 99 } },
        { key: 'chat-dead', data: { key: 'chat-dead', n: 2 } },
      ]);
    });
    queue.wake('ordered-test');
    await eventually(() => runs.some((run) => run.key === 'chat-dead' && run.n === 2), {
      what: 'the job after the dead letter',
      timeoutMs: 60_000,
    });
    const attempts = runs.filter((run) => run.key === 'chat-dead' && run.n === 1).map((run) => run.attempt);
    assert.deepEqual(attempts, [1, 2, 3]);
    assert.deepEqual(
      deadLetters.filter((dead) => dead.n === 1),
      [{ n: 1, attempt: 3, error: 'failing attempt 3' }],
    );
  });
});
