// One home for a write's context. Every state-changing transaction of a request is opened here, with
// who acts and through which request, so what must be written beside a change (the audit record of a
// later issue) is written by one mechanism, in the change's own transaction, and not by every service.
import type { Database, Queryable } from '../db/database.ts';
import type { Caller } from '../http/caller.ts';

/** Who performs a write: a signed-in person or an API key (a Caller), the SCIM connector, or the operator's CLI. */
export type Actor =
  | Caller
  | { kind: 'scim'; organizationId: string; connectorId: string }
  | { kind: 'system'; name: string };

export interface WriteContext {
  actor: Actor;
  /** The request's id (X-Request-Id); null outside a request (CLI, jobs). */
  requestId: string | null;
  /** The client's address as trusted by TRUSTED_PROXIES; null outside a request. */
  clientAddress: string | null;
  userAgent: string | null;
}

/** The context of a write made by a request's authenticated caller: services read the caller from it. */
export interface CallerContext extends WriteContext {
  actor: Caller;
}

/** A transaction that knows the write it carries out. */
export interface WriteTransaction extends Queryable {
  readonly context: WriteContext;
}

/** The context of a write made by the operator outside any request (the CLI, a scheduled job). */
export function systemContext(name: string): WriteContext {
  return { actor: { kind: 'system', name }, requestId: null, clientAddress: null, userAgent: null };
}

/** Runs `work` in one transaction that carries `context`; commits when it resolves, rolls back when it throws. */
export function writeTransaction<T>(db: Pick<Database, 'transaction'>, context: WriteContext, work: (tx: WriteTransaction) => Promise<T>): Promise<T> {
  return db.transaction((tx) => work({ query: (text, params) => tx.query(text, params), context }));
}
