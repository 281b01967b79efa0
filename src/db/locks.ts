// Named locks held until the transaction ends (PostgreSQL's transaction-scoped advisory locks), for
// the cases a row lock cannot cover: serializing work on something that has no row yet, such as
// the first connection of an organization or the first registration of a client.
import type { Database, Queryable } from './database.ts';

/** Waits until no other transaction holds the lock named `name`, then holds it until this one ends. */
export async function lockUntilCommit(tx: Queryable, name: string): Promise<void> {
  await tx.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [name]);
}

/**
 * Runs `work` while holding the lock named `name` across processes, for work that spans several
 * transactions (on other connections) and must not run twice at once. The lock is held on a
 * connection of its own. On PGlite, which serves one process, `work` just runs.
 */
export async function whileHoldingLock<T>(db: Database, name: string, work: () => Promise<T>): Promise<T> {
  if (db.backend !== 'postgres') return work();
  const holder = await db.pool.connect();
  let broken: Error | undefined;
  try {
    await holder.query('SELECT pg_advisory_lock(hashtextextended($1, 0))', [name]);
    try {
      return await work();
    } finally {
      await holder.query('SELECT pg_advisory_unlock(hashtextextended($1, 0))', [name]).catch((error: Error) => (broken = error));
    }
  } catch (error) {
    broken ??= error instanceof Error ? error : undefined;
    throw error;
  } finally {
    // A connection whose unlock failed may still hold the lock: it is closed, not reused.
    holder.release(broken);
  }
}
