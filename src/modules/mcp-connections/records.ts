// What the OAuth flows (./oauth/) use of connections, and nothing more: they read a connection, hold it
// while they write rows that name it, and ask whether a member may use it. The connections service
// never hands out its store.
import type { Queryable } from '../../db/database.ts';
import { createConnectionStore, type ConnectionRow, type ConnectionStore } from './store.ts';

export interface ConnectionRecords {
  /** The connection; with `lock`, row-locked (FOR UPDATE) until the transaction ends. */
  findConnection(q: Queryable, organizationId: string, id: string, lock?: boolean): Promise<ConnectionRow | undefined>;
  /** Whether the connection exists, key-share locked until the transaction ends (a DELETE waits; an edit does not). */
  holdConnection(q: Queryable, organizationId: string, id: string): Promise<boolean>;
  /** Whether the member is granted the connection (org-wide, directly, or through a team). */
  memberMayUse(q: Queryable, organizationId: string, connectionId: string, memberId: string): Promise<boolean>;
}

export function connectionRecords(store: ConnectionStore = createConnectionStore()): ConnectionRecords {
  return {
    findConnection: (q, organizationId, id, lock) => store.findConnection(q, organizationId, id, lock),
    holdConnection: (q, organizationId, id) => store.holdConnection(q, organizationId, id),
    memberMayUse: (q, organizationId, connectionId, memberId) =>
      store.memberMayUse(q, organizationId, connectionId, memberId),
  };
}
