// Named locks (PostgreSQL's advisory locks), for the cases a row lock cannot cover: serializing work
// on something that has no row yet, such as the first connection of an organization or the first
// registration of a client (held until the transaction ends), or work that spans transactions, such
// as the queue's first start (held while it runs).
import pg from 'pg';
import type { Database, Queryable } from './database.ts';

/** Waits until no other transaction holds the lock named `name`, then holds it until this one ends. */
export async function lockUntilCommit(tx: Queryable, name: string): Promise<void> {
  await tx.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [name]);
}

/**
 * Runs `work` while holding the lock named `name` across processes, for work that spans several
 * transactions (on the pool's connections) and must not run twice at once. On PGlite, which serves
 * one process, `work` just runs.
 */
export async function whileHoldingLock<T>(db: Database, name: string, work: () => Promise<T>): Promise<T> {
  if (db.backend !== 'postgres') return work();
  // A session of its own, outside the pool: the work needs the pool, which may be one connection.
  const holder = new pg.Client(db.pool.options);
  // A lost connection fails the query waiting on it; without a listener it would end the process.
  holder.on('error', () => {});
  await holder.connect();
  try {
    await holder.query('SELECT pg_advisory_lock(hashtextextended($1, 0))', [name]);
    return await work();
  } finally {
    // Ending the session releases its advisory locks.
    await holder.end().catch(() => {});
  }
}
