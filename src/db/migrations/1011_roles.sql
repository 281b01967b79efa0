-- Custom roles: a named set of keys of the permission catalog (src/platform/permissions.ts), per
-- organization. The built-in roles (owner, admin, member) are not rows: their keys come from the catalog,
-- so a key added there reaches them at once. A custom role's id (`role_...`) is what a member, an
-- invitation, an API key, SSO's just-in-time provisioning or a team names instead of a built-in one.
--
-- A global (reference) table on a distributed database: every authenticated request reads the keys of
-- the caller's role with the session, on the person's node, and roles change rarely.
CREATE TABLE roles (
  organization_id text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  id              text NOT NULL CHECK (id LIKE 'role\_%'),
  name            text NOT NULL,
  description     text NOT NULL DEFAULT '',
  permissions     text[] NOT NULL DEFAULT '{}',
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, id)
);
CREATE UNIQUE INDEX roles_name_key ON roles (organization_id, lower(name));

-- A role is a built-in one or a custom role's id; which custom ids exist is the roles module's check
-- (a foreign key cannot name the built-in roles, which are not rows).
ALTER TABLE members DROP CONSTRAINT members_role_check;
ALTER TABLE members ADD CONSTRAINT members_role_check CHECK (role IN ('owner', 'admin', 'member') OR role LIKE 'role\_%');
ALTER TABLE user_memberships DROP CONSTRAINT user_memberships_role_check;
ALTER TABLE user_memberships ADD CONSTRAINT user_memberships_role_check
  CHECK (role IN ('owner', 'admin', 'member') OR role LIKE 'role\_%');
ALTER TABLE invitations DROP CONSTRAINT invitations_role_check;
ALTER TABLE invitations ADD CONSTRAINT invitations_role_check CHECK (role IN ('admin', 'member') OR role LIKE 'role\_%');
ALTER TABLE api_keys DROP CONSTRAINT api_keys_role_check;
ALTER TABLE api_keys ADD CONSTRAINT api_keys_role_check CHECK (role IN ('admin', 'member') OR role LIKE 'role\_%');
ALTER TABLE sso_connections DROP CONSTRAINT sso_connections_jit_default_role_check;
ALTER TABLE sso_connections ADD CONSTRAINT sso_connections_jit_default_role_check
  CHECK (jit_default_role IN ('admin', 'member') OR jit_default_role LIKE 'role\_%');

-- A team may carry a role: its members hold that role's keys besides their own. The member's copy of
-- their teams (user_memberships.teams, read with the session) carries each team's role_id too.
ALTER TABLE teams ADD COLUMN role_id text CHECK (role_id IN ('admin', 'member') OR role_id LIKE 'role\_%');
