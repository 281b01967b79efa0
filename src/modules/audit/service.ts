// Reading the audit log (list, export, verify) and recording refusals of privileged calls.
import type { Database } from '../../db/database.ts';
import type { Caller } from '../../http/caller.ts';
import type { PermissionKey } from '../../platform/permissions.ts';
import type { MembershipAuthorization } from '../identity/index.ts';
import { verifyChain, genesisHash, type AuditEvent, type Verification } from './chain.ts';
import { textPage, type ExportFormat } from './export-text.ts';
import * as store from './store.ts';

const viewAudit: PermissionKey = 'audit.view';
// About 100 kB of text a page: below V8's large-object size, and few queries.
const exportPageSize = 200;
const verifyPageSize = 1000;

export interface AuditServiceDeps {
  db: Database;
  membership: Pick<MembershipAuthorization, 'requireMembership'>;
}

export type EventQuery = Omit<store.EventFilter, 'organizationId' | 'afterSeq'>;

/** Verifies one chain from its checkpoint (or its start) to its newest event. */
export async function verifyChainOf(db: Database, chainId: string): Promise<Verification> {
  const start = (await store.findCheckpoint(db, chainId)) ?? { seq: 0, hash: genesisHash };
  return verifyChain(start, async (afterSeq) =>
    (await store.chainPage(db, chainId, afterSeq, verifyPageSize)).map((row) => ({
      event: store.toEvent(row),
      seq: row.seq,
      prevHash: row.prev_hash,
      hash: row.hash,
    })),
  );
}

export interface EventPage {
  events: AuditEvent[];
  nextBeforeSeq: number | null;
}

/** A chain's events, newest first: `limit` of them and the position to continue before, if there are more. */
async function listChain(db: Database, chainId: string, query: EventQuery, limit: number): Promise<EventPage> {
  const rows = await store.listEvents(db, { ...query, organizationId: chainId }, limit + 1);
  const page = rows.slice(0, limit);
  return {
    events: page.map(store.toEvent),
    nextBeforeSeq: rows.length > limit ? page[page.length - 1]!.seq : null,
  };
}

/**
 * Oldest first, a page of text at a time (export-text.ts): the next page is read only when the
 * consumer asks for it (the reply stream's backpressure), so memory holds about one page, whatever
 * the range's size. Keyset pages (short queries, `seq > last`) rather than one cursor held open: on
 * PGlite the one connection would be the export's for its whole duration, and every other request
 * would wait.
 */
async function* exportChain(
  db: Database,
  chainId: string,
  range: { since?: string | undefined; until?: string | undefined },
  format: ExportFormat,
): AsyncGenerator<string> {
  let afterSeq = 0;
  for (;;) {
    const page = await textPage(db, { organizationId: chainId, ...range, afterSeq }, exportPageSize, format);
    if (page.count > 0) yield page.text;
    if (page.count < exportPageSize) return;
    afterSeq = page.lastSeq;
  }
}

/**
 * The instance's own chain: events that belong to no organization (instance administration, a failed
 * sign-in of an unknown account). Its reader judges nobody: the instance-administration routes that use
 * it let only instance administrators in.
 */
export function createInstanceAuditLog(db: Database) {
  return {
    list: (query: EventQuery, limit: number) => listChain(db, store.instanceChain, query, limit),
    exportText: (range: { since?: string | undefined; until?: string | undefined }, format: ExportFormat) =>
      exportChain(db, store.instanceChain, range, format),
    verify: () => verifyChainOf(db, store.instanceChain),
  };
}

export function createAuditService(deps: AuditServiceDeps) {
  const { db, membership } = deps;
  return {
    /** Newest first; `limit` events and the position to continue before, if there are more. */
    async list(caller: Caller, organizationId: string, query: EventQuery, limit: number): Promise<EventPage> {
      await membership.requireMembership(caller, organizationId, viewAudit);
      return listChain(db, organizationId, query, limit);
    },

    /** Checks the caller may export; the events then come from `exportEvents`. */
    async requireAuditor(caller: Caller, organizationId: string): Promise<void> {
      await membership.requireMembership(caller, organizationId, 'audit.export');
    },

    exportText: (
      organizationId: string,
      range: { since?: string | undefined; until?: string | undefined },
      format: ExportFormat,
    ): AsyncGenerator<string> => exportChain(db, organizationId, range, format),

    async verify(caller: Caller, organizationId: string): Promise<Verification> {
      await membership.requireMembership(caller, organizationId, viewAudit);
      return verifyChainOf(db, store.chainOf(organizationId));
    },
  };
}

export type AuditService = ReturnType<typeof createAuditService>;
