-- The tool catalog a connection's server offered at its last successful probe, and the tool policy
-- administrators set per connection. Both keyed by the connection, carrying organization_id and
-- referencing the connection by (organization_id, id), so they go with it.

CREATE TABLE mcp_connection_catalogs (
  organization_id      text NOT NULL,
  connection_id        text PRIMARY KEY,
  -- The identity (url, authType, credentialMode) probed: a catalog shows only for that identity.
  identity_fingerprint text NOT NULL,
  server_name          text,
  server_version       text,
  protocol_version     text,
  capabilities         jsonb NOT NULL DEFAULT '{}',
  -- [{name, title?, description?, inputSchema, annotations?}], bounded (catalog.ts catalogLimits).
  tools                jsonb NOT NULL DEFAULT '[]',
  prompt_count         integer,
  resource_count       integer,
  truncated            boolean NOT NULL DEFAULT false,
  updated_at           timestamptz NOT NULL DEFAULT now(),
  FOREIGN KEY (organization_id, connection_id) REFERENCES mcp_connections (organization_id, id) ON DELETE CASCADE
);

CREATE TABLE mcp_connection_tool_policies (
  organization_id            text NOT NULL,
  connection_id              text PRIMARY KEY,
  mode                       text NOT NULL CHECK (mode IN ('all', 'allow_list', 'deny_list')),
  -- Tool names; kept when a tool leaves the catalog, so a tool that comes back keeps its decision.
  tools                      jsonb NOT NULL DEFAULT '[]',
  destructive_needs_approval boolean NOT NULL DEFAULT false,
  updated_at                 timestamptz NOT NULL DEFAULT now(),
  updated_by                 text REFERENCES users (id) ON DELETE SET NULL,
  FOREIGN KEY (organization_id, connection_id) REFERENCES mcp_connections (organization_id, id) ON DELETE CASCADE
);
