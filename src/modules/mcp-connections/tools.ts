// The tool catalog as a caller sees it (GET .../tools) and the tool policy administrators set
// (PUT .../tool-policy). The catalog is what the server offered at its last successful probe or test
// of the connection's current identity (stored by probing.ts and oauth/connection-test.ts); the
// policy says which tools the workspace may use: every tool, an allow-list or a deny-list, and
// whether a tool that may be destructive needs an approval before each call.
import type { Caller } from '../../http/caller.ts';
import { invalidRequest } from '../../http/errors.ts';
import { refusedLikeAuthenticate } from '../identity/index.ts';
import { isoTimestamp } from '../../http/schemas.ts';
import { writeTransaction, type CallerContext } from '../../platform/write-context.ts';
import { connectionNotFound, loadVisible, requirePermission } from './access.ts';
import {
  defaultToolPolicy,
  findCatalog,
  toolPoliciesOf,
  upsertToolPolicy,
  type ToolPolicy,
  type ToolPolicyMode,
} from './catalog-store.ts';
import type { ConnectionDeps } from './deps.ts';
import type { CatalogTool } from './probe/index.ts';
import { toolPolicyView } from './tool-policy-view.ts';
import { presentAfterWrite } from './view.ts';

export interface ToolPolicyInput {
  mode: ToolPolicyMode;
  tools: string[];
  destructiveNeedsApproval: boolean;
}

/**
 * What MCP says a client must assume of a tool without annotations: it may be destructive unless
 * it says it is read-only (readOnlyHint, default false) or not destructive (destructiveHint, default true).
 */
export function mayBeDestructive(tool: Pick<CatalogTool, 'annotations'>): boolean {
  return tool.annotations?.readOnlyHint !== true && tool.annotations?.destructiveHint !== false;
}

export function allowedBy(policy: Pick<ToolPolicy, 'mode' | 'tools'>, name: string): boolean {
  if (policy.mode === 'all') return true;
  const listed = policy.tools.includes(name);
  return policy.mode === 'allow_list' ? listed : !listed;
}

/** GET .../tools: the stored catalog of the connection's current identity, with the policy applied. */
export async function listTools(deps: Pick<ConnectionDeps, 'db' | 'store'>, caller: Caller, id: string) {
  const row = await loadVisible(deps, caller, id);
  const [stored, policies] = await Promise.all([
    findCatalog(deps.db, row.organizationId, id),
    toolPoliciesOf(deps.db, row.organizationId, [id]),
  ]);
  // A catalog of a former identity (another server, before an edit) is not this server's.
  const catalog = stored && stored.identityFingerprint === row.identityFingerprint ? stored : undefined;
  const policy = policies.get(id) ?? defaultToolPolicy();
  const present = new Set((catalog?.tools ?? []).map((tool) => tool.name));
  const tools = [
    ...(catalog?.tools ?? []).map((tool) => {
      const allowed = allowedBy(policy, tool.name);
      return {
        ...tool,
        allowed,
        needsApproval: allowed && policy.destructiveNeedsApproval && mayBeDestructive(tool),
        absent: false,
      };
    }),
    // Named by the policy, not offered now: shown so its decision is seen (and kept should it return).
    ...policy.tools
      .filter((name) => !present.has(name))
      .map((name) => ({
        name,
        inputSchema: null,
        allowed: allowedBy(policy, name),
        needsApproval: false,
        absent: true,
      })),
  ];
  return {
    serverInfo: catalog?.serverName != null ? { name: catalog.serverName, version: catalog.serverVersion ?? '' } : null,
    protocolVersion: catalog?.protocolVersion ?? null,
    capabilities: catalog?.capabilities ?? null,
    promptCount: catalog?.promptCount ?? null,
    resourceCount: catalog?.resourceCount ?? null,
    catalogUpdatedAt: catalog ? isoTimestamp(catalog.updatedAt) : null,
    truncated: catalog?.truncated ?? false,
    toolPolicy: toolPolicyView(policies.get(id)),
    tools,
  };
}

/**
 * PUT .../tool-policy: a privileged write. The acting admin is checked again inside the transaction
 * and the connection held (a concurrent DELETE waits, or has happened and this is a 404).
 */
export async function setToolPolicy(
  deps: Pick<ConnectionDeps, 'db' | 'store' | 'members' | 'publicUrl'>,
  ctx: CallerContext,
  id: string,
  input: ToolPolicyInput,
) {
  const caller = ctx.actor;
  const { organizationId } = requirePermission(caller, 'mcp_connections.manage');
  if (input.mode === 'all' && input.tools.length > 0) {
    throw invalidRequest([
      { message: 'Must be empty when mode is "all" (every tool is allowed)', path: ['tools'], in: 'body' },
    ]);
  }
  const tools = [...new Set(input.tools)];
  await writeTransaction(deps.db, ctx, async (tx) => {
    await deps.members.holdActingMember(tx, organizationId, caller.memberId, {
      permission: 'mcp_connections.manage',
      refuse: refusedLikeAuthenticate,
    });
    if (!(await deps.store.holdConnection(tx, organizationId, id))) throw connectionNotFound();
    await upsertToolPolicy(
      tx,
      organizationId,
      id,
      { mode: input.mode, tools, destructiveNeedsApproval: input.destructiveNeedsApproval },
      caller.userId,
    );
    tx.audit({
      action: 'mcp_connection.tool_policy_changed',
      organizationId,
      target: { type: 'mcp_connection', id },
      changes: { mode: input.mode, tools, destructiveNeedsApproval: input.destructiveNeedsApproval },
    });
  });
  return presentAfterWrite(deps, caller, organizationId, id);
}
