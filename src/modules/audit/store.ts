// SQL of the audit log: appending events to an organization's chain, reading them back.
import type { Queryable } from '../../db/database.ts';
import { genesisHash, type AuditEvent } from './chain.ts';

export interface AuditRow {
  id: string;
  chain_id: string;
  seq: number;
  organization_id: string | null;
  occurred_at: Date;
  action: string;
  outcome: AuditEvent['outcome'];
  actor_type: string;
  actor_id: string;
  actor_name: string | null;
  actor_email: string | null;
  target_type: string;
  target_id: string;
  target_name: string | null;
  ip: string | null;
  user_agent: string | null;
  request_id: string | null;
  changes: Record<string, unknown> | null;
  prev_hash: string;
  hash: string;
}

export const instanceChain = 'instance';
export const chainOf = (organizationId: string | null) => organizationId ?? instanceChain;

export function toEvent(row: AuditRow): AuditEvent {
  return {
    id: row.id,
    organizationId: row.organization_id,
    occurredAt: row.occurred_at.toISOString(),
    action: row.action,
    outcome: row.outcome,
    actor: { type: row.actor_type, id: row.actor_id, name: row.actor_name, email: row.actor_email },
    target: { type: row.target_type, id: row.target_id, name: row.target_name },
    ip: row.ip,
    userAgent: row.user_agent,
    requestId: row.request_id,
    changes: row.changes,
  };
}

/**
 * Holds the chain until the transaction ends (appends of one chain are serialized) and returns its
 * last link: the newest event's seq and hash, or the retention checkpoint's, or the chain's start.
 * One statement: the upsert locks the head row (waiting for an append in progress and then reading
 * what it committed), and creates it for a chain's first event.
 */
export async function lockChainHead(tx: Queryable, chainId: string): Promise<{ seq: number; hash: string }> {
  const { rows } = await tx.query<{ seq: number; hash: string }>(
    `INSERT INTO audit_chain_heads (chain_id, seq, hash) VALUES ($1, 0, $2)
     ON CONFLICT (chain_id) DO UPDATE SET seq = audit_chain_heads.seq
     RETURNING seq, hash`,
    [chainId, genesisHash],
  );
  return rows[0]!;
}

/** Appends the event at `seq` and makes it the chain's head (the chain is held: lockChainHead). */
export async function appendEvent(
  tx: Queryable,
  chainId: string,
  seq: number,
  event: AuditEvent,
  prevHash: string,
  hash: string,
): Promise<void> {
  await tx.query(
    `WITH head AS (UPDATE audit_chain_heads SET seq = $3, hash = $20 WHERE chain_id = $2)
     INSERT INTO audit_events (id, chain_id, seq, organization_id, occurred_at, action, outcome, actor_type, actor_id, actor_name, actor_email,
       target_type, target_id, target_name, ip, user_agent, request_id, changes, prev_hash, hash)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20)`,
    [
      event.id,
      chainId,
      seq,
      event.organizationId,
      event.occurredAt,
      event.action,
      event.outcome,
      event.actor.type,
      event.actor.id,
      event.actor.name,
      event.actor.email,
      event.target.type,
      event.target.id,
      event.target.name,
      event.ip,
      event.userAgent,
      event.requestId,
      event.changes === null ? null : JSON.stringify(event.changes),
      prevHash,
      hash,
    ],
  );
}

/** A person's name and e-mail as they are now (read in the writing transaction: as they were at the time). */
export async function findPerson(tx: Queryable, userId: string): Promise<{ name: string; email: string } | undefined> {
  const { rows } = await tx.query<{ name: string; email: string }>('SELECT name, email FROM users WHERE id = $1', [
    userId,
  ]);
  return rows[0];
}

export async function findApiKeyName(tx: Queryable, apiKeyId: string): Promise<string | undefined> {
  const { rows } = await tx.query<{ name: string }>('SELECT name FROM api_keys WHERE id = $1', [apiKeyId]);
  return rows[0]?.name;
}

export interface EventFilter {
  organizationId: string;
  actor?: string | undefined;
  actionPrefix?: string | undefined;
  target?: string | undefined;
  outcome?: string | undefined;
  since?: string | undefined;
  until?: string | undefined;
  /** Events older than this position of the chain (the cursor). */
  beforeSeq?: number | undefined;
  /** Events newer than this position (exports read oldest first). */
  afterSeq?: number | undefined;
}

export function whereOf(filter: EventFilter): { sql: string; params: unknown[] } {
  // An organization's events are its chain: chain_id is its id, and the column audit_events is keyed
  // (and distributed) by.
  const params: unknown[] = [filter.organizationId];
  const clauses = ['chain_id = $1'];
  const add = (clause: (n: string) => string, value: unknown) => {
    params.push(value);
    clauses.push(clause(`$${params.length}`));
  };
  if (filter.actor !== undefined) add((n) => `(actor_id = ${n} OR lower(actor_email) = lower(${n}))`, filter.actor);
  if (filter.actionPrefix !== undefined) add((n) => `left(action, length(${n})) = ${n}`, filter.actionPrefix);
  if (filter.target !== undefined) add((n) => `target_id = ${n}`, filter.target);
  if (filter.outcome !== undefined) add((n) => `outcome = ${n}`, filter.outcome);
  if (filter.since !== undefined) add((n) => `occurred_at >= ${n}`, filter.since);
  if (filter.until !== undefined) add((n) => `occurred_at < ${n}`, filter.until);
  if (filter.beforeSeq !== undefined) add((n) => `seq < ${n}`, filter.beforeSeq);
  if (filter.afterSeq !== undefined) add((n) => `seq > ${n}`, filter.afterSeq);
  return { sql: clauses.join(' AND '), params };
}

/** Newest first. */
export async function listEvents(db: Queryable, filter: EventFilter, limit: number): Promise<AuditRow[]> {
  const where = whereOf(filter);
  const { rows } = await db.query<AuditRow>(
    `SELECT * FROM audit_events WHERE ${where.sql} ORDER BY seq DESC LIMIT ${Math.trunc(limit)}`,
    where.params,
  );
  return rows;
}

/** A chain's events after `afterSeq`, in order (verification). */
export async function chainPage(db: Queryable, chainId: string, afterSeq: number, limit: number): Promise<AuditRow[]> {
  const { rows } = await db.query<AuditRow>(
    `SELECT * FROM audit_events WHERE chain_id = $1 AND seq > $2 ORDER BY seq ASC LIMIT ${Math.trunc(limit)}`,
    [chainId, afterSeq],
  );
  return rows;
}

export async function findCheckpoint(
  db: Queryable,
  chainId: string,
): Promise<{ seq: number; hash: string } | undefined> {
  const { rows } = await db.query<{ seq: number; hash: string }>(
    'SELECT seq, hash FROM audit_checkpoints WHERE chain_id = $1',
    [chainId],
  );
  return rows[0];
}

export async function listChains(db: Queryable): Promise<string[]> {
  const { rows } = await db.query<{ chain_id: string }>('SELECT DISTINCT chain_id FROM audit_events ORDER BY chain_id');
  return rows.map((row) => row.chain_id);
}

/** Chains with events older than `before`. */
export async function chainsWithEventsBefore(db: Queryable, before: Date): Promise<string[]> {
  const { rows } = await db.query<{ chain_id: string }>(
    'SELECT DISTINCT chain_id FROM audit_events WHERE occurred_at < $1',
    [before],
  );
  return rows.map((row) => row.chain_id);
}

/**
 * Prunes a chain's events older than `before`, in the caller's transaction, holding the chain (appends
 * wait): the newest pruned event's position and hash become the chain's checkpoint, where verification
 * starts. Returns how many events were removed.
 */
export async function pruneChain(tx: Queryable, chainId: string, before: Date): Promise<number> {
  await lockChainHead(tx, chainId);
  const { rows } = await tx.query<{ seq: number; hash: string }>(
    'SELECT seq, hash FROM audit_events WHERE chain_id = $1 AND occurred_at < $2 ORDER BY seq DESC LIMIT 1',
    [chainId, before],
  );
  const last = rows[0];
  if (!last) return 0;
  await tx.query(
    `INSERT INTO audit_checkpoints (chain_id, seq, hash) VALUES ($1, $2, $3)
     ON CONFLICT (chain_id) DO UPDATE SET seq = excluded.seq, hash = excluded.hash, pruned_at = excluded.pruned_at`,
    [chainId, last.seq, last.hash],
  );
  const { rowCount } = await tx.query('DELETE FROM audit_events WHERE chain_id = $1 AND seq <= $2', [
    chainId,
    last.seq,
  ]);
  return rowCount ?? 0;
}

/**
 * Erasing an organization: its whole chain (the head first, so an append in flight finishes before, and its
 * events, checkpoint and stream go with it). What the organization did goes with it; who deleted it is an
 * event of the instance's chain, which the deletion writes after this.
 */
export async function eraseOrganizationLog(tx: Queryable, organizationId: string): Promise<void> {
  await tx.query('DELETE FROM audit_chain_heads WHERE chain_id = $1', [organizationId]);
  await tx.query('DELETE FROM audit_streams WHERE organization_id = $1', [organizationId]);
  await tx.query('DELETE FROM audit_events WHERE chain_id = $1', [organizationId]);
  await tx.query('DELETE FROM audit_checkpoints WHERE chain_id = $1', [organizationId]);
}
