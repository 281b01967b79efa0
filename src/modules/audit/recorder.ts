// The one recorder of audit events, installed into platform/write-context.ts: every write transaction
// that declared what it did (`tx.audit(...)`) gets its events appended here, after its work and before
// its commit, with who acted (their name and e-mail read in the same transaction), from where, and
// through which request.
import type { Queryable } from '../../db/database.ts';
import { newId } from '../../platform/ids.ts';
import type { Actor, AuditEntry, WriteContext } from '../../platform/write-context.ts';
import { eventHash, type AuditEvent } from './chain.ts';
import * as store from './store.ts';

/** The organization an actor acts in, where an entry names none. */
function organizationOfActor(actor: Actor): string | null {
  if (actor.kind === 'session' || actor.kind === 'api_key' || actor.kind === 'scim') return actor.organizationId;
  return null;
}

async function describeActor(tx: Queryable, actor: Actor, userId: string | undefined): Promise<AuditEvent['actor']> {
  // The caller as read by the request's authentication (same request, so as they were at the time).
  if (actor.kind === 'session' && actor.userId && actor.name !== undefined) {
    return { type: 'user', id: actor.userId, name: actor.name ?? null, email: actor.email ?? null };
  }
  if (actor.kind === 'api_key' && actor.apiKeyId) {
    const name = actor.name !== undefined ? actor.name : await store.findApiKeyName(tx, actor.apiKeyId);
    return { type: 'api_key', id: actor.apiKeyId, name: name ?? null, email: null };
  }
  if (actor.kind === 'scim') return { type: 'scim', id: actor.connectorId, name: 'SCIM', email: null };
  if (actor.kind === 'system') return { type: 'system', id: actor.name, name: actor.name, email: null };
  const personId = actor.kind === 'session' ? actor.userId : userId;
  if (!personId) return { type: 'user', id: 'anonymous', name: null, email: null };
  const person = await store.findPerson(tx, personId);
  return { type: 'user', id: personId, name: person?.name ?? null, email: person?.email ?? null };
}

export async function recordAuditEvents(
  tx: Queryable,
  context: WriteContext,
  entries: readonly AuditEntry[],
): Promise<void> {
  const actors = new Map<string, AuditEvent['actor']>();
  const events: { chainId: string; event: AuditEvent }[] = [];
  for (const entry of entries) {
    const key = entry.actorUserId ?? '';
    let actor = actors.get(key);
    if (!actor) {
      actor = await describeActor(tx, context.actor, entry.actorUserId);
      actors.set(key, actor);
    }
    const organizationId =
      entry.organizationId !== undefined ? entry.organizationId : organizationOfActor(context.actor);
    events.push({
      chainId: store.chainOf(organizationId),
      event: {
        id: newId('aud'),
        organizationId,
        occurredAt: '',
        action: entry.action,
        outcome: entry.outcome ?? 'success',
        actor,
        target: { type: entry.target.type, id: entry.target.id, name: entry.target.name ?? null },
        ip: context.clientAddress,
        userAgent: context.userAgent,
        requestId: context.requestId,
        changes: entry.changes ?? null,
      },
    });
  }
  // Chains are locked in one order, so two transactions writing to the same two chains cannot deadlock.
  const chains = [...new Set(events.map((item) => item.chainId))].sort();
  for (const chainId of chains) {
    let head = await store.lockChainHead(tx, chainId);
    // Taken once the chain is held, so a chain's times never go backwards.
    const occurredAt = new Date().toISOString();
    for (const { event } of events.filter((item) => item.chainId === chainId)) {
      event.occurredAt = occurredAt;
      // Round-tripped through JSON as jsonb will give it back (undefined dropped, dates as strings).
      if (event.changes) event.changes = JSON.parse(JSON.stringify(event.changes)) as Record<string, unknown>;
      const seq = head.seq + 1;
      const hash = eventHash(event, seq, head.hash);
      await store.appendEvent(tx, chainId, seq, event, head.hash, hash);
      head = { seq, hash };
    }
  }
}
