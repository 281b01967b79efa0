-- MCP OAuth (issue 4): what the authorization flow keeps between requests. The tokens themselves
-- live in the MCP connections module's credential table; these tables hold the flow around them.
-- Every row is bound to the connection identity (url, authType, credentialMode) it was made for,
-- through identity_fingerprint, so a row made for an identity that has since changed is ignored.

-- One row per authorization in progress. The signed `state` names its id; the callback deletes
-- the row to claim it, which is what makes a state single-use across any number of processes.
CREATE TABLE mcp_oauth_pending_authorizations (
  id                       text PRIMARY KEY,
  organization_id          text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  connection_id            text NOT NULL,
  identity_fingerprint     text NOT NULL,
  -- The member who asked; for a shared identity, the administrator who asked.
  member_id                text NOT NULL REFERENCES members (id) ON DELETE CASCADE,
  subject                  text NOT NULL CHECK (subject IN ('member', 'shared')),
  callback_mode            text NOT NULL CHECK (callback_mode IN ('shared-v1', 'isolated-v1')),
  redirect_uri             text NOT NULL,
  issuer                   text NOT NULL,
  iss_parameter_supported  boolean NOT NULL,
  token_endpoint           text NOT NULL,
  resource                 text NOT NULL,
  scopes                   jsonb NOT NULL,
  registration_source      text NOT NULL CHECK (registration_source IN ('pre-registered', 'client-metadata', 'dynamic')),
  client_id                text NOT NULL,
  code_verifier_sealed     text NOT NULL,
  expires_at               timestamptz NOT NULL,
  created_at               timestamptz NOT NULL DEFAULT now(),
  FOREIGN KEY (organization_id, connection_id) REFERENCES mcp_connections (organization_id, id) ON DELETE CASCADE
);
CREATE INDEX mcp_oauth_pending_connection_idx ON mcp_oauth_pending_authorizations (organization_id, connection_id);
CREATE INDEX mcp_oauth_pending_expiry_idx ON mcp_oauth_pending_authorizations (expires_at);

-- Clients obtained by dynamic client registration (RFC 7591): registered once per connection
-- and authorization server, reused by every member's authorization.
CREATE TABLE mcp_oauth_registered_clients (
  organization_id            text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  connection_id              text NOT NULL,
  issuer                     text NOT NULL,
  identity_fingerprint       text NOT NULL,
  client_id                  text NOT NULL,
  client_secret_sealed       text,
  client_secret_expires_at   timestamptz,
  token_endpoint_auth_method text NOT NULL CHECK (token_endpoint_auth_method IN ('client_secret_basic', 'client_secret_post', 'none')),
  redirect_uris              jsonb NOT NULL,
  created_at                 timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, connection_id, issuer),
  FOREIGN KEY (organization_id, connection_id) REFERENCES mcp_connections (organization_id, id) ON DELETE CASCADE
);

-- What the last discovery found for a connection: the authorization server, how orgplane is
-- registered with it, and the states an administrator must see (setup required, issuer review).
CREATE TABLE mcp_oauth_connection_state (
  organization_id          text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  connection_id            text NOT NULL,
  identity_fingerprint     text NOT NULL,
  issuer                   text,
  registration_source      text CHECK (registration_source IN ('pre-registered', 'client-metadata', 'dynamic')),
  setup_required           boolean NOT NULL DEFAULT false,
  issuer_review_required   boolean NOT NULL DEFAULT false,
  problem_code             text,
  checked_at               timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, connection_id),
  FOREIGN KEY (organization_id, connection_id) REFERENCES mcp_connections (organization_id, id) ON DELETE CASCADE
);
