import type { Database, Queryable } from '../../db/database.ts';
import type { Role } from '../../http/caller.ts';

export type { Role } from '../../http/caller.ts';
export type Plan = 'free' | 'team' | 'enterprise';

export interface UserRow {
  id: string;
  email: string;
  name: string;
  image: string;
  password_hash: string | null;
  is_instance_admin: boolean;
  created_at: Date;
}
export interface OrganizationRow {
  id: string;
  name: string;
  plan: Plan;
  created_at: Date;
}
export interface MemberRow {
  id: string;
  organization_id: string;
  user_id: string;
  role: Role;
  status: 'active' | 'suspended';
  created_at: Date;
  name: string;
  email: string;
  image: string;
}
export interface TeamRow {
  id: string;
  organization_id: string;
  name: string;
  created_at: Date;
}
export interface InvitationRow {
  id: string;
  organization_id: string;
  email: string;
  role: 'admin' | 'member';
  expires_at: Date;
  accepted_at: Date | null;
  created_at: Date;
}
export interface ApiKeyRow {
  id: string;
  organization_id: string;
  name: string;
  role: 'admin' | 'member';
  created_at: Date;
}
/** What a bearer token resolves to, read in one round trip on every authenticated request. */
export interface SessionCallerRow {
  token_hash: string;
  session_id: string;
  user_id: string;
  is_instance_admin: boolean;
  active_organization_id: string | null;
  member_id: string | null;
  role: Role | null;
}

const memberColumns = `m.id, m.organization_id, m.user_id, m.role, m.status, m.created_at, u.name, u.email, u.image`;
const memberJsonFields = `'id', m.id, 'organization_id', m.organization_id, 'user_id', m.user_id, 'role', m.role,
  'status', m.status, 'created_at', m.created_at, 'name', u.name, 'email', u.email, 'image', u.image`;

/**
 * Valid (unexpired, unrevoked) sessions and each caller's active membership, by token hashes: every
 * authenticated request needs this, so concurrent requests share one statement (see the service).
 */
const sessionCallerSql = `
  SELECT s.token_hash, s.id AS session_id, s.user_id, u.is_instance_admin, s.active_organization_id,
         m.id AS member_id, m.role
    FROM sessions s
    JOIN users u ON u.id = s.user_id
    LEFT JOIN members m
      ON m.organization_id = s.active_organization_id AND m.user_id = s.user_id AND m.status = 'active'
   WHERE s.token_hash = ANY($1::text[]) AND s.revoked_at IS NULL AND s.expires_at > now()`;

/** Rows built with json_build_object carry timestamps as ISO strings; callers turn them into Dates. */
type Jsonified<T> = { [K in keyof T]: T[K] extends Date ? string : T[K] };

export interface ActiveOrganizationRow extends SessionCallerRow {
  organization: Jsonified<OrganizationRow> | null;
  owner: Jsonified<MemberRow> | null;
  current_member: Jsonified<MemberRow> | null;
  teams: Jsonified<TeamRow>[] | null;
}

export function createIdentityStore() {
  return {
    async countOrganizations(db: Queryable): Promise<number> {
      const { rows } = await db.query<{ count: number }>('SELECT count(*) AS count FROM organizations');
      return rows[0]!.count;
    },

    async insertUser(
      db: Queryable,
      user: { id: string; email: string; name: string; passwordHash: string | null; isInstanceAdmin?: boolean; image?: string },
    ): Promise<UserRow | undefined> {
      const { rows } = await db.query<UserRow>(
        `INSERT INTO users (id, email, name, image, password_hash, is_instance_admin)
         VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT DO NOTHING
         RETURNING *`,
        [user.id, user.email, user.name, user.image ?? '', user.passwordHash, user.isInstanceAdmin ?? false],
      );
      return rows[0];
    },

    async findUserByEmail(db: Queryable, email: string): Promise<UserRow | undefined> {
      const { rows } = await db.query<UserRow>('SELECT * FROM users WHERE lower(email) = lower($1)', [email]);
      return rows[0];
    },

    /** Sets a user's name and e-mail (a no-op when both are as given); an e-mail another user has is a unique violation. */
    async updateUserNameAndEmail(db: Queryable, id: string, input: { name: string; email: string }): Promise<void> {
      await db.query(
        `UPDATE users SET name = $2, email = $3, updated_at = now()
          WHERE id = $1 AND (name IS DISTINCT FROM $2 OR email IS DISTINCT FROM $3)`,
        [id, input.name, input.email],
      );
    },

    async findUserById(db: Queryable, id: string): Promise<UserRow | undefined> {
      const { rows } = await db.query<UserRow>('SELECT * FROM users WHERE id = $1', [id]);
      return rows[0];
    },

    async insertSession(
      db: Queryable,
      session: { id: string; userId: string; tokenHash: string; activeOrganizationId: string | null; ttlHours: number },
    ): Promise<void> {
      await db.query(
        `INSERT INTO sessions (id, user_id, token_hash, active_organization_id, expires_at)
         VALUES ($1, $2, $3, $4, now() + make_interval(secs => $5 * 3600))`,
        [session.id, session.userId, session.tokenHash, session.activeOrganizationId, session.ttlHours],
      );
    },

    // The three lookups that authenticate requests run on every call, so they are prepared statements.
    async findSessionCallers(db: Database, tokenHashes: string[]): Promise<SessionCallerRow[]> {
      const { rows } = await db.prepared<SessionCallerRow>('identity_session_callers', sessionCallerSql, [tokenHashes]);
      return rows;
    },

    /**
     * Spec operation 7 in one round trip: the session check and everything GET /v1/org shows, for
     * several sessions at once. The organization parts are null when a session has no active
     * organization it is a member of.
     */
    async findActiveOrganizationsByTokens(db: Database, tokenHashes: string[]): Promise<ActiveOrganizationRow[]> {
      const { rows } = await db.prepared<ActiveOrganizationRow>(
        'identity_active_organizations',
        `WITH caller AS (${sessionCallerSql})
         SELECT caller.*,
                CASE WHEN o.id IS NULL THEN NULL ELSE json_build_object(
                  'id', o.id, 'name', o.name, 'plan', o.plan, 'created_at', o.created_at) END AS organization,
                owner.row AS owner,
                current_member.row AS current_member,
                teams.rows AS teams
           FROM caller
           LEFT JOIN organizations o ON o.id = caller.active_organization_id AND caller.member_id IS NOT NULL
           LEFT JOIN LATERAL (
             SELECT json_build_object(${memberJsonFields}) AS row
               FROM members m JOIN users u ON u.id = m.user_id
              WHERE m.organization_id = o.id AND m.role = 'owner'
           ) owner ON true
           LEFT JOIN LATERAL (
             SELECT json_build_object(${memberJsonFields}) AS row
               FROM members m JOIN users u ON u.id = m.user_id
              WHERE m.id = caller.member_id AND m.organization_id = o.id
           ) current_member ON true
           LEFT JOIN LATERAL (
             SELECT coalesce(json_agg(json_build_object(
                      'id', t.id, 'organization_id', t.organization_id, 'name', t.name, 'created_at', t.created_at)
                    ORDER BY t.name, t.id), '[]'::json) AS rows
               FROM team_members tm JOIN teams t ON t.id = tm.team_id
              WHERE tm.organization_id = o.id AND tm.member_id = caller.member_id
           ) teams ON true`,
        [tokenHashes],
      );
      return rows;
    },

    async findApiKeysByHashes(db: Database, keyHashes: string[]): Promise<(ApiKeyRow & { token_hash: string })[]> {
      const { rows } = await db.prepared<ApiKeyRow & { token_hash: string }>(
        'identity_api_keys',
        `SELECT key_hash AS token_hash, id, organization_id, name, role, created_at
           FROM api_keys WHERE key_hash = ANY($1::text[]) AND revoked_at IS NULL`,
        [keyHashes],
      );
      return rows;
    },

    async revokeSession(db: Queryable, sessionId: string): Promise<void> {
      await db.query('UPDATE sessions SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL', [sessionId]);
    },

    async revokeUserSessions(db: Queryable, userId: string): Promise<number> {
      const { rowCount } = await db.query('UPDATE sessions SET revoked_at = now() WHERE user_id = $1 AND revoked_at IS NULL', [userId]);
      return rowCount ?? 0;
    },

    async setSessionOrganization(db: Queryable, sessionId: string, organizationId: string): Promise<void> {
      await db.query('UPDATE sessions SET active_organization_id = $2 WHERE id = $1', [sessionId, organizationId]);
    },

    /**
     * Makes the organization the session's active one unless the session already has a usable one
     * (an organization its user is an active member of). True when it changed.
     */
    async setSessionOrganizationIfUnusable(db: Queryable, sessionId: string, organizationId: string): Promise<boolean> {
      const { rowCount } = await db.query(
        `UPDATE sessions s SET active_organization_id = $2
          WHERE s.id = $1
            AND (s.active_organization_id IS NULL OR NOT EXISTS (
              SELECT 1 FROM members m
               WHERE m.organization_id = s.active_organization_id AND m.user_id = s.user_id AND m.status = 'active'))`,
        [sessionId, organizationId],
      );
      return rowCount === 1;
    },

    async insertOrganization(db: Queryable, organization: { id: string; name: string; plan?: Plan }): Promise<OrganizationRow> {
      const { rows } = await db.query<OrganizationRow>(
        'INSERT INTO organizations (id, name, plan) VALUES ($1, $2, $3) RETURNING id, name, plan, created_at',
        [organization.id, organization.name, organization.plan ?? 'free'],
      );
      return rows[0]!;
    },

    /**
     * Takes the organization's row lock until the transaction ends, for writes of one organization that
     * must run one after another (install-link rotations; see install-links). False when it does not exist.
     */
    async lockOrganization(db: Queryable, organizationId: string): Promise<boolean> {
      const { rows } = await db.query('SELECT id FROM organizations WHERE id = $1 FOR UPDATE', [organizationId]);
      return rows.length > 0;
    },

    async findOrganization(db: Queryable, id: string): Promise<OrganizationRow | undefined> {
      const { rows } = await db.query<OrganizationRow>('SELECT id, name, plan, created_at FROM organizations WHERE id = $1', [id]);
      return rows[0];
    },

    async setPlan(db: Queryable, id: string, plan: Plan): Promise<OrganizationRow | undefined> {
      const { rows } = await db.query<OrganizationRow>(
        'UPDATE organizations SET plan = $2, updated_at = now() WHERE id = $1 RETURNING id, name, plan, created_at',
        [id, plan],
      );
      return rows[0];
    },

    async listOrganizationsOfUser(db: Queryable, userId: string): Promise<(OrganizationRow & { role: Role; member_id: string })[]> {
      const { rows } = await db.query<OrganizationRow & { role: Role; member_id: string }>(
        `SELECT o.id, o.name, o.plan, o.created_at, m.role, m.id AS member_id
           FROM members m JOIN organizations o ON o.id = m.organization_id
          WHERE m.user_id = $1 AND m.status = 'active'
          ORDER BY o.created_at, o.id`,
        [userId],
      );
      return rows;
    },

    async insertMember(db: Queryable, member: { id: string; organizationId: string; userId: string; role: Role }): Promise<boolean> {
      const { rowCount } = await db.query(
        `INSERT INTO members (id, organization_id, user_id, role) VALUES ($1, $2, $3, $4)
         ON CONFLICT (organization_id, user_id) DO NOTHING`,
        [member.id, member.organizationId, member.userId, member.role],
      );
      return rowCount === 1;
    },

    async findMember(db: Queryable, organizationId: string, memberId: string): Promise<MemberRow | undefined> {
      const { rows } = await db.query<MemberRow>(
        `SELECT ${memberColumns} FROM members m JOIN users u ON u.id = m.user_id
          WHERE m.organization_id = $1 AND m.id = $2`,
        [organizationId, memberId],
      );
      return rows[0];
    },

    async findMemberByUser(db: Queryable, organizationId: string, userId: string): Promise<MemberRow | undefined> {
      const { rows } = await db.query<MemberRow>(
        `SELECT ${memberColumns} FROM members m JOIN users u ON u.id = m.user_id
          WHERE m.organization_id = $1 AND m.user_id = $2`,
        [organizationId, userId],
      );
      return rows[0];
    },

    async findOwner(db: Queryable, organizationId: string): Promise<MemberRow | undefined> {
      const { rows } = await db.query<MemberRow>(
        `SELECT ${memberColumns} FROM members m JOIN users u ON u.id = m.user_id
          WHERE m.organization_id = $1 AND m.role = 'owner'`,
        [organizationId],
      );
      return rows[0];
    },

    async listMembers(db: Queryable, organizationId: string, limit: number, after?: string): Promise<MemberRow[]> {
      const { rows } = await db.query<MemberRow>(
        `SELECT ${memberColumns} FROM members m JOIN users u ON u.id = m.user_id
          WHERE m.organization_id = $1 AND ($2::text IS NULL OR m.id > $2)
          ORDER BY m.id LIMIT $3`,
        [organizationId, after ?? null, limit],
      );
      return rows;
    },

    async setMemberRole(db: Queryable, organizationId: string, memberId: string, role: Role): Promise<void> {
      await db.query('UPDATE members SET role = $3 WHERE organization_id = $1 AND id = $2', [organizationId, memberId, role]);
    },

    /** The member's user id, or undefined when there is no such member. */
    async setMemberStatus(db: Queryable, organizationId: string, memberId: string, status: 'active' | 'suspended'): Promise<string | undefined> {
      const { rows } = await db.query<{ user_id: string }>(
        'UPDATE members SET status = $3 WHERE organization_id = $1 AND id = $2 RETURNING user_id',
        [organizationId, memberId, status],
      );
      return rows[0]?.user_id;
    },

    /** The removed member's user id and e-mail, or undefined when there was no such member. */
    async deleteMember(db: Queryable, organizationId: string, memberId: string): Promise<{ userId: string; email: string } | undefined> {
      const { rows } = await db.query<{ user_id: string; email: string }>(
        `DELETE FROM members m USING users u
          WHERE m.organization_id = $1 AND m.id = $2 AND u.id = m.user_id
          RETURNING m.user_id, u.email`,
        [organizationId, memberId],
      );
      return rows[0] && { userId: rows[0].user_id, email: rows[0].email };
    },

    /**
     * The member, share-locked until the transaction ends: a change of their role or status, or their
     * removal, waits for it, and one in progress is waited for and then seen (undefined once removed).
     */
    async findMemberForShare(db: Queryable, organizationId: string, memberId: string): Promise<Pick<MemberRow, 'id' | 'role' | 'status'> | undefined> {
      const { rows } = await db.query<Pick<MemberRow, 'id' | 'role' | 'status'>>(
        'SELECT id, role, status FROM members WHERE organization_id = $1 AND id = $2 FOR SHARE',
        [organizationId, memberId],
      );
      return rows[0];
    },

    /** Of the given ids, those that are members of the organization. */
    async existingMemberIds(db: Queryable, organizationId: string, ids: string[]): Promise<string[]> {
      if (ids.length === 0) return [];
      const { rows } = await db.query<{ id: string }>(
        'SELECT id FROM members WHERE organization_id = $1 AND id = ANY($2::text[])',
        [organizationId, ids],
      );
      return rows.map((row) => row.id);
    },

    /** Of the given ids, those that are members of the organization, share-locked (in id order) until the transaction ends. */
    async lockExistingMembers(db: Queryable, organizationId: string, ids: string[]): Promise<string[]> {
      if (ids.length === 0) return [];
      const { rows } = await db.query<{ id: string }>(
        'SELECT id FROM members WHERE organization_id = $1 AND id = ANY($2::text[]) ORDER BY id FOR SHARE',
        [organizationId, ids],
      );
      return rows.map((row) => row.id);
    },

    async existingTeamIds(db: Queryable, organizationId: string, ids: string[]): Promise<string[]> {
      if (ids.length === 0) return [];
      const { rows } = await db.query<{ id: string }>(
        'SELECT id FROM teams WHERE organization_id = $1 AND id = ANY($2::text[])',
        [organizationId, ids],
      );
      return rows.map((row) => row.id);
    },

    async insertTeam(db: Queryable, team: { id: string; organizationId: string; name: string }): Promise<TeamRow | undefined> {
      const { rows } = await db.query<TeamRow>(
        `INSERT INTO teams (id, organization_id, name) VALUES ($1, $2, $3)
         ON CONFLICT (organization_id, name) DO NOTHING RETURNING id, organization_id, name, created_at`,
        [team.id, team.organizationId, team.name],
      );
      return rows[0];
    },

    async findTeam(db: Queryable, organizationId: string, teamId: string): Promise<TeamRow | undefined> {
      const { rows } = await db.query<TeamRow>(
        'SELECT id, organization_id, name, created_at FROM teams WHERE organization_id = $1 AND id = $2',
        [organizationId, teamId],
      );
      return rows[0];
    },

    async listTeams(db: Queryable, organizationId: string, limit: number, after?: string): Promise<(TeamRow & { member_ids: string[] })[]> {
      const { rows } = await db.query<TeamRow & { member_ids: string[] }>(
        `SELECT t.id, t.organization_id, t.name, t.created_at,
                coalesce(array_agg(tm.member_id ORDER BY tm.member_id) FILTER (WHERE tm.member_id IS NOT NULL), '{}') AS member_ids
           FROM teams t LEFT JOIN team_members tm ON tm.team_id = t.id
          WHERE t.organization_id = $1 AND ($2::text IS NULL OR t.id > $2)
          GROUP BY t.id ORDER BY t.id LIMIT $3`,
        [organizationId, after ?? null, limit],
      );
      return rows;
    },

    async addTeamMember(db: Queryable, organizationId: string, teamId: string, memberId: string): Promise<void> {
      await db.query(
        `INSERT INTO team_members (team_id, member_id, organization_id) VALUES ($1, $2, $3)
         ON CONFLICT DO NOTHING`,
        [teamId, memberId, organizationId],
      );
    },

    async removeTeamMember(db: Queryable, organizationId: string, teamId: string, memberId: string): Promise<boolean> {
      const { rowCount } = await db.query(
        'DELETE FROM team_members WHERE organization_id = $1 AND team_id = $2 AND member_id = $3',
        [organizationId, teamId, memberId],
      );
      return rowCount === 1;
    },

    async listTeamsOfMember(db: Queryable, organizationId: string, memberId: string): Promise<TeamRow[]> {
      const { rows } = await db.query<TeamRow>(
        `SELECT t.id, t.organization_id, t.name, t.created_at
           FROM team_members tm JOIN teams t ON t.id = tm.team_id
          WHERE tm.organization_id = $1 AND tm.member_id = $2 ORDER BY t.name, t.id`,
        [organizationId, memberId],
      );
      return rows;
    },

    /**
     * Stores an invitation, unless the address belongs to a member of the organization (of any status):
     * accepting would fail, so nothing is stored and the result is undefined.
     */
    async insertInvitationUnlessMember(
      db: Queryable,
      invitation: { id: string; organizationId: string; email: string; role: 'admin' | 'member'; tokenHash: string; invitedBy: string | null },
    ): Promise<InvitationRow | undefined> {
      const { rows } = await db.query<InvitationRow>(
        `INSERT INTO invitations (id, organization_id, email, role, token_hash, invited_by, expires_at)
         SELECT $1, $2, $3, $4, $5, $6, now() + interval '7 days'
          WHERE NOT EXISTS (
            SELECT 1 FROM members m JOIN users u ON u.id = m.user_id
             WHERE m.organization_id = $2 AND lower(u.email) = lower($3))
         RETURNING id, organization_id, email, role, expires_at, accepted_at, created_at`,
        [invitation.id, invitation.organizationId, invitation.email, invitation.role, invitation.tokenHash, invitation.invitedBy],
      );
      return rows[0];
    },

    /** The organization of the invitation with this token hash, whatever its state (unlocked). */
    async findInvitationOrganization(db: Queryable, tokenHash: string): Promise<string | undefined> {
      const { rows } = await db.query<{ organization_id: string }>('SELECT organization_id FROM invitations WHERE token_hash = $1', [tokenHash]);
      return rows[0]?.organization_id;
    },

    /**
     * Locks the invitation row so two accepts of one invitation cannot both succeed. `expired` is read
     * against the clock, not the transaction's start (now()): an invitation ended (revoked, or its
     * sender removed) by a transaction that began after this one did carries an end later than this
     * transaction's now(), and must still count as ended once the lock is had.
     */
    async findInvitationForUpdate(db: Queryable, tokenHash: string): Promise<(InvitationRow & { expired: boolean }) | undefined> {
      const { rows } = await db.query<InvitationRow & { expired: boolean }>(
        `SELECT id, organization_id, email, role, expires_at, accepted_at, created_at, expires_at <= clock_timestamp() AS expired
           FROM invitations WHERE token_hash = $1 FOR UPDATE`,
        [tokenHash],
      );
      return rows[0];
    },

    async markInvitationAccepted(db: Queryable, id: string): Promise<void> {
      await db.query('UPDATE invitations SET accepted_at = now() WHERE id = $1', [id]);
    },

    /**
     * The organization's pending invitations (not accepted, not expired, not ended: an ended one is
     * expired, see below), newest first: ids are time-ordered, so the page continues with ids below `after`.
     */
    async listPendingInvitations(db: Queryable, organizationId: string, limit: number, after?: string): Promise<InvitationRow[]> {
      const { rows } = await db.query<InvitationRow>(
        `SELECT id, organization_id, email, role, expires_at, accepted_at, created_at FROM invitations
          WHERE organization_id = $1 AND accepted_at IS NULL AND expires_at > now() AND ($2::text IS NULL OR id < $2)
          ORDER BY id DESC LIMIT $3`,
        [organizationId, after ?? null, limit],
      );
      return rows;
    },

    /**
     * Ends one pending invitation of the organization (expired, as below). False when it is not pending
     * there. Pending is judged against the clock once the row is had, as accepting judges it: an end
     * committed meanwhile counts even when its statement began after this one, so of two revocations at
     * once only one ends the invitation and the other finds nothing pending.
     */
    async endPendingInvitation(db: Queryable, organizationId: string, id: string): Promise<boolean> {
      const { rowCount } = await db.query(
        `UPDATE invitations SET expires_at = now()
          WHERE organization_id = $1 AND id = $2 AND accepted_at IS NULL AND expires_at > clock_timestamp()`,
        [organizationId, id],
      );
      return rowCount === 1;
    },

    /** Ends the pending invitations of an organization to an address (they are expired, not deleted). */
    async expirePendingInvitations(db: Queryable, organizationId: string, email: string): Promise<void> {
      await db.query(
        `UPDATE invitations SET expires_at = now()
          WHERE organization_id = $1 AND lower(email) = lower($2) AND accepted_at IS NULL AND expires_at > now()`,
        [organizationId, email],
      );
    },

    /** Ends the pending invitations a user sent on behalf of an organization (expired, as above). */
    async expireInvitationsSentBy(db: Queryable, organizationId: string, userId: string): Promise<void> {
      await db.query(
        `UPDATE invitations SET expires_at = now()
          WHERE organization_id = $1 AND invited_by = $2 AND accepted_at IS NULL AND expires_at > now()`,
        [organizationId, userId],
      );
    },

    async insertApiKey(
      db: Queryable,
      key: { id: string; organizationId: string; name: string; role: 'admin' | 'member'; keyHash: string; createdBy: string | null },
    ): Promise<ApiKeyRow> {
      const { rows } = await db.query<ApiKeyRow>(
        `INSERT INTO api_keys (id, organization_id, name, role, key_hash, created_by) VALUES ($1, $2, $3, $4, $5, $6)
         RETURNING id, organization_id, name, role, created_at`,
        [key.id, key.organizationId, key.name, key.role, key.keyHash, key.createdBy],
      );
      return rows[0]!;
    },

    async listApiKeys(db: Queryable, organizationId: string, limit: number, after?: string): Promise<ApiKeyRow[]> {
      const { rows } = await db.query<ApiKeyRow>(
        `SELECT id, organization_id, name, role, created_at FROM api_keys
          WHERE organization_id = $1 AND revoked_at IS NULL AND ($2::text IS NULL OR id > $2)
          ORDER BY id LIMIT $3`,
        [organizationId, after ?? null, limit],
      );
      return rows;
    },

    async revokeApiKey(db: Queryable, organizationId: string, id: string): Promise<boolean> {
      const { rowCount } = await db.query(
        'UPDATE api_keys SET revoked_at = now() WHERE organization_id = $1 AND id = $2 AND revoked_at IS NULL',
        [organizationId, id],
      );
      return rowCount === 1;
    },
  };
}

export type IdentityStore = ReturnType<typeof createIdentityStore>;
