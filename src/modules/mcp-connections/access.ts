// Who may do what with connections: the caller's standing in the organization, the access sets
// (members and teams who may use a connection), and the re-check of an acting admin inside a write.
import { isForeignKeyViolation } from '../../db/errors.ts';
import type { Queryable } from '../../db/database.ts';
import type { PermissionKey } from '../../platform/permissions.ts';
import type { Caller } from '../../http/caller.ts';
import { invalidRequest, missingPermission, notAnActiveMember, type ValidationDetail } from '../../http/errors.ts';
import { refusedLikeAuthenticate } from '../identity/index.ts';
import { writeTransaction, type CallerContext, type WriteTransaction } from '../../platform/write-context.ts';
import type { ConnectionDeps } from './deps.ts';
import type { ConnectionRow } from './contracts.ts';
import type { AccessSet } from './access-store.ts';
import { mcpConnectionErrors } from './error-codes.ts';

export const connectionNotFound = () =>
  mcpConnectionErrors.connection_not_found('No such MCP connection in this organization');

export interface Standing {
  organizationId: string;
  memberId: string | null;
  /** Holds mcp_connections.view: sees every connection, not only those they may use. */
  seesEvery: boolean;
}

export function organizationOf(caller: Caller): Standing {
  if (!caller.organizationId || !caller.role) throw notAnActiveMember();
  return {
    organizationId: caller.organizationId,
    memberId: caller.memberId,
    seesEvery: caller.permissions.has('mcp_connections.view'),
  };
}

/** The caller's standing, when they hold `permission` in the active organization (403 otherwise). */
export function requirePermission(caller: Caller, permission: PermissionKey): Standing {
  const org = organizationOf(caller);
  if (!caller.permissions.has(permission)) throw missingPermission(permission);
  return org;
}

/** The connection if the caller may see it: members see only connections they may use; others do not exist for them. */
export async function loadVisible(
  deps: Pick<ConnectionDeps, 'db' | 'store'>,
  caller: Caller,
  id: string,
): Promise<ConnectionRow> {
  const { organizationId, memberId, seesEvery } = organizationOf(caller);
  const row = await deps.store.findConnection(deps.db, organizationId, id);
  if (!row) throw connectionNotFound();
  if (!seesEvery && !(memberId && (await deps.store.memberMayUse(deps.db, organizationId, id, memberId))))
    throw connectionNotFound();
  return row;
}

/**
 * Dedupes the sets and refuses ids that are not members/teams of this organization, pointing at the
 * item. With `tx`, the members found stay share-locked until it ends.
 */
export async function checkAccess(
  deps: Pick<ConnectionDeps, 'db' | 'members' | 'teams'>,
  organizationId: string,
  access: AccessSet,
  path: string[],
  tx?: Queryable,
): Promise<AccessSet> {
  const memberIds = [...new Set(access.memberIds)];
  const teamIds = [...new Set(access.teamIds)];
  // One after the other: `tx` is a transaction's single client. Locked before any access row is
  // touched: a removal in progress is waited for (then the id is unknown), rather than it and this
  // write each waiting for the other's rows (a deadlock).
  const members =
    memberIds.length === 0
      ? []
      : tx
        ? await deps.members.lockMemberIds(tx, organizationId, memberIds)
        : await deps.members.listMemberIds(organizationId, memberIds);
  const teams = teamIds.length ? await deps.teams.listTeamIds(organizationId, teamIds, tx ?? deps.db) : [];
  const knownMembers = new Set(members);
  const knownTeams = new Set(teams);
  const details: ValidationDetail[] = [];
  access.memberIds.forEach((id, index) => {
    if (!knownMembers.has(id))
      details.push({ message: 'Not a member of this organization', path: [...path, 'memberIds', index], in: 'body' });
  });
  access.teamIds.forEach((id, index) => {
    if (!knownTeams.has(id))
      details.push({ message: 'Not a team of this organization', path: [...path, 'teamIds', index], in: 'body' });
  });
  if (details.length > 0) throw invalidRequest(details);
  return { orgWide: access.orgWide, memberIds, teamIds };
}

/**
 * A write of the calling admin (checked again first) that writes an access set, checked again
 * inside it: a member or team removed since an earlier check (while the server was probed, say) is
 * the same 400 as an unknown id. Members are locked; a team deleted by a concurrent transaction
 * between this check and the insert makes the foreign key refuse the insert; checked once more
 * after the rollback, that is the 400 too.
 *
 * The admin again, inside the write's transaction and share-locked until it ends: removed,
 * suspended or demoted since the request was authenticated (or one of those in progress), they get
 * what the route answers them now, and no row written for them can outlive their membership.
 */
export async function writeWithAccess<T>(
  deps: Pick<ConnectionDeps, 'db' | 'members' | 'teams'>,
  ctx: CallerContext,
  organizationId: string,
  requested: AccessSet,
  work: (tx: WriteTransaction, access: AccessSet) => Promise<T>,
): Promise<T> {
  try {
    return await writeTransaction(deps.db, ctx, async (tx) => {
      await deps.members.holdActingMember(tx, organizationId, ctx.actor.memberId, {
        permission: 'mcp_connections.manage',
        refuse: refusedLikeAuthenticate,
      });
      return work(tx, await checkAccess(deps, organizationId, requested, ['access'], tx));
    });
  } catch (error) {
    if (isForeignKeyViolation(error)) await checkAccess(deps, organizationId, requested, ['access']);
    throw error;
  }
}
