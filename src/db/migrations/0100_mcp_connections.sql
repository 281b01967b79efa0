-- External MCP connections, who may use them, their credentials, and the marketplace plugins
-- that require them or manage their identity. Every table carries organization_id; child tables
-- reference their parent by (organization_id, id) so a row can never point across tenants.

CREATE TABLE mcp_connections (
  id                               text PRIMARY KEY,
  organization_id                  text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  name                             text NOT NULL,
  -- As the administrator typed it; identity comparisons use normalized_url.
  url                              text NOT NULL,
  normalized_url                   text NOT NULL,
  auth_type                        text NOT NULL CHECK (auth_type IN ('oauth', 'apikey', 'none')),
  credential_mode                  text NOT NULL CHECK (credential_mode IN ('shared', 'per_member')),
  -- sha256 of (normalized_url, auth_type, credential_mode): what credentials are bound to.
  identity_fingerprint             text NOT NULL,
  org_wide                         boolean NOT NULL DEFAULT false,
  oauth_client_id                  text,
  oauth_client_secret_sealed       text,
  oauth_token_endpoint_auth_method text CHECK (oauth_token_endpoint_auth_method IN ('client_secret_basic', 'client_secret_post')),
  -- Written by the OAuth flows: how the client was obtained, and whether the server needs a pre-registered one.
  oauth_registration_source        text CHECK (oauth_registration_source IN ('pre-registered', 'client-metadata', 'dynamic')),
  oauth_client_required            boolean NOT NULL DEFAULT false,
  authorization_server_issuer      text,
  requested_scopes                 jsonb NOT NULL DEFAULT '[]',
  -- Health of a connection without credentials (auth_type none); credentialed health lives on the credential.
  health                           text NOT NULL DEFAULT 'unknown' CHECK (health IN ('unknown', 'ready', 'reconnect_required')),
  health_reason                    text,
  health_checked_at                timestamptz,
  created_by                       text REFERENCES users (id) ON DELETE SET NULL,
  created_at                       timestamptz NOT NULL DEFAULT now(),
  identity_updated_at              timestamptz NOT NULL DEFAULT now(),
  -- The optimistic-concurrency token; kept at millisecond precision, the precision the API shows.
  updated_at                       timestamptz NOT NULL,
  UNIQUE (organization_id, id)
);
CREATE INDEX mcp_connections_org_idx ON mcp_connections (organization_id, id);

CREATE TABLE mcp_connection_members (
  organization_id text NOT NULL,
  connection_id   text NOT NULL,
  member_id       text NOT NULL REFERENCES members (id) ON DELETE CASCADE,
  PRIMARY KEY (connection_id, member_id),
  FOREIGN KEY (organization_id, connection_id) REFERENCES mcp_connections (organization_id, id) ON DELETE CASCADE
);
CREATE INDEX mcp_connection_members_member_idx ON mcp_connection_members (organization_id, member_id);

CREATE TABLE mcp_connection_teams (
  organization_id text NOT NULL,
  connection_id   text NOT NULL,
  team_id         text NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
  PRIMARY KEY (connection_id, team_id),
  FOREIGN KEY (organization_id, connection_id) REFERENCES mcp_connections (organization_id, id) ON DELETE CASCADE
);
CREATE INDEX mcp_connection_teams_team_idx ON mcp_connection_teams (organization_id, team_id);

-- Shared (member_id NULL) and per-member credentials, API keys and OAuth tokens alike.
-- secret_sealed is SecretBox output of a JSON envelope that also names identity_fingerprint, so a
-- credential opens only for the identity it was obtained for (see service.ts).
CREATE TABLE mcp_connection_credentials (
  id                   text PRIMARY KEY,
  organization_id      text NOT NULL,
  connection_id        text NOT NULL,
  member_id            text REFERENCES members (id) ON DELETE CASCADE,
  kind                 text NOT NULL CHECK (kind IN ('apikey', 'oauth')),
  identity_fingerprint text NOT NULL,
  secret_sealed        text NOT NULL,
  expires_at           timestamptz,
  granted_scopes       jsonb NOT NULL DEFAULT '[]',
  external_account_id  text,
  tenant_id            text,
  health               text NOT NULL DEFAULT 'unknown' CHECK (health IN ('unknown', 'ready', 'reconnect_required')),
  health_reason        text CHECK (health_reason IN ('authorization_rejected', 'credential_expired', 'post_authorization_validation_failed')),
  health_checked_at    timestamptz,
  obtained_at          timestamptz NOT NULL DEFAULT now(),
  updated_at           timestamptz NOT NULL DEFAULT now(),
  FOREIGN KEY (organization_id, connection_id) REFERENCES mcp_connections (organization_id, id) ON DELETE CASCADE
);
CREATE UNIQUE INDEX mcp_connection_credentials_shared_key ON mcp_connection_credentials (connection_id) WHERE member_id IS NULL;
CREATE UNIQUE INDEX mcp_connection_credentials_member_key ON mcp_connection_credentials (connection_id, member_id) WHERE member_id IS NOT NULL;

CREATE TABLE plugins (
  id              text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  name            text NOT NULL,
  version         text,
  manifest        jsonb NOT NULL,
  installed_by    text REFERENCES users (id) ON DELETE SET NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  UNIQUE (organization_id, id)
);
CREATE INDEX plugins_org_idx ON plugins (organization_id);

CREATE TABLE plugin_connection_links (
  organization_id text NOT NULL,
  plugin_id       text NOT NULL,
  connection_id   text NOT NULL,
  relation        text NOT NULL CHECK (relation IN ('requires', 'manages_identity')),
  PRIMARY KEY (plugin_id, connection_id, relation),
  FOREIGN KEY (organization_id, plugin_id) REFERENCES plugins (organization_id, id) ON DELETE CASCADE,
  FOREIGN KEY (organization_id, connection_id) REFERENCES mcp_connections (organization_id, id) ON DELETE CASCADE
);
CREATE INDEX plugin_connection_links_connection_idx ON plugin_connection_links (organization_id, connection_id);
