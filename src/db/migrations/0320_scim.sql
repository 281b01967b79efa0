-- SCIM provisioning: one connector per organization (its bearer token kept only as a hash), the users
-- and groups an identity provider provisioned, and the connector's health counters.
CREATE TABLE scim_connectors (
  id                       text PRIMARY KEY,
  organization_id          text NOT NULL UNIQUE REFERENCES organizations (id) ON DELETE CASCADE,
  provider_id              text NOT NULL,
  group_mapping_mode       text NOT NULL DEFAULT 'metadata_only' CHECK (group_mapping_mode IN ('metadata_only')),
  token_hash               text UNIQUE,
  token_rotated_at         timestamptz,
  unresolved_failure_count integer NOT NULL DEFAULT 0 CHECK (unresolved_failure_count >= 0),
  last_failure_at          timestamptz,
  last_failure_action      text,
  last_failure_message     text,
  next_retry_at            timestamptz,
  last_successful_sync_at  timestamptz,
  created_at               timestamptz NOT NULL DEFAULT now(),
  updated_at               timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE scim_users (
  id              text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  user_id         text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  member_id       text REFERENCES members (id) ON DELETE SET NULL,
  user_name       text NOT NULL,
  external_id     text,
  display_name    text,
  active          boolean NOT NULL DEFAULT true,
  -- the resource as the identity provider last sent it, in canonical form (no id, meta, password)
  resource        jsonb NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX scim_users_user_name_key ON scim_users (organization_id, lower(user_name));
CREATE UNIQUE INDEX scim_users_user_key ON scim_users (organization_id, user_id);
CREATE INDEX scim_users_external_id_idx ON scim_users (organization_id, external_id);

CREATE TABLE scim_groups (
  id              text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  display_name    text NOT NULL,
  external_id     text,
  resource        jsonb NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX scim_groups_org_idx ON scim_groups (organization_id, lower(display_name));

CREATE TABLE scim_group_members (
  organization_id text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  group_id        text NOT NULL REFERENCES scim_groups (id) ON DELETE CASCADE,
  scim_user_id    text NOT NULL REFERENCES scim_users (id) ON DELETE CASCADE,
  PRIMARY KEY (group_id, scim_user_id)
);
CREATE INDEX scim_group_members_user_idx ON scim_group_members (scim_user_id);
