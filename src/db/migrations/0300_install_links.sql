-- Install links for the desktop app. The token is a bearer secret: only its SHA-256 hash is kept.
-- A link is valid until a rotation (by an owner or admin) revokes every older link of the organization.
CREATE TABLE install_links (
  id                   text PRIMARY KEY,
  organization_id      text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  token_hash           text NOT NULL UNIQUE,
  created_by_member_id text REFERENCES members (id) ON DELETE SET NULL,
  rotation             boolean NOT NULL DEFAULT false,
  created_at           timestamptz NOT NULL DEFAULT now(),
  revoked_at           timestamptz
);
CREATE INDEX install_links_active_idx ON install_links (organization_id) WHERE revoked_at IS NULL;
