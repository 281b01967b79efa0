// The permission catalog: every key a route or a service may require, in one table. GET /v1/permissions
// publishes it, the OpenAPI names each operation's key (`x-permission`), the authorization matrix and the
// console read it. A key is `resource.action`. The built-in roles' keys come from here, not from the
// database, so a key added to the catalog reaches every owner and admin at once; custom roles store theirs.

/** A role every organization has; custom roles have TypeIDs. */
export type BuiltInRole = 'owner' | 'admin' | 'member';

export interface PermissionDefinition {
  readonly description: string;
  /**
   * The writes it allows change who can do what, or where data and credentials go: they need a recent
   * authentication (403 `reauth`), and so a session, never an API key. Reads it allows do not.
   */
  readonly sensitive: boolean;
  /** The built-in roles besides the owner (who holds every key) that hold it. */
  readonly defaultRoles: readonly Exclude<BuiltInRole, 'owner'>[];
}

const admins = ['admin'] as const;
const everyone = ['admin', 'member'] as const;

export const PERMISSIONS = {
  'organization.update': {
    description: 'Rename the organization',
    sensitive: true,
    defaultRoles: admins,
  },
  'members.invite': {
    description: 'Invite people, and see, resend and revoke pending invitations',
    sensitive: true,
    defaultRoles: admins,
  },
  'members.update_role': {
    description: "Change a member's role (to a role whose keys the caller holds)",
    sensitive: true,
    defaultRoles: admins,
  },
  'members.remove': {
    description: 'Remove other members (leaving needs no key)',
    sensitive: true,
    defaultRoles: admins,
  },
  'teams.manage': {
    description: 'Create teams',
    sensitive: false,
    defaultRoles: admins,
  },
  'teams.manage_members': {
    description: "Add members to teams and remove them (a team's members gain what its role and connections grant)",
    sensitive: true,
    defaultRoles: admins,
  },
  'roles.manage': {
    description: "Create, change and delete custom roles, and set a team's role (only with keys the caller holds)",
    sensitive: true,
    defaultRoles: [],
  },
  'api_keys.manage': {
    description:
      "See the organization's API keys, create them (with a role whose keys the caller holds) and revoke them",
    sensitive: true,
    defaultRoles: admins,
  },
  'install_links.create': {
    description: 'Get the install link of the desktop app for the organization',
    sensitive: false,
    defaultRoles: everyone,
  },
  'install_links.rotate': {
    description: 'Rotate the install link, so the old one stops working',
    sensitive: true,
    defaultRoles: admins,
  },
  'mcp_connections.use': {
    description: 'Use the MCP connections one has access to, with one’s own credentials',
    sensitive: false,
    defaultRoles: everyone,
  },
  'mcp_connections.view': {
    description: "See every MCP connection's configuration, access and tool catalog, and test a connection",
    sensitive: false,
    defaultRoles: admins,
  },
  'mcp_connections.manage': {
    description:
      'Create, edit and delete MCP connections, set who may use them and their tool policy, manage shared credentials and plugins',
    sensitive: true,
    defaultRoles: admins,
  },
  'sso.manage': {
    description: "See and change the organization's SSO connection and verify its domain",
    sensitive: true,
    defaultRoles: admins,
  },
  'scim.manage': {
    description: 'See the SCIM connection and rotate its token',
    sensitive: true,
    defaultRoles: admins,
  },
  'audit.view': {
    description: 'Read the audit log and check its hash chain',
    sensitive: false,
    defaultRoles: admins,
  },
  'audit.export': {
    description: 'Export the audit log',
    sensitive: false,
    defaultRoles: admins,
  },
  'audit_stream.manage': {
    description: 'See, set and delete the audit stream (where audit events are sent)',
    sensitive: true,
    defaultRoles: admins,
  },
  'messenger.manage': {
    description: 'See, connect, change and delete messaging bots, and read their updates',
    sensitive: true,
    defaultRoles: admins,
  },
} as const satisfies Record<string, PermissionDefinition>;

export type PermissionKey = keyof typeof PERMISSIONS;

export const PERMISSION_KEYS = Object.keys(PERMISSIONS) as PermissionKey[];

export function isPermissionKey(value: string): value is PermissionKey {
  return Object.hasOwn(PERMISSIONS, value);
}

const builtInKeys: Record<BuiltInRole, ReadonlySet<PermissionKey>> = {
  owner: new Set(PERMISSION_KEYS),
  admin: new Set(
    PERMISSION_KEYS.filter((key) => (PERMISSIONS[key].defaultRoles as readonly string[]).includes('admin')),
  ),
  member: new Set(
    PERMISSION_KEYS.filter((key) => (PERMISSIONS[key].defaultRoles as readonly string[]).includes('member')),
  ),
};

/** The keys a built-in role holds (the owner: every key). */
export function builtInRoleKeys(role: BuiltInRole): ReadonlySet<PermissionKey> {
  return builtInKeys[role];
}

export function isBuiltInRole(role: string): role is BuiltInRole {
  return Object.hasOwn(builtInKeys, role);
}

/**
 * What a member holds: their role's keys and those of their teams' roles. Built-in roles take theirs from
 * the catalog; `customKeys` are what the custom roles among them store (a key no longer in the catalog
 * grants nothing).
 */
export function effectivePermissions(grants: {
  role: string | null;
  teamRoles?: readonly string[];
  customKeys?: readonly string[];
}): ReadonlySet<PermissionKey> {
  if (grants.role === null) return new Set();
  if (grants.role === 'owner') return builtInKeys.owner;
  const keys = new Set<PermissionKey>();
  for (const role of [grants.role, ...(grants.teamRoles ?? [])])
    if (isBuiltInRole(role)) for (const key of builtInKeys[role]) keys.add(key);
  for (const key of grants.customKeys ?? []) if (isPermissionKey(key)) keys.add(key);
  return keys;
}

/**
 * Who may call an operation that needs no key of the catalog, as the OpenAPI's `x-permission` names it:
 * `public` (no credential, or one of its own: a sign-in, a webhook's signature, a SCIM token, an OAuth
 * state), `signed-in` (any signed-in person, for themselves), `member` (any active member of the
 * organization), `owner` (the organization's owner: ownership is not a key), `instance-admin`.
 */
export type Access = 'public' | 'signed-in' | 'member' | 'owner' | 'instance-admin';

/** What an operation requires: a key of the catalog, or one of the accesses above. */
export type Requirement = PermissionKey | Access;

/** The OpenAPI extension naming what each operation requires. */
export const PERMISSION_EXTENSION = 'x-permission';
