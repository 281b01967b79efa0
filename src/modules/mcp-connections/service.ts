// Rules for external MCP connections: who may do what, the identity of a connection and what
// happens to credentials when it changes, optimistic concurrency, validation by probing, and the
// fields computed for the caller.
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
//                        (sealApiKey/openApiKey here), OAuth {v:1, kind:'oauth',
//                        identityFingerprint, oauth:{accessToken,...}} (oauth/credential-store.ts).
//                        An envelope opens only for its own identity.
//   expires_at, granted_scopes (jsonb array), external_account_id, tenant_id: OAuth details the
//                        connection response shows (grantedScopes, externalAccountId, tenantId).
//   health ('unknown'|'ready'|'reconnect_required'), health_reason (the spec's enum),
//   health_checked_at:   what credentialHealth* and needsReconnect report.
//   obtained_at:         what connectedAt reports.
// Write rows with store.upsertCredential(tx, ...) and store.setCredentialHealth(...). On the
// connection row the OAuth flows may set oauth_registration_source and oauth_client_required.
// When url, authType or credentialMode change, edit() deletes every credential row of the
// connection in its transaction and runs the hooks registered with onIdentityInvalidated(), also
// in that transaction: register one that deletes your pending authorizations.
// ---------------------------------------------------------------------------------------------

import { createHash } from 'node:crypto';
import type { Database, Queryable } from '../../db/database.ts';
import { isForeignKeyViolation } from '../../db/errors.ts';
import { ApiError, conflict, forbidden, invalidRequest, lacksRole, notAnActiveMember, notFound, rateLimited, type ValidationDetail } from '../../http/errors.ts';
import { isoTimestamp, isoTimestampOrNull, pageOf } from '../../http/schemas.ts';
import { newId } from '../../platform/ids.ts';
import type { OutboundClient } from '../../platform/outbound.ts';
import { createRateLimiter, type RateLimiter } from '../../platform/rate-limiter.ts';
import type { SecretBox } from '../../platform/secrets.ts';
import type { Caller, IdentityService } from '../identity/service.ts';
import { callbackModeFor, callbackUrl, clientMetadataUrl, sharedCallbackUrl } from './oauth/urls.ts';
import { issuerReviewFlags } from './oauth/store.ts';
import { probeConnection, type Diagnostic, type HighestPassed, type ProbeResult } from './probe/index.ts';
import type { ConnectionInput, EditConnectionInput } from './schemas.ts';
import {
  createConnectionStore,
  type AccessSet,
  type AuthType,
  type ConnectionFields,
  type ConnectionRow,
  type CredentialMode,
  type CredentialRow,
  type PluginLink,
} from './store.ts';

export interface McpConnectionServiceDeps {
  db: Database;
  secrets: SecretBox;
  outbound: OutboundClient;
  identity: IdentityService;
  publicUrl: string;
  /** Receives probe failures with their full detail, under the diagnostic's referenceId. */
  logger?: { warn(details: Record<string, unknown>, message: string): void };
  probeTimeoutMs?: number;
  rateLimiter?: RateLimiter;
}

// A probe dials a tenant-chosen server for up to 15 s; these bound how many a tenant (and one
// member, who can trigger probes by storing their own key) can start, across all processes.
export const probeLimits = { perOrganization: 300, perMember: 60, windowSeconds: 60 };

export type IdentityInvalidationHook = (tx: Queryable, organizationId: string, connectionId: string) => Promise<void>;

/** The spec's identity of a connection: the server (normalized URL), how it authenticates, and whose credential it uses. */
export function normalizeUrl(url: string): string {
  const parsed = new URL(url);
  parsed.hash = '';
  return parsed.href;
}

export function identityFingerprint(normalizedUrl: string, authType: AuthType, credentialMode: CredentialMode): string {
  return createHash('sha256').update(JSON.stringify([normalizedUrl, authType, credentialMode])).digest('hex');
}

export function sealApiKey(secrets: SecretBox, identityFingerprint: string, apiKey: string): string {
  return secrets.seal(JSON.stringify({ v: 1, kind: 'apikey', identityFingerprint, apiKey }));
}

/** The API key, or null when the credential was obtained for another identity (or is not an API key). */
export function openApiKey(secrets: SecretBox, identityFingerprint: string, sealed: string): string | null {
  try {
    const envelope = JSON.parse(secrets.open(sealed)) as { kind?: unknown; identityFingerprint?: unknown; apiKey?: unknown };
    return envelope.kind === 'apikey' && envelope.identityFingerprint === identityFingerprint && typeof envelope.apiKey === 'string' ? envelope.apiKey : null;
  } catch {
    return null;
  }
}

const connectionNotFound = () => notFound('connection_not_found', 'No such MCP connection in this organization');

export function createMcpConnectionService(deps: McpConnectionServiceDeps) {
  const { db, secrets } = deps;
  const store = createConnectionStore();

  /** An apiKey sent with a create or an edit becomes the credential of that identity: shared, or the caller's own. */
  async function storeSuppliedApiKey(
    tx: Queryable,
    organizationId: string,
    connectionId: string,
    memberId: string | null,
    fingerprint: string,
    input: { authType: string; credentialMode: string; apiKey?: string | undefined },
  ): Promise<void> {
    if (input.authType !== 'apikey' || input.apiKey === undefined) return;
    await store.upsertCredential(tx, {
      id: newId('emcc'),
      organizationId,
      connectionId,
      memberId: input.credentialMode === 'shared' ? null : memberId,
      kind: 'apikey',
      identityFingerprint: fingerprint,
      secretSealed: sealApiKey(secrets, fingerprint, input.apiKey),
      health: 'ready',
    });
  }
  const invalidationHooks: IdentityInvalidationHook[] = [];
  // OAuth connections are tested by the OAuth flows (./oauth/): refresh first, why a token was refused, one scope step-up.
  let oauthTester: ((row: ConnectionRow, memberId: string | null) => Promise<{ ok: boolean; highestPassed: HighestPassed; tools: string[]; diagnostic: Diagnostic | null }>) | undefined;
  const limiter = deps.rateLimiter ?? createRateLimiter(db);

  async function allowProbe(organizationId: string, memberId: string | null): Promise<void> {
    const organization = await limiter.hit(`mcp-probe:org:${organizationId}`, probeLimits.perOrganization, probeLimits.windowSeconds);
    if (!organization.allowed) throw rateLimited(organization, 'Too many MCP server checks for this organization; retry later');
    if (!memberId) return;
    const member = await limiter.hit(`mcp-probe:member:${memberId}`, probeLimits.perMember, probeLimits.windowSeconds);
    if (!member.allowed) throw rateLimited(member, 'Too many MCP server checks; retry later');
  }

  const notAnAdmin = () => lacksRole(['owner', 'admin']);

  function organizationOf(caller: Caller): { organizationId: string; memberId: string | null; isAdmin: boolean } {
    if (!caller.organizationId || !caller.role) throw notAnActiveMember();
    return { organizationId: caller.organizationId, memberId: caller.memberId, isAdmin: caller.role === 'owner' || caller.role === 'admin' };
  }

  function requireAdmin(caller: Caller) {
    const org = organizationOf(caller);
    if (!org.isAdmin) throw notAnAdmin();
    return org;
  }

  /**
   * The calling admin again, inside the write's transaction and share-locked until it ends: removed,
   * suspended or demoted since the request was authenticated (or one of those in progress), they get
   * what the route answers them now, and no row written for them can outlive their membership.
   */
  async function lockAdmin(tx: Queryable, organizationId: string, memberId: string | null): Promise<void> {
    if (!memberId) return;
    const member = await deps.identity.lockMember(tx, organizationId, memberId);
    if (member?.status !== 'active') throw notAnActiveMember();
    if (member.role !== 'owner' && member.role !== 'admin') throw notAnAdmin();
  }

  /**
   * Dedupes the sets and refuses ids that are not members/teams of this organization, pointing at the
   * item. With `tx`, the members found stay share-locked until it ends.
   */
  async function checkAccess(organizationId: string, access: AccessSet, path: string[], tx?: Queryable): Promise<AccessSet> {
    const memberIds = [...new Set(access.memberIds)];
    const teamIds = [...new Set(access.teamIds)];
    // One after the other: `tx` is a transaction's single client. Locked before any access row is
    // touched: a removal in progress is waited for (then the id is unknown), rather than it and this
    // write each waiting for the other's rows (a deadlock).
    const members =
      memberIds.length === 0 ? [] : tx ? await deps.identity.lockMemberIds(tx, organizationId, memberIds) : await deps.identity.listMemberIds(organizationId, memberIds);
    const teams = teamIds.length ? await deps.identity.listTeamIds(organizationId, teamIds, tx ?? db) : [];
    const knownMembers = new Set(members);
    const knownTeams = new Set(teams);
    const details: ValidationDetail[] = [];
    access.memberIds.forEach((id, index) => {
      if (!knownMembers.has(id)) details.push({ message: 'Not a member of this organization', path: [...path, 'memberIds', index], in: 'body' });
    });
    access.teamIds.forEach((id, index) => {
      if (!knownTeams.has(id)) details.push({ message: 'Not a team of this organization', path: [...path, 'teamIds', index], in: 'body' });
    });
    if (details.length > 0) throw invalidRequest(details);
    return { orgWide: access.orgWide, memberIds, teamIds };
  }

  /**
   * A transaction of an admin (`memberId`, checked again first) that writes an access set, checked
   * again inside it: a member or team removed since an earlier check (while the server was probed,
   * say) is the same 400 as an unknown id. Members are locked; a team deleted by a concurrent
   * transaction between this check and the insert makes the foreign key refuse the insert; checked
   * once more after the rollback, that is the 400 too.
   */
  async function transactionWithAccess<T>(
    organizationId: string,
    memberId: string | null,
    requested: AccessSet,
    work: (tx: Queryable, access: AccessSet) => Promise<T>,
  ): Promise<T> {
    try {
      return await db.transaction(async (tx) => {
        await lockAdmin(tx, organizationId, memberId);
        return work(tx, await checkAccess(organizationId, requested, ['access'], tx));
      });
    } catch (error) {
      if (isForeignKeyViolation(error)) await checkAccess(organizationId, requested, ['access']);
      throw error;
    }
  }

  /** The connection as the caller sees it after a write; deleted meanwhile (a concurrent DELETE), it is not found. */
  async function presentAfterWrite(caller: Caller, organizationId: string, id: string) {
    const row = await store.findConnection(db, organizationId, id);
    if (!row) throw connectionNotFound();
    return (await present(caller, [row]))[0]!;
  }

  /** Probes before anything is written; a failure is 502 with the diagnostic. */
  async function validateByProbe(url: string, authType: AuthType, credentialMode: CredentialMode, apiKey: string | undefined): Promise<void> {
    if (authType === 'oauth') return;
    const withKey = authType === 'apikey' && apiKey !== undefined;
    const result = await probe(url, withKey ? 'apikey' : 'none', withKey ? apiKey : undefined);
    if (result.ok) return;
    // A per-member API-key server is checked before any member has a key: a server that answers
    // "credentials required" has shown it is there; each member's key is checked when they add it.
    const awaitingMemberKeys = authType === 'apikey' && credentialMode === 'per_member' && !withKey;
    if (awaitingMemberKeys && result.diagnostic.phase === 'AUTH_RESOURCE_DISCOVERY') return;
    throw validationFailed(result.diagnostic);
  }

  function probe(url: string, authType: 'apikey' | 'none', apiKey?: string, bearerToken?: string): Promise<ProbeResult> {
    return probeConnection({
      url,
      authType,
      ...(apiKey !== undefined ? { apiKey } : {}),
      ...(bearerToken !== undefined ? { bearerToken } : {}),
      outbound: deps.outbound,
      ...(deps.probeTimeoutMs ? { timeoutMs: deps.probeTimeoutMs } : {}),
      ...(deps.logger ? { logger: deps.logger } : {}),
    });
  }

  function validationFailed(diagnostic: Diagnostic): ApiError {
    return new ApiError(502, 'connection_validation_failed', `The MCP server could not be validated: ${diagnostic.message}`, { diagnostic });
  }

  function apiKeyRequired(): ApiError {
    return invalidRequest([{ message: 'Required: a shared API-key connection needs its API key (stored keys are dropped when url, authType or credentialMode change)', path: ['apiKey'], in: 'body' }]);
  }

  async function runInvalidationHooks(tx: Queryable, organizationId: string, connectionId: string) {
    for (const hook of invalidationHooks) await hook(tx, organizationId, connectionId);
  }

  /** The API view of connections, computed for this caller. */
  async function present(caller: Caller, rows: ConnectionRow[], q: Queryable = db) {
    const { organizationId, memberId, isAdmin } = organizationOf(caller);
    const ids = rows.map((row) => row.id);
    const [access, credentials, links, issuerReview] = await Promise.all([
      isAdmin ? store.accessOf(q, organizationId, ids) : Promise.resolve(undefined),
      store.credentialsFor(q, organizationId, ids, memberId),
      store.pluginLinks(q, organizationId, ids),
      issuerReviewFlags(q, organizationId, ids),
    ]);
    return rows.map((row) => view(row, access?.get(row.id), credentials, links, issuerReview.has(row.id)));
  }

  function view(
    row: ConnectionRow,
    access: { memberIds: string[]; teamIds: string[] } | undefined,
    credentials: Awaited<ReturnType<typeof store.credentialsFor>>,
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
      links.filter((link) => link.connectionId === row.id && link.relation === relation).map((link) => ({ pluginId: link.pluginId, name: link.name }));

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
      oauthCallbackMode: mode,
      oauthCallbackUrl: callbackUrl(deps.publicUrl, row.id, mode),
      oauthSharedCallbackUrl: sharedCallbackUrl(deps.publicUrl),
      oauthClientMetadataUrl: clientMetadataUrl(deps.publicUrl),
      oauthRegistrationSource: source,
      issuerReviewRequired,
    };
  }

  async function loadVisible(caller: Caller, id: string) {
    const { organizationId, memberId, isAdmin } = organizationOf(caller);
    const row = await store.findConnection(db, organizationId, id);
    if (!row) throw connectionNotFound();
    // Members see only connections they may use; others do not exist for them.
    if (!isAdmin && !(memberId && (await store.memberMayUse(db, organizationId, id, memberId)))) throw connectionNotFound();
    return row;
  }

  /** The OAuth client columns after an edit: a new client id drops the old secret unless a new one comes with it. */
  function oauthColumns(current: ConnectionRow | undefined, input: ConnectionInput, identityChanged: boolean) {
    const client = input.oauthClient;
    // Clients obtained automatically (dynamic registration, metadata document) belong to the old server.
    const keptSource = current && !identityChanged ? current.oauthRegistrationSource : current?.oauthRegistrationSource === 'pre-registered' ? 'pre-registered' : null;
    if (!client) {
      return {
        oauthClientId: current?.oauthClientId ?? null,
        oauthClientSecretSealed: current?.oauthClientSecretSealed ?? null,
        oauthTokenEndpointAuthMethod: current?.oauthTokenEndpointAuthMethod ?? null,
        oauthRegistrationSource: keptSource,
      };
    }
    const sameClient = current?.oauthClientId === client.clientId;
    return {
      oauthClientId: client.clientId,
      oauthClientSecretSealed: client.clientSecret !== undefined ? secrets.seal(client.clientSecret) : sameClient ? (current?.oauthClientSecretSealed ?? null) : null,
      oauthTokenEndpointAuthMethod: client.tokenEndpointAuthMethod ?? (sameClient ? (current?.oauthTokenEndpointAuthMethod ?? null) : null),
      oauthRegistrationSource: 'pre-registered' as const,
    };
  }

  return {
    /** Runs inside every identity-changing edit's transaction (the OAuth flows drop pending authorizations here). */
    onIdentityInvalidated(hook: IdentityInvalidationHook) {
      invalidationHooks.push(hook);
    },

    useOAuthTester(tester: NonNullable<typeof oauthTester>) {
      oauthTester = tester;
    },

    /** Identity's lockMember, for the OAuth flows (./oauth/), which write rows naming a member. */
    lockMember: (tx: Queryable, organizationId: string, memberId: string) => deps.identity.lockMember(tx, organizationId, memberId),

    async create(caller: Caller, input: ConnectionInput) {
      const { organizationId, memberId } = requireAdmin(caller);
      // Bad ids are refused before a probe is spent on them (and checked again when written).
      await checkAccess(organizationId, input.access, ['access']);
      const normalizedUrl = normalizeUrl(input.url);
      const fingerprint = identityFingerprint(normalizedUrl, input.authType, input.credentialMode);
      if (input.authType === 'apikey' && input.credentialMode === 'shared' && input.apiKey === undefined) throw apiKeyRequired();
      const probed = input.authType !== 'oauth';
      if (probed) await allowProbe(organizationId, memberId);
      await validateByProbe(input.url, input.authType, input.credentialMode, input.apiKey);
      const id = newId('emc');
      await transactionWithAccess(organizationId, memberId, input.access, async (tx, access) => {
        await store.insertConnection(tx, {
          id,
          organizationId,
          createdBy: caller.userId,
          name: input.name,
          url: input.url,
          normalizedUrl,
          authType: input.authType,
          credentialMode: input.credentialMode,
          identityFingerprint: fingerprint,
          orgWide: access.orgWide,
          ...oauthColumns(undefined, input, false),
          authorizationServerIssuer: input.authorizationServerIssuer ?? null,
          requestedScopes: [...new Set(input.requestedScopes ?? [])],
          health: input.authType === 'none' && probed ? 'ready' : 'unknown',
          healthReason: null,
          healthCheckedAt: input.authType === 'none' ? new Date() : null,
        });
        await store.replaceAccess(tx, organizationId, id, access);
        await storeSuppliedApiKey(tx, organizationId, id, memberId, fingerprint, input);
      });
      return presentAfterWrite(caller, organizationId, id);
    },

    async list(caller: Caller, page: { limit: number; after?: string | undefined }) {
      const { organizationId, memberId, isAdmin } = organizationOf(caller);
      if (!isAdmin && !memberId) return { items: [], nextCursor: null };
      const rows = await store.listConnections(db, organizationId, page, isAdmin ? undefined : { memberId: memberId! });
      const { items, nextCursor } = pageOf(rows, page.limit);
      return { items: await present(caller, items), nextCursor };
    },

    async get(caller: Caller, id: string) {
      const row = await loadVisible(caller, id);
      return (await present(caller, [row]))[0]!;
    },

    async remove(caller: Caller, id: string): Promise<void> {
      const { organizationId } = requireAdmin(caller);
      await db.transaction(async (tx) => {
        // Locked: a plugin being installed meanwhile links it only before or after this decision.
        if (!(await store.findConnection(tx, organizationId, id, true))) throw connectionNotFound();
        // A plugin that needs it would be left pointing at nothing: the plugin goes first.
        const plugins = await store.pluginLinks(tx, organizationId, [id]);
        if (plugins.length > 0) {
          const names = [...new Set(plugins.map((link) => link.name))].join(', ');
          throw conflict('connection_required', `The plugin ${names} requires this connection: uninstall the plugin first (DELETE /v1/plugins/{pluginId}), then delete it`);
        }
        await store.deleteConnection(tx, organizationId, id);
      });
    },

    /** Spec operation 1. */
    async edit(caller: Caller, id: string, input: EditConnectionInput) {
      const { organizationId, memberId } = requireAdmin(caller);
      const current = await store.findConnection(db, organizationId, id);
      if (!current) throw connectionNotFound();
      // Bad ids are refused before a probe is spent on them (and checked again when written).
      await checkAccess(organizationId, input.access, ['access']);
      // Compared as instants at the precision the API returns (milliseconds): 10:00Z = 10:00:00.000Z.
      const expected = new Date(input.expectedUpdatedAt);
      const stale = () => conflict('connection_conflict', 'The connection changed since you read it; reload it and apply your edit again');
      if (current.updatedAt.getTime() !== expected.getTime()) throw stale();

      const normalizedUrl = normalizeUrl(input.url);
      const fingerprint = identityFingerprint(normalizedUrl, input.authType, input.credentialMode);
      const identityChanged = fingerprint !== current.identityFingerprint;
      if (identityChanged) {
        const managers = (await store.pluginLinks(db, organizationId, [id])).filter((link) => link.relation === 'manages_identity');
        if (managers.length > 0) {
          throw conflict('marketplace_managed', `url, authType and credentialMode of this connection are managed by the plugin ${managers.map((m) => m.name).join(', ')}`);
        }
      }

      // Probe only what changes connectivity: a new identity or a new key. Name and access edits
      // leave the server, the auth type and the credential as they were validated.
      let probed = false;
      if (input.authType !== 'oauth' && (identityChanged || input.apiKey !== undefined)) {
        if (input.authType === 'apikey' && input.credentialMode === 'shared' && input.apiKey === undefined) throw apiKeyRequired();
        await allowProbe(organizationId, memberId);
        await validateByProbe(input.url, input.authType, input.credentialMode, input.apiKey);
        probed = true;
      }

      await transactionWithAccess(organizationId, memberId, input.access, async (tx, access) => {
        // Re-read under a row lock: of concurrent edits with the same token exactly one gets here first.
        const locked = await store.findConnection(tx, organizationId, id, true);
        if (!locked) throw connectionNotFound();
        if (locked.updatedAt.getTime() !== expected.getTime()) throw stale();
        const fields: ConnectionFields = {
          name: input.name,
          url: input.url,
          normalizedUrl,
          authType: input.authType,
          credentialMode: input.credentialMode,
          identityFingerprint: fingerprint,
          orgWide: access.orgWide,
          ...oauthColumns(locked, input, identityChanged),
          authorizationServerIssuer: input.authorizationServerIssuer === undefined ? locked.authorizationServerIssuer : input.authorizationServerIssuer,
          requestedScopes: input.requestedScopes === undefined ? locked.requestedScopes : [...new Set(input.requestedScopes)],
          health: identityChanged ? (probed && input.authType === 'none' ? 'ready' : 'unknown') : locked.health,
          healthReason: identityChanged ? null : locked.healthReason,
          healthCheckedAt: identityChanged ? (probed && input.authType === 'none' ? new Date() : null) : locked.healthCheckedAt,
        };
        const updated = await store.updateConnection(tx, organizationId, id, expected, fields, identityChanged);
        if (!updated) throw stale();
        if (identityChanged) {
          // The old identity's credentials die with it, in this transaction: shared, every member's, pending authorizations.
          await store.deleteAllCredentials(tx, organizationId, id);
          await runInvalidationHooks(tx, organizationId, id);
        }
        await store.replaceAccess(tx, organizationId, id, access);
        await storeSuppliedApiKey(tx, organizationId, id, memberId, fingerprint, input);
      });

      const presented = await presentAfterWrite(caller, organizationId, id);
      const credentialNeeded = input.authType === 'oauth' || input.authType === 'apikey';
      const reconnectionRequired =
        identityChanged && credentialNeeded && !(input.authType === 'apikey' && input.credentialMode === 'shared' && input.apiKey !== undefined);
      return { ...presented, identityChanged, reconnectionRequired };
    },

    /** Spec operation 2: the whole access set is replaced. */
    async replaceAccess(caller: Caller, id: string, input: AccessSet) {
      const { organizationId, memberId } = requireAdmin(caller);
      await transactionWithAccess(organizationId, memberId, input, async (tx, access) => {
        const locked = await store.findConnection(tx, organizationId, id, true);
        if (!locked) throw connectionNotFound();
        await store.touchConnection(tx, organizationId, id, access.orgWide);
        await store.replaceAccess(tx, organizationId, id, access);
      });
      return presentAfterWrite(caller, organizationId, id);
    },

    /** Probes the stored configuration with the stored credential and records its health. */
    async test(caller: Caller, id: string): Promise<{ ok: boolean; highestPassed: HighestPassed; tools: string[]; diagnostic: Diagnostic | null }> {
      const { organizationId, memberId } = requireAdmin(caller);
      const row = await store.findConnection(db, organizationId, id);
      if (!row) throw connectionNotFound();
      await allowProbe(organizationId, memberId);
      if (row.authType === 'oauth' && oauthTester) return oauthTester(row, row.credentialMode === 'shared' ? null : memberId);
      const credentials = await store.credentialsFor(db, organizationId, [id], memberId);
      const credential = row.credentialMode === 'shared' ? credentials.shared.get(id) : credentials.mine.get(id);
      const apiKey = credential && row.authType === 'apikey' ? openApiKey(secrets, row.identityFingerprint, credential.secretSealed) : null;
      const oauth = credential && row.authType === 'oauth' ? openOAuthAccessToken(secrets, row.identityFingerprint, credential.secretSealed) : null;
      const secret = apiKey ?? oauth?.accessToken ?? null;
      let result: ProbeResult;
      if (apiKey !== null) result = await probe(row.url, 'apikey', apiKey);
      else if (oauth !== null) result = await probe(row.url, 'none', undefined, oauth.accessToken);
      else result = await probe(row.url, 'none');

      if (result.ok) {
        if (credential && secret !== null) await store.setCredentialHealth(db, organizationId, credential.id, 'ready', null);
        else if (row.authType === 'none') await store.setConnectionHealth(db, organizationId, id, 'ready', null);
        return { ok: true, highestPassed: result.highestPassed, tools: result.tools, diagnostic: null };
      }
      const rejected = result.diagnostic.phase === 'AUTH_RESOURCE_VALIDATION';
      if (rejected && credential) await store.setCredentialHealth(db, organizationId, credential.id, 'reconnect_required', 'authorization_rejected');
      let diagnostic = result.diagnostic;
      // Probed without a key because none is stored (for this caller): the probe's own advice, to
      // choose an authentication type, does not fit a connection that already has one.
      if (row.authType === 'apikey' && apiKey === null && diagnostic.code === 'authorization_required') {
        const perMember = row.credentialMode === 'per_member';
        diagnostic = {
          ...diagnostic,
          actionOwner: perMember ? 'member' : 'organization_admin',
          operatorAction: perMember
            ? 'You have no API key stored for this connection: add yours with PUT /v1/mcp-connections/{connectionId}/credentials.'
            : 'The connection has no usable API key: an owner or admin sets it with PUT /v1/mcp-connections/{connectionId}/credentials.',
        };
      }
      return { ok: false, highestPassed: diagnostic.highestPassed, tools: [], diagnostic };
    },

    /**
     * The caller supplies their own API key (per-member connections, any member who may use it) or
     * the shared one (shared connections, owners and admins). Probed before it is stored.
     */
    async setApiKey(caller: Caller, id: string, apiKey: string) {
      const { organizationId, memberId, isAdmin } = organizationOf(caller);
      const row = await loadVisible(caller, id);
      if (row.authType !== 'apikey') {
        throw invalidRequest([{ message: `This connection authenticates with ${row.authType}, not an API key`, path: ['apiKey'], in: 'body' }]);
      }
      const shared = row.credentialMode === 'shared';
      if (shared && !isAdmin) throw forbidden('Only owners and admins set the shared API key of a connection');
      if (!shared && !memberId) throw forbidden('A per-member API key belongs to a member of the organization');
      await allowProbe(organizationId, memberId);
      await validateByProbe(row.url, 'apikey', row.credentialMode, apiKey);
      await db.transaction(async (tx) => {
        if (memberId) {
          // The caller may have been removed, suspended or demoted while the key was probed: checked
          // again, and held until the key is stored.
          const member = await deps.identity.lockMember(tx, organizationId, memberId);
          if (member?.status !== 'active') throw notAnActiveMember();
          if (shared && member.role !== 'owner' && member.role !== 'admin') throw forbidden('Only owners and admins set the shared API key of a connection');
        }
        // The identity may have changed while probing: store the key only for the identity it was checked against.
        const locked = await store.findConnection(tx, organizationId, id, true);
        if (!locked) throw connectionNotFound();
        if (locked.identityFingerprint !== row.identityFingerprint) {
          throw conflict('connection_conflict', 'The connection changed while your key was being checked; try again');
        }
        await store.upsertCredential(tx, {
          id: newId('emcc'),
          organizationId,
          connectionId: id,
          memberId: shared ? null : memberId,
          kind: 'apikey',
          identityFingerprint: row.identityFingerprint,
          secretSealed: sealApiKey(secrets, row.identityFingerprint, apiKey),
          health: 'ready',
        });
      });
      return presentAfterWrite(caller, organizationId, id);
    },

    async installPlugin(
      caller: Caller,
      manifest: { name: string; version?: string | undefined; mcpConnections: Array<{ name: string; url: string; authType: AuthType; credentialMode: CredentialMode; manageIdentity: boolean }> },
    ) {
      const { organizationId } = requireAdmin(caller);
      const pluginId = newId('plg');
      const requires: string[] = [];
      const managed: string[] = [];
      const installed = await db.transaction(async (tx) => {
        const created = await store.insertPlugin(tx, { id: pluginId, organizationId, name: manifest.name, version: manifest.version ?? null, manifest, installedBy: caller.userId });
        for (const declared of manifest.mcpConnections) {
          const normalizedUrl = normalizeUrl(declared.url);
          const fingerprint = identityFingerprint(normalizedUrl, declared.authType, declared.credentialMode);
          // The organization's connection to that server is reused; otherwise the plugin brings one, usable by nobody until granted.
          let connectionId = (await store.findConnectionByIdentity(tx, organizationId, fingerprint))?.id;
          if (!connectionId) {
            connectionId = newId('emc');
            await store.insertConnection(tx, {
              id: connectionId,
              organizationId,
              createdBy: caller.userId,
              name: declared.name,
              url: declared.url,
              normalizedUrl,
              authType: declared.authType,
              credentialMode: declared.credentialMode,
              identityFingerprint: fingerprint,
              orgWide: false,
              oauthClientId: null,
              oauthClientSecretSealed: null,
              oauthTokenEndpointAuthMethod: null,
              oauthRegistrationSource: null,
              authorizationServerIssuer: null,
              requestedScopes: [],
              health: 'unknown',
              healthReason: null,
              healthCheckedAt: null,
            });
          }
          await store.insertPluginLink(tx, organizationId, pluginId, connectionId, 'requires');
          if (!requires.includes(connectionId)) requires.push(connectionId);
          if (declared.manageIdentity) {
            await store.insertPluginLink(tx, organizationId, pluginId, connectionId, 'manages_identity');
            if (!managed.includes(connectionId)) managed.push(connectionId);
          }
        }
        return created;
      });
      return { id: pluginId, name: manifest.name, version: manifest.version ?? null, requires, managesIdentityOf: managed, createdAt: isoTimestamp(installed.createdAt) };
    },

    async uninstallPlugin(caller: Caller, pluginId: string): Promise<void> {
      const { organizationId } = requireAdmin(caller);
      if (!(await store.deletePlugin(db, organizationId, pluginId))) throw notFound('plugin_not_found', 'No such plugin in this organization');
    },

    store,
  };
}

/** The access token of an OAuth envelope (written by ./oauth/credential-store.ts) for this identity, else null. */
function openOAuthAccessToken(secrets: SecretBox, identityFingerprint: string, sealed: string): { accessToken: string } | null {
  try {
    const envelope = JSON.parse(secrets.open(sealed)) as { kind?: unknown; identityFingerprint?: unknown; oauth?: { accessToken?: unknown } };
    const token = envelope.oauth?.accessToken;
    return envelope.kind === 'oauth' && envelope.identityFingerprint === identityFingerprint && typeof token === 'string' ? { accessToken: token } : null;
  } catch {
    return null;
  }
}

export type McpConnectionService = ReturnType<typeof createMcpConnectionService>;
