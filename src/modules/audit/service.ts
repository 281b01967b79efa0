// Reading the audit log (list, export, verify) and recording refusals of privileged calls.
import type { Database } from '../../db/database.ts';
import type { Caller, Role } from '../../http/caller.ts';
import type { MembershipCore } from '../identity/index.ts';
import { verifyChain, genesisHash, type AuditEvent, type Verification } from './chain.ts';
import * as store from './store.ts';

const auditorRoles: readonly Role[] = ['owner', 'admin'];
const exportPageSize = 1000;
const verifyPageSize = 1000;

export interface AuditServiceDeps {
  db: Database;
  membership: Pick<MembershipCore, 'requireMembership'>;
}

export type EventQuery = Omit<store.EventFilter, 'organizationId' | 'afterSeq'>;

/** Verifies one chain from its checkpoint (or its start) to its newest event. */
export async function verifyChainOf(db: Database, chainId: string): Promise<Verification> {
  const start = (await store.findCheckpoint(db, chainId)) ?? { seq: 0, hash: genesisHash };
  return verifyChain(start, async (afterSeq) =>
    (await store.chainPage(db, chainId, afterSeq, verifyPageSize)).map((row) => ({ event: store.toEvent(row), seq: row.seq, prevHash: row.prev_hash, hash: row.hash })));
}

export function createAuditService(deps: AuditServiceDeps) {
  const { db, membership } = deps;
  return {
    /** Newest first; `limit` events and the position to continue before, if there are more. */
    async list(caller: Caller, organizationId: string, query: EventQuery, limit: number): Promise<{ events: AuditEvent[]; nextBeforeSeq: number | null }> {
      await membership.requireMembership(caller, organizationId, auditorRoles);
      const rows = await store.listEvents(db, { ...query, organizationId }, limit + 1);
      const page = rows.slice(0, limit);
      return { events: page.map(store.toEvent), nextBeforeSeq: rows.length > limit ? page[page.length - 1]!.seq : null };
    },

    /** Checks the caller may export; the events then come from `exportEvents`. */
    async requireAuditor(caller: Caller, organizationId: string): Promise<void> {
      await membership.requireMembership(caller, organizationId, auditorRoles);
    },

    /** Oldest first, read a page at a time as the consumer asks for more (memory stays flat). */
    async *exportEvents(organizationId: string, range: { since?: string | undefined; until?: string | undefined }): AsyncGenerator<AuditEvent> {
      let afterSeq = 0;
      for (;;) {
        const rows = await store.listEventsAscending(db, { organizationId, ...range, afterSeq }, exportPageSize);
        for (const row of rows) yield store.toEvent(row);
        if (rows.length < exportPageSize) return;
        afterSeq = rows[rows.length - 1]!.seq;
      }
    },

    async verify(caller: Caller, organizationId: string): Promise<Verification> {
      await membership.requireMembership(caller, organizationId, auditorRoles);
      return verifyChainOf(db, store.chainOf(organizationId));
    },
  };
}

export type AuditService = ReturnType<typeof createAuditService>;
