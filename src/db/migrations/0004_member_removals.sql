-- Who took a membership away, kept until the person is a member again: SSO sign-in's just-in-time
-- provisioning must not re-create a membership that SCIM (the directory) or an administrator removed,
-- so it needs to tell "removed" from "never a member". A person who left on their own is not recorded.
CREATE TABLE member_removals (
  organization_id text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  user_id         text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  removed_by      text NOT NULL CHECK (removed_by IN ('scim', 'administrator')),
  removed_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, user_id)
);
