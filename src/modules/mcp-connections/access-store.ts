// SQL for who may use an MCP connection: its organization-wide flag's members and teams lists.
import type { Queryable } from '../../db/database.ts';

export interface AccessSet {
  orgWide: boolean;
  memberIds: string[];
  teamIds: string[];
}

/** The access lists of connections (mcp_connection_members, mcp_connection_teams). */
export function createAccessStore() {
  return {
    async accessOf(
      q: Queryable,
      organizationId: string,
      connectionIds: string[],
    ): Promise<Map<string, { memberIds: string[]; teamIds: string[] }>> {
      const result = new Map(connectionIds.map((id) => [id, { memberIds: [] as string[], teamIds: [] as string[] }]));
      if (connectionIds.length === 0) return result;
      const { rows } = await q.query<{ connectionId: string; kind: 'member' | 'team'; principalId: string }>(
        `SELECT connection_id AS "connectionId", 'member' AS kind, member_id AS "principalId" FROM mcp_connection_members
          WHERE organization_id = $1 AND connection_id = ANY($2)
         UNION ALL
         SELECT connection_id, 'team', team_id FROM mcp_connection_teams WHERE organization_id = $1 AND connection_id = ANY($2)
         ORDER BY 3`,
        [organizationId, connectionIds],
      );
      for (const row of rows) {
        const entry = result.get(row.connectionId)!;
        (row.kind === 'member' ? entry.memberIds : entry.teamIds).push(row.principalId);
      }
      return result;
    },

    async replaceAccess(q: Queryable, organizationId: string, connectionId: string, access: AccessSet): Promise<void> {
      await q.query('DELETE FROM mcp_connection_members WHERE organization_id = $1 AND connection_id = $2', [
        organizationId,
        connectionId,
      ]);
      await q.query('DELETE FROM mcp_connection_teams WHERE organization_id = $1 AND connection_id = $2', [
        organizationId,
        connectionId,
      ]);
      if (access.memberIds.length > 0) {
        await q.query(
          `INSERT INTO mcp_connection_members (organization_id, connection_id, member_id) SELECT $1, $2, unnest($3::text[])`,
          [organizationId, connectionId, access.memberIds],
        );
      }
      if (access.teamIds.length > 0) {
        await q.query(
          `INSERT INTO mcp_connection_teams (organization_id, connection_id, team_id) SELECT $1, $2, unnest($3::text[])`,
          [organizationId, connectionId, access.teamIds],
        );
      }
    },
  };
}
