-- SAML 2.0 connections: `issuer` holds the IdP's entity id (the Issuer of its assertions); beside it, its
-- single sign-on URL and signing certificates (one, or two during a rotation), where its metadata was
-- fetched from, and when the first certificate expires. A SAML connection has no client id.
ALTER TABLE sso_connections ALTER COLUMN client_id DROP NOT NULL;
ALTER TABLE sso_connections ADD COLUMN saml_idp_sso_url text;
ALTER TABLE sso_connections ADD COLUMN saml_idp_certificates text[] NOT NULL DEFAULT '{}';
ALTER TABLE sso_connections ADD COLUMN saml_idp_metadata_url text;
ALTER TABLE sso_connections ADD COLUMN certificate_expires_at timestamptz;

-- An AuthnRequest orgplane sent: the assertion must answer it (InResponseTo), once, before it expires.
-- Found again by the RelayState the IdP returns (hashed); processes are stateless, so it lives here.
CREATE TABLE sso_saml_requests (
  relay_state_hash       text PRIMARY KEY,
  request_id             text NOT NULL UNIQUE,
  organization_id        text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  connection_id          text NOT NULL REFERENCES sso_connections (id) ON DELETE CASCADE,
  redirect_uri           text NOT NULL,
  client_code_challenge  text NOT NULL,
  reauthenticate         boolean NOT NULL,
  created_at             timestamptz NOT NULL DEFAULT now(),
  expires_at             timestamptz NOT NULL
);
CREATE INDEX sso_saml_requests_expiry_idx ON sso_saml_requests (expires_at);

-- Every assertion accepted, by its IdP's id, until it expires: the same assertion is never accepted twice,
-- whichever process receives it (the primary key is the check).
CREATE TABLE sso_saml_assertions (
  connection_id    text NOT NULL REFERENCES sso_connections (id) ON DELETE CASCADE,
  assertion_id     text NOT NULL,
  organization_id  text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  expires_at       timestamptz NOT NULL,
  PRIMARY KEY (connection_id, assertion_id)
);
CREATE INDEX sso_saml_assertions_expiry_idx ON sso_saml_assertions (expires_at);
