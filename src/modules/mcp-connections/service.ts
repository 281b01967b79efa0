// Rules for external MCP connections, one file per role: who may do what (access.ts), the identity
// of a connection (connection-identity.ts, connection-fields.ts) and what happens to credentials when
// it changes (edit.ts, with optimistic concurrency), API keys (credentials.ts), validation by
// probing (probing.ts), plugins (plugins.ts), and the fields computed for the caller (view.ts).
// This file creates, lists and reads connections and assembles the service the routes call.
//
// ---------------------------------------------------------------------------------------------
// Credentials (for the OAuth flows in ./oauth/): table `mcp_connection_credentials`
//   one row per (connection, member): member_id NULL is the shared credential (credentialMode
//   'shared'); a member id is that member's own (credentialMode 'per_member'). Unique indexes keep
//   one shared row per connection and one row per member.
//   kind                 'apikey' | 'oauth'
//   identity_fingerprint identityFingerprint(connection) at the time the credential was obtained
//   secret_sealed        SecretBox over a JSON envelope that names the identity it was obtained
//                        for: API keys {v:1, kind:'apikey', identityFingerprint, apiKey}
//                        (api-key-envelope.ts), OAuth {v:1, kind:'oauth',
//                        identityFingerprint, oauth:{accessToken,...}} (oauth/credential-store.ts).
//                        An envelope opens only for its own identity.
//   expires_at, granted_scopes (jsonb array), external_account_id, tenant_id: OAuth details the
//                        connection response shows (grantedScopes, externalAccountId, tenantId).
//   health ('unknown'|'ready'|'reconnect_required'), health_reason (the spec's enum),
//   health_checked_at:   what credentialHealth* and needsReconnect report.
//   obtained_at:         what connectedAt reports.
// Write rows with store.upsertCredential(tx, ...) and store.setCredentialHealth(...). On the
// connection row the OAuth flows may set oauth_registration_source and oauth_client_required.
// When url, authType or credentialMode change, edit (edit.ts) deletes every credential row of the
// connection in its transaction and runs the OAuth hooks' dropIdentityState (deps.ts), also in that
// transaction, which deletes the pending authorizations.
// ---------------------------------------------------------------------------------------------

import type { FreshAuthenticationCheck } from '../../http/auth.ts';
import type { Caller } from '../../http/caller.ts';
import { invalidRequest } from '../../http/errors.ts';
import { pageOf } from '../../http/schemas.ts';
import { newId } from '../../platform/ids.ts';
import { createRateLimiter, type RateLimiter } from '../../platform/rate-limiter.ts';
import type { CallerContext } from '../../platform/write-context.ts';
import { checkAccess, loadVisible, organizationOf, requirePermission, writeWithAccess } from './access.ts';
import { connectionFields, oauthClientProblems, oauthColumns } from './connection-fields.ts';
import { connectionIdentity } from './connection-identity.ts';
import { apiKeyRequired, setApiKey, storeSuppliedApiKey } from './credentials.ts';
import type { ConnectionDeps } from './deps.ts';
import { auditedConnectionFields, editConnection, replaceConnectionAccess } from './edit.ts';
import { installPlugin, removeConnection, uninstallPlugin, type PluginManifest } from './plugins.ts';
import { allowProbe, testConnection, validateByProbe } from './probing.ts';
import type { ConnectionInput, EditConnectionInput } from './schemas.ts';
import type { AccessSet } from './access-store.ts';
import { createConnectionStore } from './store.ts';
import { recordCatalog } from './catalog-store.ts';
import { recordAuthRequirement } from './auth-requirement.ts';
import { listTools, setToolPolicy, type ToolPolicyInput } from './tools.ts';
import { presentAfterWrite, presentConnections } from './view.ts';

export interface McpConnectionServiceDeps extends Omit<ConnectionDeps, 'store' | 'limiter'> {
  rateLimiter?: RateLimiter;
}

export async function createConnection(deps: ConnectionDeps, ctx: CallerContext, input: ConnectionInput) {
  const caller = ctx.actor;
  const { organizationId, memberId } = requirePermission(caller, 'mcp_connections.manage');
  // Bad ids are refused before a probe is spent on them (and checked again when written).
  await checkAccess(deps, organizationId, input.access, ['access']);
  const identity = connectionIdentity(input.url, input.authType, input.credentialMode);
  if (input.authType === 'apikey' && input.credentialMode === 'shared' && input.apiKey === undefined)
    throw apiKeyRequired();
  const clientColumns = oauthColumns(deps.secrets, undefined, input, false);
  const problems = oauthClientProblems(clientColumns, input);
  if (problems.length > 0) throw invalidRequest(problems);
  const probed = input.authType !== 'oauth';
  if (probed) await allowProbe(deps, organizationId, memberId);
  const catalog = await validateByProbe(deps, input.url, input.authType, input.credentialMode, input.apiKey);
  const id = newId('emc');
  await writeWithAccess(deps, ctx, organizationId, input.access, async (tx, access) => {
    const fields = connectionFields(identity, {
      name: input.name,
      orgWide: access.orgWide,
      ...clientColumns,
      authorizationServerIssuer: input.authorizationServerIssuer ?? null,
      requestedScopes: [...new Set(input.requestedScopes ?? [])],
      health: input.authType === 'none' && probed ? 'ready' : 'unknown',
      healthCheckedAt: input.authType === 'none' ? new Date() : null,
    });
    await deps.store.insertConnection(tx, { id, organizationId, createdBy: caller.userId, ...fields });
    await deps.store.replaceAccess(tx, organizationId, id, access);
    await storeSuppliedApiKey(deps, tx, organizationId, id, memberId, identity.identityFingerprint, input);
    tx.audit({
      action: 'mcp_connection.created',
      organizationId,
      target: { type: 'mcp_connection', id, name: input.name },
      changes: auditedConnectionFields(input, access),
    });
  });
  if (catalog) await recordCatalog(deps.db, organizationId, id, identity.identityFingerprint, catalog);
  // A no-auth probe that passed sent no credential: the server demands none.
  if (catalog && input.authType === 'none') await recordAuthRequirement(deps.db, organizationId, id, input.url, 'none');
  return presentAfterWrite(deps, caller, organizationId, id);
}

export async function listConnections(
  deps: Pick<ConnectionDeps, 'db' | 'store' | 'publicUrl'>,
  caller: Caller,
  page: { limit: number; after?: string | undefined },
) {
  const { organizationId, memberId, seesEvery } = organizationOf(caller);
  if (!seesEvery && !memberId) return { items: [], nextCursor: null };
  const rows = await deps.store.listConnections(
    deps.db,
    organizationId,
    page,
    seesEvery ? undefined : { memberId: memberId! },
  );
  const { items, nextCursor } = pageOf(rows, page.limit);
  return { items: await presentConnections(deps, caller, items), nextCursor };
}

export async function getConnection(
  deps: Pick<ConnectionDeps, 'db' | 'store' | 'publicUrl'>,
  caller: Caller,
  id: string,
) {
  const row = await loadVisible(deps, caller, id);
  return (await presentConnections(deps, caller, [row]))[0]!;
}

/** The service the routes call: each method is one of this module's functions with the service's dependencies. */
export function createMcpConnectionService(input: McpConnectionServiceDeps) {
  const { rateLimiter, ...rest } = input;
  if (
    typeof input.oauth?.dropIdentityState !== 'function' ||
    typeof input.oauth.testConnection !== 'function' ||
    typeof input.oauth.prepareRevocation !== 'function'
  ) {
    throw new Error(
      'mcp-connections: the OAuth hooks (dropIdentityState, testConnection, prepareRevocation) are needed to build the service',
    );
  }
  const deps: ConnectionDeps = {
    ...rest,
    store: createConnectionStore(),
    limiter: rateLimiter ?? createRateLimiter(input.db),
  };
  return {
    create: (ctx: CallerContext, connection: ConnectionInput) => createConnection(deps, ctx, connection),
    list: (caller: Caller, page: { limit: number; after?: string | undefined }) => listConnections(deps, caller, page),
    get: (caller: Caller, id: string) => getConnection(deps, caller, id),
    remove: (ctx: CallerContext, id: string) => removeConnection(deps, ctx, id),
    edit: (ctx: CallerContext, id: string, edit: EditConnectionInput) => editConnection(deps, ctx, id, edit),
    replaceAccess: (ctx: CallerContext, id: string, access: AccessSet) =>
      replaceConnectionAccess(deps, ctx, id, access),
    test: (ctx: CallerContext, id: string) => testConnection(deps, ctx, id),
    setApiKey: (ctx: CallerContext, id: string, apiKey: string, requireFresh: FreshAuthenticationCheck) =>
      setApiKey(deps, ctx, id, apiKey, requireFresh),
    installPlugin: (ctx: CallerContext, manifest: PluginManifest) => installPlugin(deps, ctx, manifest),
    uninstallPlugin: (ctx: CallerContext, pluginId: string) => uninstallPlugin(deps, ctx, pluginId),
    listTools: (caller: Caller, id: string) => listTools(deps, caller, id),
    setToolPolicy: (ctx: CallerContext, id: string, policy: ToolPolicyInput) => setToolPolicy(deps, ctx, id, policy),
  };
}

export type McpConnectionService = ReturnType<typeof createMcpConnectionService>;
