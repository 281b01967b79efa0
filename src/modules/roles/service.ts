// Custom roles: created, changed and deleted by holders of roles.manage, never with a key they do not
// hold; the built-in roles listed beside them; and where each key a member holds comes from.
import type { Database, Queryable } from '../../db/database.ts';
import type { FreshAuthenticationCheck } from '../../http/auth.ts';
import type { Caller } from '../../http/caller.ts';
import { missingPermission } from '../../http/errors.ts';
import { idPrefixes, newId } from '../../platform/ids.ts';
import {
  type BuiltInRole,
  builtInRoleKeys,
  isBuiltInRole,
  isPermissionKey,
  type PermissionKey,
} from '../../platform/permissions.ts';
import { writeTransaction, type CallerContext } from '../../platform/write-context.ts';
import { identityErrors, membershipRefusals, type MembershipAuthorization } from '../identity/index.ts';
import type { RoleGrants, RoleRow } from './contracts.ts';
import { roleErrors } from './error-codes.ts';
import * as store from './store.ts';

const manageRoles: PermissionKey = 'roles.manage';
const builtInRoles: readonly BuiltInRole[] = ['owner', 'admin', 'member'];

/** A role as the API shows it: a built-in one (its keys from the catalog) or a custom one. */
export interface RoleView {
  id: string;
  name: string;
  description: string;
  permissions: PermissionKey[];
  builtIn: boolean;
  memberCount: number;
  createdAt: Date | null;
  updatedAt: Date | null;
}

const builtInDescriptions: Record<BuiltInRole, string> = {
  owner: 'Holds every permission; ownership moves only by transfer',
  admin: 'Manages the organization: members, teams, connections, SSO, SCIM, the audit log, bots',
  member: 'Uses the organization: its MCP connections, install links and their own memory',
};

export interface RoleInput {
  name: string;
  description?: string | undefined;
  permissions: string[];
}

export interface RoleServiceDeps {
  db: Database;
  membership: Pick<MembershipAuthorization, 'requireMembership' | 'holdActingMember'>;
}

/** The keys of `permissions` that are not in the catalog: 400 unknown_permission naming them. */
function requireKnownKeys(permissions: string[]): PermissionKey[] {
  const unknown = permissions.filter((key) => !isPermissionKey(key));
  if (unknown.length > 0) {
    // The unknown values are not repeated back: `details` points at each by its place in the list.
    throw roleErrors.unknown_permission(
      `${unknown.length} of the keys are not in the permission catalog (GET /v1/permissions)`,
      {
        details: unknown.map((key) => ({
          message: 'Not a key of the permission catalog',
          path: ['permissions', permissions.indexOf(key)],
        })),
      },
    );
  }
  return [...new Set(permissions as PermissionKey[])].sort();
}

/** 403 permission_not_held unless `grantor` holds every key of `keys`. */
function requireHeld(keys: Iterable<PermissionKey>, grantor: ReadonlySet<PermissionKey>, what: string): void {
  const missing = [...keys].filter((key) => !grantor.has(key));
  if (missing.length > 0)
    throw roleErrors.permission_not_held(`${what} needs keys you do not hold: ${missing.join(', ')}`, {
      missingPermissions: missing,
    });
}

const customView = (row: RoleRow, memberCount: number): RoleView => ({
  id: row.id,
  name: row.name,
  description: row.description,
  permissions: row.permissions.filter(isPermissionKey).sort(),
  builtIn: false,
  memberCount,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

const builtInView = (role: BuiltInRole, memberCount: number): RoleView => ({
  id: role,
  name: role,
  description: builtInDescriptions[role],
  permissions: [...builtInRoleKeys(role)].sort(),
  builtIn: true,
  memberCount,
  createdAt: null,
  updatedAt: null,
});

/** What other modules use: whether a role may be given (RoleGrants). */
export function createRoleGrants(): RoleGrants {
  return {
    async requireGrantable(tx, organizationId, role, grantor) {
      if (isBuiltInRole(role)) {
        // The owner's role is never given: ownership moves only by transfer (the schemas refuse it first).
        requireHeld(builtInRoleKeys(role), grantor, `The role ${role}`);
        return;
      }
      const row = await store.lockRole(tx, organizationId, role, 'share');
      if (!row) throw roleErrors.role_not_found(`No role ${role} in this organization`);
      requireHeld(row.permissions.filter(isPermissionKey), grantor, `The role ${row.name}`);
    },
  };
}

export function createRoleService(deps: RoleServiceDeps) {
  const { db, membership } = deps;

  /** Refuses a name another role has (a built-in name included). */
  async function requireFreeName(q: Queryable, organizationId: string, name: string, exceptId?: string) {
    if (
      builtInRoles.some((role) => role === name.toLowerCase()) ||
      (await store.nameTaken(q, organizationId, name, exceptId))
    )
      throw roleErrors.role_name_taken(`A role named ${name} exists already`);
  }

  /** The custom role, locked for a change; 409 for a built-in one, 404 for one the organization lacks. */
  async function lockCustomRole(tx: Queryable, organizationId: string, roleId: string): Promise<RoleRow> {
    if (isBuiltInRole(roleId))
      throw roleErrors.role_protected(`The built-in role ${roleId} cannot be changed or deleted`);
    const row = await store.lockRole(tx, organizationId, roleId, 'update');
    if (!row) throw roleErrors.role_not_found(`No role ${roleId} in this organization`);
    return row;
  }

  /** Opens the write of a role change: the caller holds roles.manage (checked again, held) and is recent enough. */
  async function changeRoles<T>(
    ctx: CallerContext,
    organizationId: string,
    requireFresh: FreshAuthenticationCheck,
    change: (
      tx: Parameters<Parameters<typeof writeTransaction>[2]>[0],
      grantor: ReadonlySet<PermissionKey>,
    ) => Promise<T>,
  ): Promise<T> {
    const acting = await membership.requireMembership(ctx.actor, organizationId, manageRoles);
    requireFresh();
    return writeTransaction(db, ctx, async (tx) => {
      const held = await membership.holdActingMember(tx, organizationId, acting.memberId, {
        permission: manageRoles,
        refuse: membershipRefusals(),
      });
      return change(tx, held?.permissions ?? acting.permissions);
    });
  }

  return {
    async listRoles(caller: Caller, organizationId: string): Promise<RoleView[]> {
      await membership.requireMembership(caller, organizationId);
      const [rows, counts] = await Promise.all([
        store.listRoles(db, organizationId),
        store.memberCounts(db, organizationId),
      ]);
      return [
        ...builtInRoles.map((role) => builtInView(role, counts.get(role) ?? 0)),
        ...rows.map((row) => customView(row, counts.get(row.id) ?? 0)),
      ];
    },

    async createRole(
      ctx: CallerContext,
      organizationId: string,
      input: RoleInput,
      requireFresh: FreshAuthenticationCheck,
    ) {
      const permissions = requireKnownKeys(input.permissions);
      return changeRoles(ctx, organizationId, requireFresh, async (tx, grantor) => {
        requireHeld(permissions, grantor, 'This role');
        await requireFreeName(tx, organizationId, input.name);
        const row = await store.insertRole(tx, {
          organizationId,
          id: newId(idPrefixes.role),
          name: input.name,
          description: input.description ?? '',
          permissions,
        });
        if (!row) throw roleErrors.role_name_taken(`A role named ${input.name} exists already`);
        tx.audit({
          action: 'role.created',
          organizationId,
          target: { type: 'role', id: row.id, name: row.name },
          changes: { name: row.name, description: row.description, permissions },
        });
        return customView(row, 0);
      });
    },

    async updateRole(
      ctx: CallerContext,
      organizationId: string,
      roleId: string,
      input: Partial<RoleInput>,
      requireFresh: FreshAuthenticationCheck,
    ) {
      const permissions = input.permissions === undefined ? undefined : requireKnownKeys(input.permissions);
      return changeRoles(ctx, organizationId, requireFresh, async (tx, grantor) => {
        const before = await lockCustomRole(tx, organizationId, roleId);
        // A role more powerful than the caller is not theirs to change, nor to make so.
        requireHeld(before.permissions.filter(isPermissionKey), grantor, 'Changing this role');
        if (permissions) requireHeld(permissions, grantor, 'This role');
        const name = input.name ?? before.name;
        if (input.name !== undefined) await requireFreeName(tx, organizationId, name, roleId);
        const after = await store.updateRole(tx, organizationId, roleId, {
          name,
          description: input.description ?? before.description,
          permissions: permissions ?? before.permissions,
        });
        tx.audit({
          action: 'role.updated',
          organizationId,
          target: { type: 'role', id: roleId, name: after.name },
          changes: {
            before: { name: before.name, description: before.description, permissions: before.permissions },
            after: { name: after.name, description: after.description, permissions: after.permissions },
          },
        });
        const counts = await store.memberCounts(tx, organizationId);
        return customView(after, counts.get(roleId) ?? 0);
      });
    },

    async deleteRole(
      ctx: CallerContext,
      organizationId: string,
      roleId: string,
      requireFresh: FreshAuthenticationCheck,
    ) {
      await changeRoles(ctx, organizationId, requireFresh, async (tx, grantor) => {
        const role = await lockCustomRole(tx, organizationId, roleId);
        requireHeld(role.permissions.filter(isPermissionKey), grantor, 'Deleting this role');
        const uses = await store.roleUses(tx, organizationId, roleId);
        if (uses.members + uses.invitations + uses.apiKeys + uses.teams > 0 || uses.ssoProvisioning) {
          const named: [keyof store.RoleUses, number][] = [
            ['members', uses.members],
            ['invitations', uses.invitations],
            ['apiKeys', uses.apiKeys],
            ['teams', uses.teams],
            ['ssoProvisioning', uses.ssoProvisioning ? 1 : 0],
          ];
          throw roleErrors.role_in_use(`The role ${role.name} is in use: give its holders another role first`, {
            usedBy: uses,
            details: named
              .filter(([, count]) => count > 0)
              .map(([what, count]) => ({ message: `${what}: ${count}`, path: [what] })),
          });
        }
        await store.deleteRole(tx, organizationId, roleId);
        tx.audit({
          action: 'role.deleted',
          organizationId,
          target: { type: 'role', id: roleId, name: role.name },
          changes: { before: { name: role.name, description: role.description, permissions: role.permissions } },
        });
      });
    },

    /** What the caller holds in the active organization (authenticate() checked they are a member there, or a key of it). */
    async callerPermissions(caller: Caller) {
      const organizationId = caller.organizationId!;
      if (caller.kind === 'api_key') return grantsOf(db, organizationId, { role: caller.role!, teams: [] });
      const sources = await store.memberSources(db, organizationId, caller.memberId!);
      if (!sources) throw identityErrors.member_not_found('No such active member in this organization');
      return grantsOf(db, organizationId, sources);
    },

    /**
     * Each key the member holds, with what grants it: their role, and each of their teams whose role
     * holds it. The caller's own, or anyone's for a holder of members.update_role.
     */
    async memberPermissions(caller: Caller, organizationId: string, memberId: string) {
      const acting = await membership.requireMembership(caller, organizationId);
      if (acting.memberId !== memberId && !acting.permissions.has('members.update_role'))
        throw missingPermission(
          'members.update_role',
          "Another member's permissions are shown to holders of members.update_role",
        );
      const sources = await store.memberSources(db, organizationId, memberId);
      if (!sources) throw identityErrors.member_not_found('No such active member in this organization');
      return grantsOf(db, organizationId, sources);
    },
  };
}

export interface Grant {
  type: 'role' | 'team';
  id: string;
  name: string;
}

/** The keys `sources` grant, each with its grants, by key. */
export async function grantsOf(
  q: Queryable,
  organizationId: string,
  sources: { role: string; teams: { id: string; name: string; role_id: string }[] },
): Promise<{ key: PermissionKey; grantedBy: Grant[] }[]> {
  const customIds = [sources.role, ...sources.teams.map((team) => team.role_id)].filter((id) => !isBuiltInRole(id));
  const custom = new Map((await store.findRoles(q, organizationId, customIds)).map((row) => [row.id, row]));
  const keysOfRole = (role: string): PermissionKey[] =>
    isBuiltInRole(role) ? [...builtInRoleKeys(role)] : (custom.get(role)?.permissions.filter(isPermissionKey) ?? []);
  const byKey = new Map<PermissionKey, Grant[]>();
  const add = (keys: PermissionKey[], grant: Grant) => {
    for (const key of keys) byKey.set(key, [...(byKey.get(key) ?? []), grant]);
  };
  add(keysOfRole(sources.role), {
    type: 'role',
    id: sources.role,
    name: custom.get(sources.role)?.name ?? sources.role,
  });
  // The owner holds every key by their role alone; teams add nothing to it.
  if (sources.role !== 'owner')
    for (const team of sources.teams) add(keysOfRole(team.role_id), { type: 'team', id: team.id, name: team.name });
  return [...byKey.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([key, grantedBy]) => ({ key, grantedBy }));
}

export type RoleService = ReturnType<typeof createRoleService>;
