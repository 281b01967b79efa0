-- One SSO connection per organization. The client secret is sealed with the key ring (SecretBox);
-- the verification token is public by design (it is published in DNS).
CREATE TABLE sso_connections (
  id                   text PRIMARY KEY,
  organization_id      text NOT NULL UNIQUE REFERENCES organizations (id) ON DELETE CASCADE,
  domain               text NOT NULL,
  issuer               text NOT NULL,
  client_id            text NOT NULL,
  client_secret_sealed text,
  verification_token   text NOT NULL,
  domain_verified_at   timestamptz,
  created_at           timestamptz NOT NULL DEFAULT now(),
  updated_at           timestamptz NOT NULL DEFAULT now()
);
-- A domain is verified for at most one organization.
CREATE UNIQUE INDEX sso_connections_verified_domain_key ON sso_connections (domain) WHERE domain_verified_at IS NOT NULL;
