// The connection and the member as the OAuth flows check them: which connections a caller may see,
// holding a connection while rows naming it are written, and who may connect which identity.
import type { Queryable } from '../../../db/database.ts';
import type { Caller } from '../../../http/caller.ts';
import { missingPermission } from '../../../http/errors.ts';
import type { PermissionKey } from '../../../platform/permissions.ts';
import type { ConnectionRow } from '../contracts.ts';
import type { OAuthDeps } from './deps.ts';
import type { PendingAuthorizationRow } from './store.ts';
import { mcpConnectionErrors } from '../error-codes.ts';

export const connectionNotFound = () => mcpConnectionErrors.connection_not_found('No such MCP connection');
export const sharedNeedsAdmin = () =>
  missingPermission(
    'mcp_connections.manage',
    'Connecting the shared identity of a connection needs mcp_connections.manage',
  );

/** The connection as the caller may see it: 404 for unknown ids, other organizations, and members without access. */
export async function visibleConnection(
  deps: Pick<OAuthDeps, 'db' | 'connections'>,
  caller: Caller,
  connectionId: string,
): Promise<ConnectionRow> {
  const organizationId = caller.organizationId!;
  const connection = await deps.connections.findConnection(deps.db, organizationId, connectionId);
  if (!connection) throw connectionNotFound();
  if (!caller.permissions.has('mcp_connections.view')) {
    if (
      !caller.memberId ||
      !(await deps.connections.memberMayUse(deps.db, organizationId, connectionId, caller.memberId))
    ) {
      throw connectionNotFound();
    }
  }
  return connection;
}

/**
 * In a transaction that writes rows of the connection: the connection key-share locked until it
 * ends, so a DELETE waits for the write (or, come first, makes it 404) instead of the foreign key
 * refusing the write.
 */
export async function holdConnection(
  deps: Pick<OAuthDeps, 'connections'>,
  tx: Queryable,
  connection: ConnectionRow,
): Promise<void> {
  if (!(await deps.connections.holdConnection(tx, connection.organizationId, connection.id)))
    throw connectionNotFound();
}

/** Whether the member who started `pending` (their keys if still active, else null) may connect its identity. */
export async function mayConnect(
  deps: Pick<OAuthDeps, 'connections'>,
  q: Queryable,
  pending: PendingAuthorizationRow,
  connection: ConnectionRow,
  permissions: ReadonlySet<PermissionKey> | null,
): Promise<boolean> {
  if (permissions === null) return false;
  if (pending.subject === 'shared')
    return permissions.has('mcp_connections.manage') && connection.credentialMode === 'shared';
  return (
    connection.credentialMode === 'per_member' &&
    (permissions.has('mcp_connections.view') ||
      (await deps.connections.memberMayUse(q, pending.organization_id, connection.id, pending.member_id)))
  );
}
