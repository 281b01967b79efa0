-- Users, sessions, organizations, members, teams, invitations and organization API keys.
-- Secrets (session tokens, invitation tokens, API keys) are stored only as SHA-256 hashes.

CREATE TABLE users (
  id                text PRIMARY KEY,
  email             text NOT NULL,
  name              text NOT NULL,
  image             text NOT NULL DEFAULT '',
  password_hash     text,
  is_instance_admin boolean NOT NULL DEFAULT false,
  created_at        timestamptz NOT NULL DEFAULT now(),
  updated_at        timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX users_email_key ON users (lower(email));

CREATE TABLE organizations (
  id         text PRIMARY KEY,
  name       text NOT NULL,
  plan       text NOT NULL DEFAULT 'free' CHECK (plan IN ('free', 'team', 'enterprise')),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE members (
  id              text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  user_id         text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  role            text NOT NULL CHECK (role IN ('owner', 'admin', 'member')),
  status          text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'suspended')),
  created_at      timestamptz NOT NULL DEFAULT now(),
  UNIQUE (organization_id, user_id)
);
CREATE INDEX members_user_idx ON members (user_id);
-- Exactly one owner per organization: at most one by this index, at least one by the service's rules.
CREATE UNIQUE INDEX members_one_owner ON members (organization_id) WHERE role = 'owner';

CREATE TABLE sessions (
  id                     text PRIMARY KEY,
  user_id                text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  token_hash             text NOT NULL UNIQUE,
  active_organization_id text REFERENCES organizations (id) ON DELETE SET NULL,
  expires_at             timestamptz NOT NULL,
  revoked_at             timestamptz,
  created_at             timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX sessions_user_idx ON sessions (user_id);

CREATE TABLE teams (
  id              text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  name            text NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  UNIQUE (organization_id, name)
);

CREATE TABLE team_members (
  team_id         text NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
  member_id       text NOT NULL REFERENCES members (id) ON DELETE CASCADE,
  organization_id text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  created_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (team_id, member_id)
);
CREATE INDEX team_members_member_idx ON team_members (member_id);

CREATE TABLE invitations (
  id              text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  email           text NOT NULL,
  role            text NOT NULL CHECK (role IN ('admin', 'member')),
  token_hash      text NOT NULL UNIQUE,
  invited_by      text REFERENCES users (id) ON DELETE SET NULL,
  expires_at      timestamptz NOT NULL,
  accepted_at     timestamptz,
  created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX invitations_org_idx ON invitations (organization_id);

CREATE TABLE api_keys (
  id              text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  name            text NOT NULL,
  role            text NOT NULL CHECK (role IN ('admin', 'member')),
  key_hash        text NOT NULL UNIQUE,
  created_by      text REFERENCES users (id) ON DELETE SET NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  revoked_at      timestamptz
);
CREATE INDEX api_keys_org_idx ON api_keys (organization_id);
