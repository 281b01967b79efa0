-- SSO sign-in (OIDC): the connection's protocol and sign-in settings, its health, the sign-ins in
-- progress, the one-time codes handed to the caller's redirect URI, and the IdP subjects linked to accounts.
ALTER TABLE sso_connections ADD COLUMN protocol text NOT NULL DEFAULT 'oidc' CHECK (protocol IN ('oidc', 'saml'));
ALTER TABLE sso_connections ADD COLUMN jit_enabled boolean NOT NULL DEFAULT false;
ALTER TABLE sso_connections ADD COLUMN jit_default_role text NOT NULL DEFAULT 'member' CHECK (jit_default_role IN ('member', 'admin'));
ALTER TABLE sso_connections ADD COLUMN jit_default_team_ids text[] NOT NULL DEFAULT '{}';
ALTER TABLE sso_connections ADD COLUMN sso_required boolean NOT NULL DEFAULT false;
ALTER TABLE sso_connections ADD COLUMN last_sign_in_at timestamptz;
ALTER TABLE sso_connections ADD COLUMN last_error_at timestamptz;
ALTER TABLE sso_connections ADD COLUMN last_error_category text;
ALTER TABLE sso_connections ADD COLUMN last_error_message text;

-- A sign-in sent to the IdP: found again by its state (hashed), used once. The PKCE verifier orgplane
-- uses with the IdP is sealed; the nonce is checked against the ID token.
CREATE TABLE sso_sign_in_requests (
  state_hash             text PRIMARY KEY,
  organization_id        text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  connection_id          text NOT NULL REFERENCES sso_connections (id) ON DELETE CASCADE,
  nonce                  text NOT NULL,
  code_verifier_sealed   text NOT NULL,
  redirect_uri           text NOT NULL,
  client_code_challenge  text NOT NULL,
  reauthenticate         boolean NOT NULL,
  created_at             timestamptz NOT NULL DEFAULT now(),
  expires_at             timestamptz NOT NULL
);
CREATE INDEX sso_sign_in_requests_expiry_idx ON sso_sign_in_requests (expires_at);

-- The one-time code sent to the caller's redirect URI (hashed), bound to the PKCE challenge sent at start.
CREATE TABLE sso_sign_in_codes (
  code_hash              text PRIMARY KEY,
  organization_id        text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  connection_id          text NOT NULL REFERENCES sso_connections (id) ON DELETE CASCADE,
  user_id                text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  client_code_challenge  text NOT NULL,
  reauthenticate         boolean NOT NULL,
  created_at             timestamptz NOT NULL DEFAULT now(),
  expires_at             timestamptz NOT NULL
);
CREATE INDEX sso_sign_in_codes_expiry_idx ON sso_sign_in_codes (expires_at);

-- An IdP subject (OIDC `sub`) linked to an account, so a later e-mail change at the IdP follows it.
CREATE TABLE sso_identities (
  connection_id    text NOT NULL REFERENCES sso_connections (id) ON DELETE CASCADE,
  subject          text NOT NULL,
  organization_id  text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  user_id          text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  created_at       timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (connection_id, subject)
);
CREATE INDEX sso_identities_user_idx ON sso_identities (organization_id, user_id);
