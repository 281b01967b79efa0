// The connections as the OAuth flows (./oauth/) see them: ConnectionRecords (contracts.ts) over the store.
import { recordCatalog } from './catalog-store.ts';
import type { ConnectionRecords } from './contracts.ts';
import { createConnectionStore, type ConnectionStore } from './store.ts';

export function connectionRecords(store: ConnectionStore = createConnectionStore()): ConnectionRecords {
  return {
    findConnection: (q, organizationId, id, lock) => store.findConnection(q, organizationId, id, lock),
    holdConnection: (q, organizationId, id) => store.holdConnection(q, organizationId, id),
    memberMayUse: (q, organizationId, connectionId, memberId) =>
      store.memberMayUse(q, organizationId, connectionId, memberId),
    recordCatalog,
  };
}
