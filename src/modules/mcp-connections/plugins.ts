// Marketplace plugins: a plugin requires connections (reusing the organization's connection to the
// same identity, or bringing one) and may manage their identity, which edits then may not change.
import { isoTimestamp } from '../../http/schemas.ts';
import { newId } from '../../platform/ids.ts';
import { writeTransaction, type CallerContext } from '../../platform/write-context.ts';
import { connectionNotFound, requirePermission } from './access.ts';
import { connectionFields } from './connection-fields.ts';
import { connectionIdentity } from './connection-identity.ts';
import type { ConnectionDeps } from './deps.ts';
import type { AuthType, CredentialMode } from './contracts.ts';
import { mcpConnectionErrors } from './error-codes.ts';

export interface PluginManifest {
  name: string;
  version?: string | undefined;
  mcpConnections: Array<{
    name: string;
    url: string;
    authType: AuthType;
    credentialMode: CredentialMode;
    manageIdentity: boolean;
  }>;
}

export async function installPlugin(
  deps: Pick<ConnectionDeps, 'db' | 'store'>,
  ctx: CallerContext,
  manifest: PluginManifest,
) {
  const { store } = deps;
  const caller = ctx.actor;
  const { organizationId } = requirePermission(caller, 'mcp_connections.manage');
  const pluginId = newId('plg');
  const requires: string[] = [];
  const managed: string[] = [];
  const installed = await writeTransaction(deps.db, ctx, async (tx) => {
    const created = await store.insertPlugin(tx, {
      id: pluginId,
      organizationId,
      name: manifest.name,
      version: manifest.version ?? null,
      manifest,
      installedBy: caller.userId,
    });
    for (const declared of manifest.mcpConnections) {
      const identity = connectionIdentity(declared.url, declared.authType, declared.credentialMode);
      // The organization's connection to that server is reused; otherwise the plugin brings one, usable by nobody until granted.
      let connectionId = (await store.findConnectionByIdentity(tx, organizationId, identity.identityFingerprint))?.id;
      if (!connectionId) {
        connectionId = newId('emc');
        await store.insertConnection(tx, {
          id: connectionId,
          organizationId,
          createdBy: caller.userId,
          ...connectionFields(identity, { name: declared.name, orgWide: false }),
        });
      }
      await store.insertPluginLink(tx, organizationId, pluginId, connectionId, 'requires');
      if (!requires.includes(connectionId)) requires.push(connectionId);
      if (declared.manageIdentity) {
        await store.insertPluginLink(tx, organizationId, pluginId, connectionId, 'manages_identity');
        if (!managed.includes(connectionId)) managed.push(connectionId);
      }
    }
    tx.audit({
      action: 'plugin.installed',
      organizationId,
      target: { type: 'plugin', id: pluginId, name: manifest.name },
      changes: { version: manifest.version ?? null, requires, managesIdentityOf: managed },
    });
    return created;
  });
  return {
    id: pluginId,
    name: manifest.name,
    version: manifest.version ?? null,
    requires,
    managesIdentityOf: managed,
    createdAt: isoTimestamp(installed.createdAt),
  };
}

export async function uninstallPlugin(
  deps: Pick<ConnectionDeps, 'db' | 'store'>,
  ctx: CallerContext,
  pluginId: string,
): Promise<void> {
  const { organizationId } = requirePermission(ctx.actor, 'mcp_connections.manage');
  const deleted = await writeTransaction(deps.db, ctx, async (tx) => {
    const name = await deps.store.deletePlugin(tx, organizationId, pluginId);
    if (name !== undefined)
      tx.audit({ action: 'plugin.uninstalled', organizationId, target: { type: 'plugin', id: pluginId, name } });
    return name !== undefined;
  });
  if (!deleted) throw mcpConnectionErrors.plugin_not_found('No such plugin in this organization');
}

/**
 * Deletes a connection (its credentials and access go with it), unless a plugin requires it; its
 * OAuth tokens are then revoked at the authorization server, best effort.
 */
export async function removeConnection(
  deps: Pick<ConnectionDeps, 'db' | 'store' | 'oauth'>,
  ctx: CallerContext,
  id: string,
): Promise<void> {
  const { store } = deps;
  const { organizationId } = requirePermission(ctx.actor, 'mcp_connections.manage');
  const revoke = await writeTransaction(deps.db, ctx, async (tx) => {
    // Locked: a plugin being installed meanwhile links it only before or after this decision.
    const row = await store.findConnection(tx, organizationId, id, true);
    if (!row) throw connectionNotFound();
    // A plugin that needs it would be left pointing at nothing: the plugin goes first.
    const plugins = await store.pluginLinks(tx, organizationId, [id]);
    if (plugins.length > 0) {
      const names = [...new Set(plugins.map((link) => link.name))].join(', ');
      throw mcpConnectionErrors.connection_required(
        `The plugin ${names} requires this connection: uninstall the plugin first (DELETE /v1/plugins/{pluginId}), then delete it`,
      );
    }
    const revocation = row.authType === 'oauth' ? await deps.oauth.prepareRevocation(tx, row) : null;
    await store.deleteConnection(tx, organizationId, id);
    tx.audit({
      action: 'mcp_connection.deleted',
      organizationId,
      target: { type: 'mcp_connection', id, name: row.name },
    });
    return revocation;
  });
  await revoke?.();
}
