// SQL of the tool catalog (what the server offered at its last successful probe) and of the tool
// policy (which tools the workspace may use), tables mcp_connection_catalogs and
// mcp_connection_tool_policies (migration 0110). Every statement filters on organization_id.
import type { Queryable } from '../../db/database.ts';
import { isForeignKeyViolation } from '../../db/errors.ts';
import type { CatalogTool, ServerCatalog } from './probe/index.ts';

export type ToolPolicyMode = 'all' | 'allow_list' | 'deny_list';

export interface ToolPolicy {
  mode: ToolPolicyMode;
  tools: string[];
  destructiveNeedsApproval: boolean;
  updatedAt: Date | null;
}

export const defaultToolPolicy = (): ToolPolicy => ({
  mode: 'all',
  tools: [],
  destructiveNeedsApproval: false,
  updatedAt: null,
});

export interface StoredCatalog {
  identityFingerprint: string;
  serverName: string | null;
  serverVersion: string | null;
  protocolVersion: string | null;
  capabilities: Record<string, unknown>;
  tools: CatalogTool[];
  promptCount: number | null;
  resourceCount: number | null;
  truncated: boolean;
  updatedAt: Date;
}

/**
 * Stores what a successful probe of the connection's identity `identityFingerprint` saw. An
 * observation of the server, written as it arrives (like credential health): nothing is written
 * when the connection is gone or its identity changed since the probe began.
 */
export async function recordCatalog(
  q: Queryable,
  organizationId: string,
  connectionId: string,
  identityFingerprint: string,
  catalog: ServerCatalog,
): Promise<void> {
  try {
    await q.query(
      `INSERT INTO mcp_connection_catalogs AS k
         (organization_id, connection_id, identity_fingerprint, server_name, server_version, protocol_version, capabilities, tools,
          prompt_count, resource_count, truncated, updated_at)
       SELECT c.organization_id, c.id, c.identity_fingerprint, $4, $5, $6, $7::jsonb, $8::jsonb, $9, $10, $11, clock_timestamp()
         FROM mcp_connections c WHERE c.organization_id = $1 AND c.id = $2 AND c.identity_fingerprint = $3
       ON CONFLICT (organization_id, connection_id) DO UPDATE SET
         identity_fingerprint = EXCLUDED.identity_fingerprint, server_name = EXCLUDED.server_name, server_version = EXCLUDED.server_version,
         protocol_version = EXCLUDED.protocol_version, capabilities = EXCLUDED.capabilities, tools = EXCLUDED.tools,
         prompt_count = EXCLUDED.prompt_count, resource_count = EXCLUDED.resource_count, truncated = EXCLUDED.truncated,
         updated_at = EXCLUDED.updated_at`,
      [
        organizationId,
        connectionId,
        identityFingerprint,
        catalog.serverInfo?.name ?? null,
        catalog.serverInfo?.version ?? null,
        catalog.protocolVersion,
        JSON.stringify(catalog.capabilities),
        JSON.stringify(catalog.tools),
        catalog.promptCount,
        catalog.resourceCount,
        catalog.truncated,
      ],
    );
  } catch (error) {
    // Deleted between the SELECT and the insert's key check: there is nothing to record it for.
    if (!isForeignKeyViolation(error)) throw error;
  }
}

export async function findCatalog(
  q: Queryable,
  organizationId: string,
  connectionId: string,
): Promise<StoredCatalog | undefined> {
  const { rows } = await q.query<StoredCatalog>(
    `SELECT identity_fingerprint AS "identityFingerprint", server_name AS "serverName", server_version AS "serverVersion",
            protocol_version AS "protocolVersion", capabilities, tools, prompt_count AS "promptCount", resource_count AS "resourceCount",
            truncated, updated_at AS "updatedAt"
       FROM mcp_connection_catalogs WHERE organization_id = $1 AND connection_id = $2`,
    [organizationId, connectionId],
  );
  return rows[0];
}

/** The tool policies of these connections; a connection without one has the default (every tool). */
export async function toolPoliciesOf(
  q: Queryable,
  organizationId: string,
  connectionIds: string[],
): Promise<Map<string, ToolPolicy>> {
  const policies = new Map<string, ToolPolicy>();
  if (connectionIds.length === 0) return policies;
  const { rows } = await q.query<ToolPolicy & { connectionId: string }>(
    `SELECT connection_id AS "connectionId", mode, tools, destructive_needs_approval AS "destructiveNeedsApproval", updated_at AS "updatedAt"
       FROM mcp_connection_tool_policies WHERE organization_id = $1 AND connection_id = ANY($2::text[])`,
    [organizationId, connectionIds],
  );
  for (const { connectionId, ...policy } of rows) policies.set(connectionId, policy);
  return policies;
}

/** Sets the policy of a connection the caller holds (its row locked by the transaction `q`). */
export async function upsertToolPolicy(
  q: Queryable,
  organizationId: string,
  connectionId: string,
  policy: Omit<ToolPolicy, 'updatedAt'>,
  updatedBy: string | null,
): Promise<void> {
  await q.query(
    `INSERT INTO mcp_connection_tool_policies AS p (organization_id, connection_id, mode, tools, destructive_needs_approval, updated_at, updated_by)
     VALUES ($1, $2, $3, $4::jsonb, $5, clock_timestamp(), $6)
     ON CONFLICT (organization_id, connection_id) DO UPDATE SET mode = EXCLUDED.mode, tools = EXCLUDED.tools,
       destructive_needs_approval = EXCLUDED.destructive_needs_approval, updated_at = EXCLUDED.updated_at, updated_by = EXCLUDED.updated_by
     WHERE p.organization_id = $1`,
    [
      organizationId,
      connectionId,
      policy.mode,
      JSON.stringify(policy.tools),
      policy.destructiveNeedsApproval,
      updatedBy,
    ],
  );
}

/** The capabilities each connection's server declared at its last successful probe, with the identity probed. */
export async function capabilitiesOf(
  q: Queryable,
  organizationId: string,
  connectionIds: string[],
): Promise<Map<string, { identityFingerprint: string; capabilities: Record<string, unknown> }>> {
  const found = new Map<string, { identityFingerprint: string; capabilities: Record<string, unknown> }>();
  if (connectionIds.length === 0) return found;
  const { rows } = await q.query<{
    connectionId: string;
    identityFingerprint: string;
    capabilities: Record<string, unknown>;
  }>(
    `SELECT connection_id AS "connectionId", identity_fingerprint AS "identityFingerprint", capabilities
       FROM mcp_connection_catalogs WHERE organization_id = $1 AND connection_id = ANY($2::text[])`,
    [organizationId, connectionIds],
  );
  for (const { connectionId, ...catalog } of rows) found.set(connectionId, catalog);
  return found;
}
