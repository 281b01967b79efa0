// Spec operations 1 (edit a connection, with optimistic concurrency) and 2 (replace its access set).
import { invalidRequest } from '../../http/errors.ts';
import { redacted, type CallerContext } from '../../platform/write-context.ts';
import { checkAccess, connectionNotFound, requirePermission, writeWithAccess } from './access.ts';
import { connectionFields, oauthClientProblems, oauthColumns } from './connection-fields.ts';
import { recordCatalog } from './catalog-store.ts';
import { recordAuthRequirement } from './auth-requirement.ts';
import { connectionIdentity } from './connection-identity.ts';
import type { ServerCatalog } from './probe/index.ts';
import { apiKeyRequired, storeSuppliedApiKey } from './credentials.ts';
import type { ConnectionDeps } from './deps.ts';
import { allowProbe, validateByProbe } from './probing.ts';
import type { ConnectionInput, EditConnectionInput } from './schemas.ts';
import type { AccessSet } from './access-store.ts';
import { presentAfterWrite } from './view.ts';
import { mcpConnectionErrors } from './error-codes.ts';

const stale = () =>
  mcpConnectionErrors.connection_conflict(
    'The connection changed since you read it; reload it and apply your edit again',
  );

/** Spec operation 1. */
export async function editConnection(deps: ConnectionDeps, ctx: CallerContext, id: string, input: EditConnectionInput) {
  const { db, store } = deps;
  const { organizationId, memberId } = requirePermission(ctx.actor, 'mcp_connections.manage');
  const current = await store.findConnection(db, organizationId, id);
  if (!current) throw connectionNotFound();
  // Bad ids are refused before a probe is spent on them (and checked again when written).
  await checkAccess(deps, organizationId, input.access, ['access']);
  // Compared as instants at the precision the API returns (milliseconds): 10:00Z = 10:00:00.000Z.
  const expected = new Date(input.expectedUpdatedAt);
  if (current.updatedAt.getTime() !== expected.getTime()) throw stale();

  const identity = connectionIdentity(input.url, input.authType, input.credentialMode);
  const identityChanged = identity.identityFingerprint !== current.identityFingerprint;
  if (identityChanged) {
    const managers = (await store.pluginLinks(db, organizationId, [id])).filter(
      (link) => link.relation === 'manages_identity',
    );
    if (managers.length > 0) {
      throw mcpConnectionErrors.marketplace_managed(
        `url, authType and credentialMode of this connection are managed by the plugin ${managers.map((m) => m.name).join(', ')}`,
      );
    }
  }

  // Judged again on the locked row below; here so that a refused client spends no probe.
  const problems = oauthClientProblems(oauthColumns(deps.secrets, current, input, identityChanged), input);
  if (problems.length > 0) throw invalidRequest(problems);

  // Probe only what changes connectivity: a new identity or a new key. Name and access edits
  // leave the server, the auth type and the credential as they were validated.
  let probed = false;
  let catalog: ServerCatalog | null = null;
  if (input.authType !== 'oauth' && (identityChanged || input.apiKey !== undefined)) {
    if (input.authType === 'apikey' && input.credentialMode === 'shared' && input.apiKey === undefined)
      throw apiKeyRequired();
    await allowProbe(deps, organizationId, memberId);
    catalog = await validateByProbe(deps, input.url, input.authType, input.credentialMode, input.apiKey);
    probed = true;
  }

  const revokeOldTokens = await writeWithAccess(deps, ctx, organizationId, input.access, async (tx, access) => {
    // Re-read under a row lock: of concurrent edits with the same token exactly one gets here first.
    const locked = await store.findConnection(tx, organizationId, id, true);
    if (!locked) throw connectionNotFound();
    if (locked.updatedAt.getTime() !== expected.getTime()) throw stale();
    // Read before the row changes: the old identity's tokens and the client that holds them, to be
    // revoked at its authorization server once this commits (the new identity never uses them).
    const revocation =
      identityChanged && locked.authType === 'oauth' ? await deps.oauth.prepareRevocation(tx, locked) : null;
    const clientColumns = oauthColumns(deps.secrets, locked, input, identityChanged);
    const lockedProblems = oauthClientProblems(clientColumns, input);
    if (lockedProblems.length > 0) throw invalidRequest(lockedProblems);
    const fields = connectionFields(identity, {
      name: input.name,
      orgWide: access.orgWide,
      ...clientColumns,
      authorizationServerIssuer:
        input.authorizationServerIssuer === undefined
          ? locked.authorizationServerIssuer
          : input.authorizationServerIssuer,
      requestedScopes:
        input.requestedScopes === undefined ? locked.requestedScopes : [...new Set(input.requestedScopes)],
      health: identityChanged ? (probed && input.authType === 'none' ? 'ready' : 'unknown') : locked.health,
      healthReason: identityChanged ? null : locked.healthReason,
      healthCheckedAt: identityChanged
        ? probed && input.authType === 'none'
          ? new Date()
          : null
        : locked.healthCheckedAt,
    });
    const updated = await store.updateConnection(tx, organizationId, id, expected, fields, identityChanged);
    if (!updated) throw stale();
    if (identityChanged) {
      // The old identity's credentials die with it, in this transaction: shared, every member's, pending authorizations.
      await store.deleteAllCredentials(tx, organizationId, id);
      await deps.oauth.dropIdentityState(tx, organizationId, id);
    }
    await store.replaceAccess(tx, organizationId, id, access);
    await storeSuppliedApiKey(deps, tx, organizationId, id, memberId, identity.identityFingerprint, input);
    tx.audit({
      action: 'mcp_connection.updated',
      organizationId,
      target: { type: 'mcp_connection', id, name: input.name },
      changes: auditedConnectionFields(input, access),
    });
    return revocation;
  });
  await revokeOldTokens?.();
  if (catalog) await recordCatalog(db, organizationId, id, identity.identityFingerprint, catalog);
  // A no-auth probe that passed sent no credential: the server demands none.
  if (catalog && input.authType === 'none') await recordAuthRequirement(db, organizationId, id, input.url, 'none');

  const presented = await presentAfterWrite(deps, ctx.actor, organizationId, id);
  const credentialNeeded = input.authType === 'oauth' || input.authType === 'apikey';
  const reconnectionRequired =
    identityChanged &&
    credentialNeeded &&
    !(input.authType === 'apikey' && input.credentialMode === 'shared' && input.apiKey !== undefined);
  return { ...presented, identityChanged, reconnectionRequired };
}

/** Spec operation 2: the whole access set is replaced. */
export async function replaceConnectionAccess(deps: ConnectionDeps, ctx: CallerContext, id: string, input: AccessSet) {
  const { store } = deps;
  const { organizationId } = requirePermission(ctx.actor, 'mcp_connections.manage');
  await writeWithAccess(deps, ctx, organizationId, input, async (tx, access) => {
    const locked = await store.findConnection(tx, organizationId, id, true);
    if (!locked) throw connectionNotFound();
    await store.touchConnection(tx, organizationId, id, access.orgWide, locked.updatedAt);
    await store.replaceAccess(tx, organizationId, id, access);
    tx.audit({
      action: 'mcp_connection.access_replaced',
      organizationId,
      target: { type: 'mcp_connection', id, name: locked.name },
      changes: { access },
    });
  });
  return presentAfterWrite(deps, ctx.actor, organizationId, id);
}

/** What an audit event records of a connection's fields: secrets as "redacted", the URL without userinfo or query. */
export function auditedConnectionFields(input: ConnectionInput, access: AccessSet): Record<string, unknown> {
  const url = new URL(input.url);
  return {
    name: input.name,
    url: `${url.origin}${url.pathname}`,
    authType: input.authType,
    credentialMode: input.credentialMode,
    access,
    ...(input.apiKey !== undefined ? { apiKey: redacted } : {}),
    ...(input.oauthClient ? { oauthClient: auditedClient(input.oauthClient) } : {}),
    ...(input.authorizationServerIssuer !== undefined
      ? { authorizationServerIssuer: input.authorizationServerIssuer }
      : {}),
    ...(input.requestedScopes !== undefined ? { requestedScopes: input.requestedScopes } : {}),
  };
}

function auditedClient(client: NonNullable<ConnectionInput['oauthClient']>): Record<string, unknown> {
  return {
    clientId: client.clientId,
    ...(client.clientSecret !== undefined ? { clientSecret: redacted } : {}),
    ...(client.privateKey !== undefined ? { privateKey: redacted } : {}),
    ...(client.tokenEndpointAuthMethod !== undefined
      ? { tokenEndpointAuthMethod: client.tokenEndpointAuthMethod }
      : {}),
    ...(client.signingAlgorithm !== undefined ? { signingAlgorithm: client.signingAlgorithm } : {}),
    ...(client.grantType !== undefined ? { grantType: client.grantType } : {}),
  };
}
