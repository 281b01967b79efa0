-- A person's memberships, kept beside their sessions (distributed by user on Citus) as a copy of the
-- members table's (user, organization, member, role, status). Every authenticated request reads the
-- session and the membership of its active organization in one statement; with members distributed by
-- organization that join paired two different distribution columns, which Citus does not run on one
-- node. The membership core writes both tables in one transaction (identity/store.ts); no trigger, as a
-- distributed table may not have one.
CREATE TABLE user_memberships (
  user_id         text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  organization_id text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  member_id       text NOT NULL,
  role            text NOT NULL CHECK (role IN ('owner', 'admin', 'member')),
  status          text NOT NULL CHECK (status IN ('active', 'suspended')),
  PRIMARY KEY (user_id, organization_id)
);

INSERT INTO user_memberships (user_id, organization_id, member_id, role, status)
SELECT user_id, organization_id, id, role, status FROM members;

-- Nothing finds members by person alone any more (a person's organizations are read from the copy).
DROP INDEX members_user_idx;
