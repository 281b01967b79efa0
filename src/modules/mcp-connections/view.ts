// The connection as a caller sees it: the one place the response shape is built (create, list, get,
// edit, access and API-key writes all answer with it), with the fields computed for that caller.
import type { Queryable } from '../../db/database.ts';
import type { Caller } from '../../http/caller.ts';
import { isoTimestamp, isoTimestampOrNull } from '../../http/schemas.ts';
import { connectionNotFound, organizationOf } from './access.ts';
import type { ConnectionDeps } from './deps.ts';
import { capabilitiesOf, toolPoliciesOf } from './catalog-store.ts';
import { authPolicyFields, authRequirementsOf, missingFeatures } from './auth-requirement.ts';
import { toolPolicyView } from './tool-policy-view.ts';
import {
  callbackModeFor,
  callbackUrl,
  clientMetadataUrl,
  discoveryPaths,
  issuerReviewFlags,
  sharedCallbackUrl,
  type DiscoveryPath,
} from './oauth/index.ts';
import type { ConnectionRow } from './contracts.ts';
import type { CredentialRow } from './credential-store.ts';
import type { PluginLink } from './plugin-store.ts';
import type { ConnectionStore } from './store.ts';

type ViewDeps = Pick<ConnectionDeps, 'db' | 'store' | 'publicUrl'>;

/** The API view of connections, computed for this caller. */
export async function presentConnections(
  deps: ViewDeps,
  caller: Caller,
  rows: ConnectionRow[],
  q: Queryable = deps.db,
) {
  const { store } = deps;
  const { organizationId, memberId, seesEvery } = organizationOf(caller);
  const ids = rows.map((row) => row.id);
  const [access, credentials, links, issuerReview, toolPolicies, paths, requirements, capabilities] = await Promise.all(
    [
      seesEvery ? store.accessOf(q, organizationId, ids) : Promise.resolve(undefined),
      store.credentialsFor(q, organizationId, ids, memberId),
      store.pluginLinks(q, organizationId, ids),
      issuerReviewFlags(q, organizationId, ids),
      toolPoliciesOf(q, organizationId, ids),
      discoveryPaths(q, organizationId, ids),
      authRequirementsOf(q, organizationId, ids),
      capabilitiesOf(q, organizationId, ids),
    ],
  );
  return rows.map((row) => ({
    ...connectionView(deps.publicUrl, row, access?.get(row.id), credentials, links, issuerReview.has(row.id)),
    ...authPolicyFields(row.authType, row.url, requirements.get(row.id)),
    ...missingFeaturesField(row, capabilities.get(row.id)),
    toolPolicy: toolPolicyView(toolPolicies.get(row.id)),
    ...(row.authType === 'oauth' ? { oauthDiscoveryPath: (paths.get(row.id) ?? null) as DiscoveryPath | null } : {}),
  }));
}

/** The connection as the caller sees it after a write; deleted meanwhile (a concurrent DELETE), it is not found. */
export async function presentAfterWrite(deps: ViewDeps, caller: Caller, organizationId: string, id: string) {
  const row = await deps.store.findConnection(deps.db, organizationId, id);
  if (!row) throw connectionNotFound();
  return (await presentConnections(deps, caller, [row]))[0]!;
}

/** Present once a probe of the connection's current identity has seen the server's capabilities. */
function missingFeaturesField(
  row: ConnectionRow,
  catalog: { identityFingerprint: string; capabilities: Record<string, unknown> } | undefined,
) {
  const missing = missingFeatures(
    catalog && catalog.identityFingerprint === row.identityFingerprint ? catalog.capabilities : undefined,
  );
  return missing ? { missingFeatures: missing } : {};
}

function connectionView(
  publicUrl: string,
  row: ConnectionRow,
  access: { memberIds: string[]; teamIds: string[] } | undefined,
  credentials: Awaited<ReturnType<ConnectionStore['credentialsFor']>>,
  links: PluginLink[],
  issuerReviewRequired = false,
) {
  // A credential counts only for the identity it was obtained for.
  const current = (credential: CredentialRow | undefined) =>
    credential && credential.identityFingerprint === row.identityFingerprint ? credential : undefined;
  const shared = current(credentials.shared.get(row.id));
  const mine = current(credentials.mine.get(row.id));
  const members = credentials.memberCounts.get(row.id);
  const perMember = row.credentialMode === 'per_member';

  let connected: boolean;
  let connectedAt: Date | null;
  let connectedForMe: boolean;
  let health: ConnectionRow['health'];
  let healthReason: ConnectionRow['healthReason'];
  let healthCheckedAt: Date | null;
  let needsReconnect: boolean;
  let credential: CredentialRow | undefined;
  if (row.authType === 'none') {
    connected = true;
    connectedAt = row.identityUpdatedAt;
    connectedForMe = true;
    ({ health, healthReason, healthCheckedAt } = row);
    needsReconnect = false;
  } else {
    credential = perMember ? mine : shared;
    connected = perMember ? (members?.count ?? 0) > 0 : shared !== undefined;
    connectedAt = perMember ? (members?.firstObtainedAt ?? null) : (shared?.obtainedAt ?? null);
    connectedForMe = credential !== undefined;
    health = credential?.health ?? 'unknown';
    healthReason = credential?.healthReason ?? null;
    healthCheckedAt = credential?.healthCheckedAt ?? null;
    needsReconnect = credential === undefined || credential.health === 'reconnect_required';
  }

  const byRelation = (relation: PluginLink['relation']) =>
    links
      .filter((link) => link.connectionId === row.id && link.relation === relation)
      .map((link) => ({ pluginId: link.pluginId, name: link.name }));

  const base = {
    id: row.id,
    name: row.name,
    url: row.url,
    authType: row.authType,
    credentialMode: row.credentialMode,
    connected,
    connectedAt: isoTimestampOrNull(connectedAt),
    updatedAt: isoTimestamp(row.updatedAt),
    connectedForMe,
    requiredBy: byRelation('requires'),
    identityManagedBy: byRelation('manages_identity'),
    access: access ? { orgWide: row.orgWide, memberIds: access.memberIds, teamIds: access.teamIds } : null,
    createdByName: row.createdByName,
    needsReconnect,
    credentialHealth: health,
    credentialHealthReason: health === 'reconnect_required' ? healthReason : null,
    credentialHealthCheckedAt: isoTimestampOrNull(healthCheckedAt),
    reconnectActionOwner: needsReconnect ? (perMember ? ('member' as const) : ('organization_admin' as const)) : null,
    externalAccountId: credential?.externalAccountId ?? null,
    grantedScopes: credential?.grantedScopes ?? [],
    tenantId: credential?.tenantId ?? null,
    authorizationServerIssuer: row.authorizationServerIssuer,
    requestedScopes: row.requestedScopes,
  };
  if (row.authType !== 'oauth') return base;
  const source = row.oauthRegistrationSource ?? (row.oauthClientId ? 'pre-registered' : null);
  const configured = row.oauthClientId !== null || source === 'client-metadata' || source === 'dynamic';
  const mode = callbackModeFor(source);
  return {
    ...base,
    oauthClientConfigured: configured,
    oauthClientRequired: row.oauthClientRequired,
    setupRequired: row.oauthClientRequired && !configured,
    oauthClientId: row.oauthClientId,
    oauthGrantType: row.oauthGrantType,
    oauthTokenEndpointAuthMethod: row.oauthTokenEndpointAuthMethod,
    oauthClientSecretConfigured: row.oauthClientSecretSealed !== null,
    oauthClientPrivateKeyConfigured: row.oauthClientPrivateKeySealed !== null,
    oauthClientSigningAlgorithm: row.oauthClientSigningAlgorithm,
    oauthCallbackMode: mode,
    oauthCallbackUrl: callbackUrl(publicUrl, row.id, mode),
    oauthSharedCallbackUrl: sharedCallbackUrl(publicUrl),
    oauthClientMetadataUrl: clientMetadataUrl(publicUrl),
    oauthRegistrationSource: source,
    issuerReviewRequired,
  };
}
