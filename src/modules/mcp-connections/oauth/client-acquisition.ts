// Client acquisition: discovery of the authorization server, and the OAuth client this service uses
// with it for a connection: pre-registered, a client ID metadata document, or a dynamic registration
// (made once per connection and server). What these learn about the server (its issuer, how a client
// is obtained, a setup or issuer review needed) is recorded in transactions of their own: it is an
// observation of the server, kept whichever caller's request made it, not a change that caller makes.
import type { Queryable } from '../../../db/database.ts';
import { lockUntilCommit } from '../../../db/locks.ts';
import type { ConnectionRow } from '../contracts.ts';
import type { OAuthTokenSecret } from './credential-store.ts';
import type { OAuthDeps } from './deps.ts';
import { oauthFailure } from './diagnostic.ts';
import { discover, type DiscoveryResult } from './discovery.ts';
import { OAuthFlowError } from './errors.ts';
import { holdConnection } from './guards.ts';
import {
  chooseRegistration,
  registerDynamicClient,
  type DynamicClient,
  type OAuthClientCredentials,
  type PreRegisteredClient,
  type RegistrationPlan,
  type RegistrationSource,
} from './registration.ts';
import type { CallbackMode } from './state.ts';
import {
  findRegisteredClient,
  recordConnectionRegistration,
  recordDiscoveryPath,
  saveRegisteredClient,
  upsertConnectionState,
  type PendingAuthorizationRow,
} from './store.ts';
import { representableDate } from './tokens.ts';
import { callbackModeFor, callbackUrl, clientMetadataUrl } from './urls.ts';
import { mcpConnectionErrors } from '../error-codes.ts';

type ClientDeps = Pick<OAuthDeps, 'db' | 'secrets' | 'publicUrl' | 'fetch' | 'connections' | 'logger'>;

export function preRegisteredClient(
  deps: Pick<OAuthDeps, 'secrets'>,
  connection: ConnectionRow,
): PreRegisteredClient | null {
  if (!connection.oauthClientId) return null;
  const signs = connection.oauthClientPrivateKeySealed && connection.oauthClientSigningAlgorithm;
  return {
    clientId: connection.oauthClientId,
    clientSecret: connection.oauthClientSecretSealed ? deps.secrets.open(connection.oauthClientSecretSealed) : null,
    tokenEndpointAuthMethod: connection.oauthTokenEndpointAuthMethod,
    privateKey: signs
      ? {
          pem: deps.secrets.open(connection.oauthClientPrivateKeySealed!),
          algorithm: connection.oauthClientSigningAlgorithm!,
        }
      : null,
  };
}

function dynamicFromRow(
  deps: Pick<OAuthDeps, 'secrets'>,
  row: Awaited<ReturnType<typeof findRegisteredClient>>,
): DynamicClient | null {
  if (!row) return null;
  return {
    issuer: row.issuer,
    clientId: row.client_id,
    clientSecret: row.client_secret_sealed ? deps.secrets.open(row.client_secret_sealed) : null,
    clientSecretExpiresAt: row.client_secret_expires_at
      ? Math.floor(row.client_secret_expires_at.getTime() / 1000)
      : null,
    authMethod: row.token_endpoint_auth_method,
    redirectUris: row.redirect_uris,
  };
}

export async function recordState(
  deps: ClientDeps,
  connection: ConnectionRow,
  patch: {
    issuer: string | null;
    source: RegistrationSource | null;
    setupRequired: boolean;
    issuerReview: boolean;
    problem: string | null;
  },
) {
  await deps.db.transaction(async (tx) => {
    await holdConnection(deps, tx, connection);
    await upsertConnectionState(tx, {
      organization_id: connection.organizationId,
      connection_id: connection.id,
      identity_fingerprint: connection.identityFingerprint,
      issuer: patch.issuer,
      registration_source: patch.source,
      setup_required: patch.setupRequired,
      issuer_review_required: patch.issuerReview,
      problem_code: patch.problem,
    });
    // The connection row shows how the client is obtained; a failure that says nothing about it leaves it alone.
    if (patch.source !== null || patch.setupRequired) {
      await recordConnectionRegistration(
        tx,
        connection.organizationId,
        connection.id,
        connection.identityFingerprint,
        patch.source,
        patch.setupRequired,
      );
    }
  });
}

/** Discovery, with the connection flagged for review when a pinned issuer does not match. */
export async function discoverFor(deps: ClientDeps, connection: ConnectionRow): Promise<DiscoveryResult> {
  const found = await tryDiscover(deps, connection);
  if (found instanceof OAuthFlowError)
    throw oauthFailure(mcpConnectionErrors.oauth_discovery_failed, found, connection.url);
  return found;
}

export async function tryDiscover(
  deps: ClientDeps,
  connection: ConnectionRow,
): Promise<DiscoveryResult | OAuthFlowError> {
  try {
    const found = await discover({
      serverUrl: connection.url,
      fetch: deps.fetch,
      pinnedIssuer: connection.authorizationServerIssuer,
      grant: connection.oauthGrantType,
    });
    await recordDiscoveryPath(
      deps.db,
      connection.organizationId,
      connection.id,
      connection.identityFingerprint,
      found.discoveryPath,
    );
    return found;
  } catch (error) {
    if (!(error instanceof OAuthFlowError)) throw error;
    if (error.issuerReviewRequired) {
      await recordState(deps, connection, {
        issuer: null,
        source: null,
        setupRequired: false,
        issuerReview: true,
        problem: error.code,
      });
    }
    deps.logger?.warn(
      { connectionId: connection.id, phase: error.phase, code: error.code },
      'MCP OAuth discovery failed',
    );
    return error;
  }
}

/**
 * Where this connection's client comes from on this server (pre-registered, client metadata document,
 * a stored or a still-to-make dynamic registration), judged for the isolated callback. When none
 * can serve, the connection is recorded as `setup_required`.
 */
export async function planClient(
  deps: ClientDeps,
  connection: ConnectionRow,
  discovery: DiscoveryResult,
): Promise<RegistrationPlan> {
  const stored = dynamicFromRow(
    deps,
    await findRegisteredClient(
      deps.db,
      connection.organizationId,
      connection.id,
      discovery.issuer,
      connection.identityFingerprint,
    ),
  );
  const plan = chooseRegistration({
    preRegistered: preRegisteredClient(deps, connection),
    metadata: discovery.metadata,
    clientMetadataUrl: clientMetadataUrl(deps.publicUrl),
    dynamicClient: stored,
    redirectUri: callbackUrl(deps.publicUrl, connection.id, 'isolated-v1'),
  });
  if (plan.source === null) {
    await recordState(deps, connection, {
      issuer: discovery.issuer,
      source: null,
      setupRequired: true,
      issuerReview: false,
      problem: 'setup_required',
    });
  }
  return plan;
}

/** The client to use, registering one dynamically the first time (once per connection and server). */
export async function clientFor(
  deps: ClientDeps,
  connection: ConnectionRow,
  discovery: DiscoveryResult,
  scopes: string[],
): Promise<{ client: OAuthClientCredentials; source: RegistrationSource; mode: CallbackMode; redirectUri: string }> {
  const plan = await planClient(deps, connection, discovery);
  if (plan.source === null) {
    throw mcpConnectionErrors.oauth_setup_required(plan.reason, { setupRequired: true });
  }
  const mode = callbackModeFor(plan.source);
  const redirectUri = callbackUrl(deps.publicUrl, connection.id, mode);
  let client: OAuthClientCredentials;
  if (plan.source === 'dynamic' && !plan.client) {
    client = await registerOnce(deps, connection, discovery, redirectUri, scopes);
  } else {
    client = plan.client!;
  }
  await recordState(deps, connection, {
    issuer: discovery.issuer,
    source: plan.source,
    setupRequired: false,
    issuerReview: false,
    problem: null,
  });
  return { client, source: plan.source, mode, redirectUri };
}

/**
 * Dynamic registration, once per connection and server even when several members start their
 * first authorization at the same moment in different processes: a transaction-scoped advisory
 * lock on the connection serializes them, and whoever comes second finds the stored client.
 */
async function registerOnce(
  deps: ClientDeps,
  connection: ConnectionRow,
  discovery: DiscoveryResult,
  redirectUri: string,
  scopes: string[],
): Promise<OAuthClientCredentials> {
  return deps.db.transaction(async (tx) => {
    await lockUntilCommit(tx, `mcp-oauth-registration:${connection.id}`);
    const existing = dynamicFromRow(
      deps,
      await findRegisteredClient(
        tx,
        connection.organizationId,
        connection.id,
        discovery.issuer,
        connection.identityFingerprint,
      ),
    );
    const reusable = chooseRegistration({ metadata: discovery.metadata, dynamicClient: existing, redirectUri });
    if (reusable.source === 'dynamic' && reusable.client) return reusable.client;
    let registered: DynamicClient;
    try {
      registered = await registerDynamicClient({
        metadata: discovery.metadata,
        redirectUris: [redirectUri],
        scope: scopes.join(' ') || null,
        clientUri: deps.publicUrl,
        fetch: deps.fetch,
      });
    } catch (error) {
      if (error instanceof OAuthFlowError)
        throw oauthFailure(
          mcpConnectionErrors.oauth_registration_failed,
          error,
          discovery.metadata.registration_endpoint,
        );
      throw error;
    }
    // Locked after the registration request, so that a DELETE never waits on the server's answer.
    await holdConnection(deps, tx, connection);
    const saved = await saveRegisteredClient(tx, {
      organization_id: connection.organizationId,
      connection_id: connection.id,
      issuer: discovery.issuer,
      identity_fingerprint: connection.identityFingerprint,
      client_id: registered.clientId,
      client_secret_sealed: registered.clientSecret ? deps.secrets.seal(registered.clientSecret) : null,
      client_secret_expires_at: registered.clientSecretExpiresAt
        ? representableDate(registered.clientSecretExpiresAt * 1000)
        : null,
      token_endpoint_auth_method: registered.authMethod,
      redirect_uris: registered.redirectUris,
    });
    return dynamicFromRow(deps, saved)!;
  });
}

/** The client of a pending authorization, rebuilt at callback time from what is stored now. */
export async function clientAtCallback(
  deps: ClientDeps,
  connection: ConnectionRow,
  pending: PendingAuthorizationRow,
): Promise<OAuthClientCredentials> {
  const changed = () =>
    mcpConnectionErrors.oauth_client_changed(
      'The OAuth client of this connection changed during the authorization; start again',
    );
  if (pending.registration_source === 'pre-registered') {
    const pre = preRegisteredClient(deps, connection);
    if (!pre || pre.clientId !== pending.client_id) throw changed();
    const plan = chooseRegistration({ preRegistered: pre });
    return (plan as { client: OAuthClientCredentials }).client;
  }
  if (pending.registration_source === 'client-metadata')
    return { clientId: pending.client_id, clientSecret: null, authMethod: 'none' };
  const stored = dynamicFromRow(
    deps,
    await findRegisteredClient(
      deps.db,
      connection.organizationId,
      connection.id,
      pending.issuer,
      connection.identityFingerprint,
    ),
  );
  if (!stored || stored.clientId !== pending.client_id) throw changed();
  return stored;
}

/** The client a refresh authenticates as: the one that obtained the tokens. */
export async function refreshClient(
  deps: ClientDeps,
  connection: ConnectionRow,
  secret: OAuthTokenSecret,
  q: Queryable,
): Promise<OAuthClientCredentials> {
  const gone = () =>
    new OAuthFlowError(
      'CONTINUITY_REFRESH',
      'client_changed',
      'The OAuth client that obtained this credential is no longer configured',
      { oauthError: 'invalid_client' },
    );
  if (secret.registrationSource === 'client-metadata')
    return { clientId: secret.clientId, clientSecret: null, authMethod: 'none' };
  if (secret.registrationSource === 'pre-registered') {
    const pre = preRegisteredClient(deps, connection);
    if (!pre || pre.clientId !== secret.clientId) throw gone();
    return (chooseRegistration({ preRegistered: pre }) as { client: OAuthClientCredentials }).client;
  }
  const stored = dynamicFromRow(
    deps,
    await findRegisteredClient(
      q,
      connection.organizationId,
      connection.id,
      secret.issuer,
      connection.identityFingerprint,
    ),
  );
  if (!stored || stored.clientId !== secret.clientId) throw gone();
  return stored;
}
