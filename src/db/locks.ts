// Named locks (PostgreSQL's advisory locks), for the cases a row lock cannot cover: serializing work
// on something that has no row yet, such as the first connection of an organization or the first
// registration of a client (held until the transaction ends).
import type { Queryable } from './database.ts';

/** Waits until no other transaction holds the lock named `name`, then holds it until this one ends. */
export async function lockUntilCommit(tx: Queryable, name: string): Promise<void> {
  await tx.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [name]);
}
