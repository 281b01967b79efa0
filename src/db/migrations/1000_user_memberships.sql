-- What every authenticated request and GET /v1/org read, kept where a distributed database (Citus) can
-- read it in one step: beside the person's sessions, and in a global table of owners.
--
-- user_memberships: a person's copy of their memberships (distributed by user, like sessions): each
-- membership's member id, role, status and start, and the teams the member is in. The session lookup and
-- GET /v1/org joined members and teams (distributed by organization) to sessions (by user), two
-- distribution columns Citus does not join in one step. The membership core writes the copy in the same
-- transaction as members, and the teams module through it; no trigger, as a distributed table may not
-- have one.
CREATE TABLE user_memberships (
  user_id         text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  organization_id text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  member_id       text NOT NULL,
  role            text NOT NULL CHECK (role IN ('owner', 'admin', 'member')),
  status          text NOT NULL CHECK (status IN ('active', 'suspended')),
  member_since    timestamptz NOT NULL,
  -- The member's teams as GET /v1/org shows them: [{id, organization_id, name, created_at}], by name.
  teams           jsonb NOT NULL DEFAULT '[]',
  PRIMARY KEY (user_id, organization_id)
);

INSERT INTO user_memberships (user_id, organization_id, member_id, role, status, member_since, teams)
SELECT m.user_id, m.organization_id, m.id, m.role, m.status, m.created_at,
       coalesce((SELECT jsonb_agg(jsonb_build_object('id', t.id, 'organization_id', t.organization_id, 'name', t.name, 'created_at', t.created_at)
                                  ORDER BY t.name, t.id)
                   FROM team_members tm JOIN teams t ON t.organization_id = tm.organization_id AND t.id = tm.team_id
                  WHERE tm.organization_id = m.organization_id AND tm.member_id = m.id), '[]')
  FROM members m;

-- Each organization's owner (a global table, on every node): GET /v1/org shows the owner to every
-- member. Written by the membership core with every change of the owner's membership.
CREATE TABLE organization_owners (
  organization_id text PRIMARY KEY REFERENCES organizations (id) ON DELETE CASCADE,
  member_id       text NOT NULL,
  user_id         text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  status          text NOT NULL CHECK (status IN ('active', 'suspended')),
  member_since    timestamptz NOT NULL
);

INSERT INTO organization_owners (organization_id, member_id, user_id, status, member_since)
SELECT organization_id, id, user_id, status, created_at FROM members WHERE role = 'owner';

-- Nothing finds members by person alone any more (a person's organizations are read from the copy).
DROP INDEX members_user_idx;
