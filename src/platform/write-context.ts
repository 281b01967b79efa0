// One home for a write's context. Every state-changing transaction of a request is opened here, with
// who acts and through which request, so what must be written beside a change (its audit event) is
// written by one mechanism, in the change's own transaction, and not by every service on its own.
// A service declares what it did with `tx.audit({action, target, changes})`; the events are written
// by the recorder the audit module installs, after the work and before the commit, so a change never
// commits without its event and an event never describes a change that rolled back.
import type { Database, Queryable } from '../db/database.ts';
import type { Caller } from './caller.ts';

/** Who performs a write: a signed-in person or an API key (a Caller), the SCIM connector, the operator's CLI, or nobody yet (sign-in). */
export type Actor =
  | Caller
  | { kind: 'scim'; organizationId: string; connectorId: string }
  | { kind: 'system'; name: string }
  | { kind: 'anonymous' };

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

/** What a write did, as its service declares it (the recorder adds who, when and from where). */
export interface AuditEntry {
  /** Dotted, past tense: `mcp_connection.updated`, `member.role_changed`. */
  action: string;
  target: { type: string; id: string; name?: string | null | undefined };
  /** Changed fields' names and values; a secret's value is given as `redacted` (see `redacted`). */
  changes?: Record<string, unknown> | undefined;
  /** Default `success`. */
  outcome?: 'success' | 'denied' | 'failure';
  /** Whose log the event goes to; default the actor's organization (null: the instance's own log). */
  organizationId?: string | null;
  /** The user who acts when the context has nobody yet (sign-in, sign-up, bootstrap). */
  actorUserId?: string;
}

/** What a secret field's value is recorded as: never the value, never its hash. */
export const redacted = 'redacted';

/** Writes a transaction's audit events in that transaction (installed by the audit module). */
export type AuditRecorder = (tx: Queryable, context: WriteContext, entries: readonly AuditEntry[]) => Promise<void>;

let recorder: AuditRecorder | null = null;

/** Installs the one audit recorder (the audit module does, as the app or the CLI starts). */
export function installAuditRecorder(record: AuditRecorder): void {
  recorder = record;
}

/** A transaction that knows the write it carries out. */
export interface WriteTransaction extends Queryable {
  readonly context: WriteContext;
  /** Declares what this transaction did; written before it commits. */
  audit(entry: AuditEntry): void;
}

/** The context of a write made by the operator outside any request (the CLI, a scheduled job). */
export function systemContext(name: string): WriteContext {
  return { actor: { kind: 'system', name }, requestId: null, clientAddress: null, userAgent: null };
}

/** Runs `work` in one transaction that carries `context`; commits when it resolves, rolls back when it throws. */
export function writeTransaction<T>(
  db: Pick<Database, 'transaction'>,
  context: WriteContext,
  work: (tx: WriteTransaction) => Promise<T>,
): Promise<T> {
  return db.transaction(async (tx) => {
    const entries: AuditEntry[] = [];
    const result = await work({
      query: (text, params) => tx.query(text, params),
      context,
      audit: (entry) => void entries.push(entry),
    });
    if (entries.length > 0 && recorder) await recorder(tx, context, entries);
    return result;
  });
}
