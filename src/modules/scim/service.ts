// The SCIM service: the connector's token (token.ts), Users (users.ts) and Groups (groups.ts), each a
// set of functions over the same dependencies (context.ts), bound to them here for the routes.
import type { CallerContext } from '../../platform/write-context.ts';
import type { Caller } from '../identity/index.ts';
import type { ScimConnector, ScimContext, ScimDeps } from './context.ts';
import type { Paging } from './documents.ts';
import * as groups from './groups.ts';
import type { ConnectorRow } from './store.ts';
import * as token from './token.ts';
import * as users from './users.ts';

export type { ScimConnector, ScimContext } from './context.ts';
export type { ConnectorRow };

export function createScimService(deps: ScimDeps) {
  return {
    baseUrl: deps.baseUrl,

    // ---- the session-authenticated management routes ----
    rotateToken: (ctx: CallerContext) => token.rotateToken(deps, ctx),
    getConnection: (caller: Caller) => token.getConnection(deps, caller),

    // ---- the SCIM server ----
    authenticate: (bearer: string | undefined) => token.authenticate(deps, bearer),
    recordFailure: (ctx: ScimConnector, action: string, message: string) =>
      deps.store.recordFailure(deps.db, ctx.organizationId, action, message.slice(0, 1000)),
    recordSuccess: (ctx: ScimConnector) => deps.store.recordSuccess(deps.db, ctx.organizationId),

    listUsers: (ctx: ScimConnector, query: { filter?: string | undefined; paging: Paging }) =>
      users.listUsers(deps, ctx, query),
    getUser: (ctx: ScimConnector, id: string) => users.getUser(deps, ctx, id),
    createUser: (ctx: ScimContext, body: unknown) => users.createUser(deps, ctx, body),
    replaceUser: (ctx: ScimContext, id: string, body: unknown) => users.replaceUser(deps, ctx, id, body),
    patchUser: (ctx: ScimContext, id: string, body: unknown) => users.patchUser(deps, ctx, id, body),
    deleteUser: (ctx: ScimContext, id: string) => users.deleteUser(deps, ctx, id),

    listGroups: (ctx: ScimConnector, query: { filter?: string | undefined; paging: Paging; excludeMembers: boolean }) =>
      groups.listGroups(deps, ctx, query),
    getGroup: (ctx: ScimConnector, id: string) => groups.getGroup(deps, ctx, id),
    createGroup: (ctx: ScimContext, body: unknown) => groups.createGroup(deps, ctx, body),
    replaceGroup: (ctx: ScimContext, id: string, body: unknown) => groups.replaceGroup(deps, ctx, id, body),
    patchGroup: (ctx: ScimContext, id: string, body: unknown) => groups.patchGroup(deps, ctx, id, body),
    deleteGroup: (ctx: ScimContext, id: string) => groups.deleteGroup(deps, ctx, id),
  };
}

export type ScimService = ReturnType<typeof createScimService>;
