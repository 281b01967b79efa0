// SQL for plugins and the connections they link (plugin_connection_links).
import type { Queryable } from '../../db/database.ts';

export interface PluginLink {
  connectionId: string;
  pluginId: string;
  name: string;
  relation: 'requires' | 'manages_identity';
}

/** Plugins and their links to connections. */
export function createPluginStore() {
  return {
    async pluginLinks(q: Queryable, organizationId: string, connectionIds: string[]): Promise<PluginLink[]> {
      if (connectionIds.length === 0) return [];
      const { rows } = await q.query<PluginLink>(
        `SELECT l.connection_id AS "connectionId", p.id AS "pluginId", p.name, l.relation
           FROM plugin_connection_links l JOIN plugins p ON p.organization_id = l.organization_id AND p.id = l.plugin_id
          WHERE l.organization_id = $1 AND l.connection_id = ANY($2) ORDER BY p.id`,
        [organizationId, connectionIds],
      );
      return rows;
    },

    /** Kept from being deleted until the transaction ends (a plugin is about to link it); a delete that came first wins. */
    async findConnectionByIdentity(
      q: Queryable,
      organizationId: string,
      identityFingerprint: string,
    ): Promise<{ id: string } | undefined> {
      const { rows } = await q.query<{ id: string }>(
        'SELECT id FROM mcp_connections WHERE organization_id = $1 AND identity_fingerprint = $2 ORDER BY id LIMIT 1 FOR KEY SHARE',
        [organizationId, identityFingerprint],
      );
      return rows[0];
    },

    async insertPlugin(
      q: Queryable,
      row: {
        id: string;
        organizationId: string;
        name: string;
        version: string | null;
        manifest: unknown;
        installedBy: string | null;
      },
    ) {
      const { rows } = await q.query<{ createdAt: Date }>(
        `INSERT INTO plugins (id, organization_id, name, version, manifest, installed_by) VALUES ($1, $2, $3, $4, $5, $6)
         RETURNING created_at AS "createdAt"`,
        [row.id, row.organizationId, row.name, row.version, JSON.stringify(row.manifest), row.installedBy],
      );
      return rows[0]!;
    },

    async insertPluginLink(
      q: Queryable,
      organizationId: string,
      pluginId: string,
      connectionId: string,
      relation: PluginLink['relation'],
    ) {
      await q.query(
        `INSERT INTO plugin_connection_links (organization_id, plugin_id, connection_id, relation) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`,
        [organizationId, pluginId, connectionId, relation],
      );
    },

    /** The deleted plugin's name, or undefined when there was none. */
    async deletePlugin(q: Queryable, organizationId: string, pluginId: string): Promise<string | undefined> {
      const { rows } = await q.query<{ name: string }>(
        'DELETE FROM plugins WHERE organization_id = $1 AND id = $2 RETURNING name',
        [organizationId, pluginId],
      );
      return rows[0]?.name;
    },
  };
}
