// Races made deterministic on PostgreSQL: a transaction on a connection of its own holds rows
// locked while the requests under test queue behind it.
import pg from 'pg';
import type { TestApp } from './app.ts';

/**
 * PostgreSQL only: runs `sql` in a transaction on a connection of its own and keeps it open, so the
 * rows it locked (or deleted) stay locked until `release()`. A race is then made deterministic:
 * start the requests, `waitForBlocked(n)` until n statements wait for a lock, release.
 */
export async function holdLocks(app: TestApp, sql: string, params: unknown[]) {
  if (!app.databaseUrl) throw new Error('holdLocks needs PostgreSQL');
  const holder = new pg.Client({ connectionString: app.databaseUrl });
  const watcher = new pg.Client({ connectionString: app.databaseUrl });
  await Promise.all([holder.connect(), watcher.connect()]);
  await holder.query('BEGIN');
  await holder.query(sql, params);
  const end = async (finish: 'COMMIT' | 'ROLLBACK') => {
    try {
      await holder.query(finish);
    } finally {
      await Promise.all([holder.end(), watcher.end()]);
    }
  };
  return {
    async waitForBlocked(count: number) {
      const deadline = Date.now() + 15_000;
      for (;;) {
        // A second waiter for the same row waits for the first one, not for the holder: count all lock waits.
        const blocked = await watcher.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
        );
        if (blocked.rows[0]!.n >= count) return;
        if (Date.now() > deadline) {
          await end('ROLLBACK');
          throw new Error(`expected ${count} statements waiting for a lock, saw ${blocked.rows[0]!.n}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    release: () => end('COMMIT'),
  };
}
