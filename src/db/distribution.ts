// Which of the schema's tables belong to whom: the one list `orgplane distribute` follows on a Citus
// coordinator and test/db/distribution-catalog.test.ts checks the migrated catalog against. A table the
// migrations create that is missing here fails that test, so a new table is born with a class.
//
// The rules each class brings (the Citus multi-tenant model):
// - a distributed table's primary key and every unique key start with its distribution column, and
//   its foreign keys to other distributed tables include that column on both sides (they are
//   co-located: one tenant's rows of every table sit on the same node);
// - a foreign key that includes the distribution column has no ON DELETE SET NULL (Citus refuses it,
//   also PostgreSQL 15's `SET NULL (column)`); a distributed table has no trigger;
// - a distributed table may reference a reference table, never the other way round.

/** Distributed by organization: every row is one organization's (the column holds its id). */
export interface TenantTable {
  readonly kind: 'tenant';
  readonly column: string;
}

/** Distributed by user: a person's own data, co-located by the person, whatever organization they act in. */
export interface UserTable {
  readonly kind: 'user';
  readonly column: 'user_id';
}

/**
 * Global data. `reference`: copied to every node, because distributed tables reference it or join it
 * (Citus replicates each write to every node, so it is for data read far more than written).
 * `local`: kept on the coordinator only, for the platform's bookkeeping that no tenant query joins.
 */
export interface GlobalTable {
  readonly kind: 'reference' | 'local';
  /** Why it is global: shown in docs/scaling.md's table. */
  readonly why: string;
}

export type TableClass = TenantTable | UserTable | GlobalTable;

const tenant: TenantTable = { kind: 'tenant', column: 'organization_id' };
const byUser: UserTable = { kind: 'user', column: 'user_id' };

export const TABLE_CLASSES: Readonly<Record<string, TableClass>> = {
  // Global, referenced by every tenant table.
  users: {
    kind: 'reference',
    why: 'a person belongs to several organizations; every tenant table that names a person references it',
  },
  organizations: {
    kind: 'reference',
    why: 'the tenants themselves: every tenant table references its organization, and GET /v1/org joins it',
  },
  organization_owners: {
    kind: 'reference',
    why: "each organization's owner, copied from members: GET /v1/org shows it with the session, on the person's node",
  },
  // The SSO connection's verified domain is unique across organizations, and sign-in finds the
  // connection by an e-mail's domain before any organization is known: a global lookup.
  sso_connections: {
    kind: 'reference',
    why: 'a verified domain is unique across organizations, and sign-in finds the connection by domain before it knows the organization',
  },
  // Sign-ins in progress are found again by a hash of what the IdP sends back (state, code, RelayState),
  // which names no organization; they live minutes.
  sso_sign_in_requests: {
    kind: 'reference',
    why: 'found by the hash of the state the IdP returns, which names no organization; lives minutes',
  },
  sso_sign_in_codes: {
    kind: 'reference',
    why: 'found by the hash of the one-time code the caller redeems, which names no organization; lives minutes',
  },
  desktop_sign_in_codes: {
    kind: 'reference',
    why: 'found by the hash of the one-time code the desktop app redeems, which names no organization; lives a minute',
  },
  sso_saml_requests: {
    kind: 'reference',
    why: 'found by the hash of the RelayState the IdP returns, which names no organization; lives minutes',
  },
  roles: {
    kind: 'reference',
    why: "every authenticated request reads the keys of the caller's role with the session, on the person's node; roles change rarely",
  },
  messenger_webhook_routes: {
    kind: 'reference',
    why: "which organization a bot connection belongs to: the platform's webhook names only the connection",
  },
  secret_key_checks: {
    kind: 'local',
    why: 'the key ring check every process runs at start, on the coordinator it connects to',
  },
  rate_limit_counters: {
    kind: 'local',
    why: 'counters by bucket (an address, an account), written on every limited request and joined with nothing',
  },
  schema_migrations: {
    kind: 'local',
    why: 'the migrations applied, read and written by `orgplane migrate` on the coordinator',
  },

  // One organization's data.
  members: tenant,
  member_removals: tenant,
  teams: tenant,
  team_members: tenant,
  invitations: tenant,
  api_keys: tenant,
  install_links: tenant,
  mcp_connections: tenant,
  mcp_connection_members: tenant,
  mcp_connection_teams: tenant,
  mcp_connection_credentials: tenant,
  mcp_connection_catalogs: tenant,
  mcp_connection_tool_policies: tenant,
  mcp_connection_auth_requirements: tenant,
  mcp_oauth_pending_authorizations: tenant,
  mcp_oauth_registered_clients: tenant,
  mcp_oauth_connection_state: tenant,
  plugins: tenant,
  plugin_connection_links: tenant,
  sso_identities: tenant,
  sso_saml_assertions: tenant,
  scim_connectors: tenant,
  scim_users: tenant,
  scim_groups: tenant,
  scim_group_members: tenant,
  messenger_connections: tenant,
  messenger_updates: tenant,
  audit_streams: tenant,
  // An audit chain is an organization's ('instance' for events of none), and chain_id is never NULL where
  // organization_id may be: distributed by chain_id, whose values are organization ids, so an
  // organization's chain is co-located with the rest of its data.
  audit_events: { kind: 'tenant', column: 'chain_id' },
  audit_checkpoints: { kind: 'tenant', column: 'chain_id' },
  audit_chain_heads: { kind: 'tenant', column: 'chain_id' },

  // A person's own data. Sessions are a person's, not an organization's: a session switches between
  // the person's organizations.
  sessions: byUser,
  // The person's copy of their memberships (the membership core writes it with members): the session
  // lookup joins it to the session on the person's node.
  user_memberships: byUser,
  memory_banks: byUser,
  memories: byUser,
  memory_terms: byUser,
  memory_blocks: byUser,
  memory_versions: byUser,
};

export function isDistributed(table: TableClass): table is TenantTable | UserTable {
  return table.kind === 'tenant' || table.kind === 'user';
}
