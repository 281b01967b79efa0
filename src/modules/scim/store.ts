import type { Queryable } from '../../db/database.ts';
import { tokenCondition, type TokenLookup } from '../../platform/tokens.ts';
import type { Filter } from './filter.ts';
import { compileFilter, groupResolver, userResolver } from './filter-sql.ts';

export interface ConnectorRow {
  id: string;
  organization_id: string;
  provider_id: string;
  group_mapping_mode: string;
  token_rotated_at: Date | null;
  unresolved_failure_count: number;
  last_failure_at: Date | null;
  last_failure_action: string | null;
  last_failure_message: string | null;
  next_retry_at: Date | null;
  last_successful_sync_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface ScimUserRow {
  id: string;
  organization_id: string;
  user_id: string;
  member_id: string | null;
  user_name: string;
  external_id: string | null;
  display_name: string | null;
  active: boolean;
  resource: Record<string, unknown>;
  created_at: Date;
  updated_at: Date;
}

/** The attributes of a SCIM user that scim_users keeps in columns (filters, uniqueness, the member's state). */
export interface ScimUserAttributes {
  userName: string;
  externalId: string | null;
  displayName: string | null;
  active: boolean;
}

export interface ScimGroupRow {
  id: string;
  organization_id: string;
  display_name: string;
  external_id: string | null;
  resource: Record<string, unknown>;
  created_at: Date;
  updated_at: Date;
}

export interface GroupMemberRef {
  group_id: string;
  scim_user_id: string;
  group_display_name: string;
  user_display: string;
}

const connectorColumns = `id, organization_id, provider_id, group_mapping_mode, token_rotated_at, unresolved_failure_count,
  last_failure_at, last_failure_action, last_failure_message, next_retry_at, last_successful_sync_at, created_at, updated_at`;
const userColumns =
  'id, organization_id, user_id, member_id, user_name, external_id, display_name, active, resource, created_at, updated_at';
const groupColumns = 'id, organization_id, display_name, external_id, resource, created_at, updated_at';

export function createScimStore() {
  return {
    // ---- connectors ----
    async findConnector(db: Queryable, organizationId: string): Promise<ConnectorRow | undefined> {
      const { rows } = await db.query<ConnectorRow>(
        `SELECT ${connectorColumns} FROM scim_connectors WHERE organization_id = $1`,
        [organizationId],
      );
      return rows[0];
    },

    async findConnectorByToken(db: Queryable, lookup: TokenLookup): Promise<ConnectorRow | undefined> {
      const { where, params } = tokenCondition(lookup, 'token_hash', 'organization_id');
      const { rows } = await db.query<ConnectorRow>(
        `SELECT ${connectorColumns} FROM scim_connectors WHERE ${where}`,
        params,
      );
      return rows[0];
    },

    /** Creates the connector if absent and sets a new token hash in one statement (the old hash stops matching at once). */
    async upsertConnectorToken(
      db: Queryable,
      input: { id: string; organizationId: string; providerId: string; tokenHash: string },
    ): Promise<ConnectorRow> {
      const { rows } = await db.query<ConnectorRow>(
        `INSERT INTO scim_connectors (id, organization_id, provider_id, token_hash, token_rotated_at)
         VALUES ($1, $2, $3, $4, now())
         ON CONFLICT (organization_id) DO UPDATE
           SET token_hash = EXCLUDED.token_hash, token_rotated_at = EXCLUDED.token_rotated_at, provider_id = EXCLUDED.provider_id, updated_at = EXCLUDED.updated_at
         RETURNING ${connectorColumns}`,
        [input.id, input.organizationId, input.providerId, input.tokenHash],
      );
      return rows[0]!;
    },

    async recordFailure(db: Queryable, organizationId: string, action: string, message: string): Promise<void> {
      await db.query(
        `UPDATE scim_connectors
            SET unresolved_failure_count = unresolved_failure_count + 1, last_failure_at = now(),
                last_failure_action = $2, last_failure_message = $3
          WHERE organization_id = $1`,
        [organizationId, action, message],
      );
    },

    async recordSuccess(db: Queryable, organizationId: string): Promise<void> {
      await db.query(
        'UPDATE scim_connectors SET unresolved_failure_count = 0, last_successful_sync_at = now() WHERE organization_id = $1',
        [organizationId],
      );
    },

    // ---- users ----
    async listUsers(db: Queryable, organizationId: string, filter: Filter | undefined, offset: number, limit: number) {
      const params: unknown[] = [organizationId];
      const where = filter ? ` AND (${compileFilter(filter, userResolver, params)})` : '';
      const total = await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM scim_users u WHERE u.organization_id = $1${where}`,
        params,
      );
      if (limit === 0) return { rows: [] as ScimUserRow[], total: total.rows[0]!.n };
      const { rows } = await db.query<ScimUserRow>(
        `SELECT ${userColumns} FROM scim_users u WHERE u.organization_id = $1${where}
          ORDER BY u.created_at, u.id OFFSET ${Number(offset)} LIMIT ${Number(limit)}`,
        params,
      );
      return { rows, total: total.rows[0]!.n };
    },

    async findUser(
      db: Queryable,
      organizationId: string,
      id: string,
      forUpdate = false,
    ): Promise<ScimUserRow | undefined> {
      const { rows } = await db.query<ScimUserRow>(
        `SELECT ${userColumns} FROM scim_users WHERE organization_id = $1 AND id = $2${forUpdate ? ' FOR UPDATE' : ''}`,
        [organizationId, id],
      );
      return rows[0];
    },

    async findUserByUserName(
      db: Queryable,
      organizationId: string,
      userName: string,
    ): Promise<ScimUserRow | undefined> {
      const { rows } = await db.query<ScimUserRow>(
        `SELECT ${userColumns} FROM scim_users WHERE organization_id = $1 AND lower(user_name) = lower($2)`,
        [organizationId, userName],
      );
      return rows[0];
    },

    async findUserByUserId(db: Queryable, organizationId: string, userId: string): Promise<ScimUserRow | undefined> {
      const { rows } = await db.query<ScimUserRow>(
        `SELECT ${userColumns} FROM scim_users WHERE organization_id = $1 AND user_id = $2`,
        [organizationId, userId],
      );
      return rows[0];
    },

    async insertUser(
      db: Queryable,
      row: {
        id: string;
        organizationId: string;
        userId: string;
        memberId: string | null;
        resource: unknown;
      } & ScimUserAttributes,
    ): Promise<ScimUserRow> {
      const { rows } = await db.query<ScimUserRow>(
        `INSERT INTO scim_users (id, organization_id, user_id, member_id, user_name, external_id, display_name, active, resource)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb) RETURNING ${userColumns}`,
        [
          row.id,
          row.organizationId,
          row.userId,
          row.memberId,
          row.userName,
          row.externalId,
          row.displayName,
          row.active,
          JSON.stringify(row.resource),
        ],
      );
      return rows[0]!;
    },

    async updateUser(
      db: Queryable,
      organizationId: string,
      id: string,
      row: { memberId: string | null; resource: unknown } & ScimUserAttributes,
    ): Promise<ScimUserRow> {
      const { rows } = await db.query<ScimUserRow>(
        `UPDATE scim_users
            SET member_id = $3, user_name = $4, external_id = $5, display_name = $6, active = $7, resource = $8::jsonb, updated_at = now()
          WHERE organization_id = $1 AND id = $2
          RETURNING ${userColumns}`,
        [
          organizationId,
          id,
          row.memberId,
          row.userName,
          row.externalId,
          row.displayName,
          row.active,
          JSON.stringify(row.resource),
        ],
      );
      return rows[0]!;
    },

    async deleteUser(db: Queryable, organizationId: string, id: string): Promise<void> {
      await db.query('DELETE FROM scim_users WHERE organization_id = $1 AND id = $2', [organizationId, id]);
    },

    /**
     * Of `ids`, those that are SCIM users of the organization, key-share locked (in id order) until the
     * transaction ends: a deletion in progress is waited for and then seen, and one starting later
     * waits, before the caller takes any group membership row its cascade would need.
     */
    async lockExistingUserIds(db: Queryable, organizationId: string, ids: string[]): Promise<string[]> {
      if (ids.length === 0) return [];
      const { rows } = await db.query<{ id: string }>(
        'SELECT id FROM scim_users WHERE organization_id = $1 AND id = ANY($2::text[]) ORDER BY id FOR KEY SHARE',
        [organizationId, ids],
      );
      return rows.map((r) => r.id);
    },

    // ---- groups ----
    async listGroups(db: Queryable, organizationId: string, filter: Filter | undefined, offset: number, limit: number) {
      const params: unknown[] = [organizationId];
      const where = filter ? ` AND (${compileFilter(filter, groupResolver, params)})` : '';
      const total = await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM scim_groups g WHERE g.organization_id = $1${where}`,
        params,
      );
      if (limit === 0) return { rows: [] as ScimGroupRow[], total: total.rows[0]!.n };
      const { rows } = await db.query<ScimGroupRow>(
        `SELECT ${groupColumns} FROM scim_groups g WHERE g.organization_id = $1${where}
          ORDER BY g.created_at, g.id OFFSET ${Number(offset)} LIMIT ${Number(limit)}`,
        params,
      );
      return { rows, total: total.rows[0]!.n };
    },

    async findGroup(
      db: Queryable,
      organizationId: string,
      id: string,
      forUpdate = false,
    ): Promise<ScimGroupRow | undefined> {
      const { rows } = await db.query<ScimGroupRow>(
        `SELECT ${groupColumns} FROM scim_groups WHERE organization_id = $1 AND id = $2${forUpdate ? ' FOR UPDATE' : ''}`,
        [organizationId, id],
      );
      return rows[0];
    },

    async insertGroup(
      db: Queryable,
      row: { id: string; organizationId: string; displayName: string; externalId: string | null; resource: unknown },
    ): Promise<ScimGroupRow> {
      const { rows } = await db.query<ScimGroupRow>(
        `INSERT INTO scim_groups (id, organization_id, display_name, external_id, resource)
         VALUES ($1, $2, $3, $4, $5::jsonb) RETURNING ${groupColumns}`,
        [row.id, row.organizationId, row.displayName, row.externalId, JSON.stringify(row.resource)],
      );
      return rows[0]!;
    },

    async updateGroup(
      db: Queryable,
      organizationId: string,
      id: string,
      row: { displayName: string; externalId: string | null; resource: unknown },
    ): Promise<ScimGroupRow> {
      const { rows } = await db.query<ScimGroupRow>(
        `UPDATE scim_groups SET display_name = $3, external_id = $4, resource = $5::jsonb, updated_at = now()
          WHERE organization_id = $1 AND id = $2 RETURNING ${groupColumns}`,
        [organizationId, id, row.displayName, row.externalId, JSON.stringify(row.resource)],
      );
      return rows[0]!;
    },

    async deleteGroup(db: Queryable, organizationId: string, id: string): Promise<void> {
      await db.query('DELETE FROM scim_groups WHERE organization_id = $1 AND id = $2', [organizationId, id]);
    },

    async setGroupMembers(db: Queryable, organizationId: string, groupId: string, userIds: string[]): Promise<void> {
      await db.query('DELETE FROM scim_group_members WHERE organization_id = $1 AND group_id = $2', [
        organizationId,
        groupId,
      ]);
      if (userIds.length === 0) return;
      await db.query(
        `INSERT INTO scim_group_members (organization_id, group_id, scim_user_id)
         SELECT $1, $2, unnest($3::text[]) ON CONFLICT DO NOTHING`,
        [organizationId, groupId, userIds],
      );
    },

    /** Memberships of the given groups or users (one query per page of resources). */
    async memberships(
      db: Queryable,
      organizationId: string,
      by: 'group' | 'user',
      ids: string[],
    ): Promise<GroupMemberRef[]> {
      if (ids.length === 0) return [];
      const { rows } = await db.query<GroupMemberRef>(
        `SELECT gm.group_id, gm.scim_user_id, g.display_name AS group_display_name,
                COALESCE(u.display_name, u.user_name) AS user_display
           FROM scim_group_members gm
           JOIN scim_groups g ON g.organization_id = gm.organization_id AND g.id = gm.group_id
           JOIN scim_users u ON u.organization_id = gm.organization_id AND u.id = gm.scim_user_id
          WHERE gm.organization_id = $1 AND ${by === 'group' ? 'gm.group_id' : 'gm.scim_user_id'} = ANY($2::text[])
          ORDER BY u.created_at, u.id`,
        [organizationId, ids],
      );
      return rows;
    },
  };
}

export type ScimStore = ReturnType<typeof createScimStore>;
