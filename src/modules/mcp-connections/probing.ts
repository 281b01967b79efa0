// Validation by probing: a configuration is probed before it is stored (502 with the diagnostic when
// it fails), and POST .../test probes what is stored and records the credential's health.
import { type ApiError, rateLimited } from '../../http/errors.ts';
import type { CallerContext } from '../../platform/write-context.ts';
import { connectionNotFound, requirePermission } from './access.ts';
import { openApiKey } from './api-key-envelope.ts';
import type { ConnectionDeps } from './deps.ts';
import { recordCatalog } from './catalog-store.ts';
import { observeAuthRequirement, recordAuthRequirement } from './auth-requirement.ts';
import { probeConnection, type Diagnostic, type ProbeResult, type ServerCatalog } from './probe/index.ts';
import type { AuthType, ConnectionRow, CredentialMode, TestResult } from './contracts.ts';
import { mcpConnectionErrors } from './error-codes.ts';

// A probe dials a tenant-chosen server for up to 15 s; these bound how many a tenant (and one
// member, who can trigger probes by storing their own key) can start, across all processes.
export const probeLimits = { perOrganization: 300, perMember: 60, windowSeconds: 60 };

export async function allowProbe(
  deps: Pick<ConnectionDeps, 'limiter'>,
  organizationId: string,
  memberId: string | null,
): Promise<void> {
  const organization = await deps.limiter.hit(
    `mcp-probe:org:${organizationId}`,
    probeLimits.perOrganization,
    probeLimits.windowSeconds,
  );
  if (!organization.allowed)
    throw rateLimited(organization, 'Too many MCP server checks for this organization; retry later');
  if (!memberId) return;
  const member = await deps.limiter.hit(
    `mcp-probe:member:${memberId}`,
    probeLimits.perMember,
    probeLimits.windowSeconds,
  );
  if (!member.allowed) throw rateLimited(member, 'Too many MCP server checks; retry later');
}

type ProbeDeps = Pick<ConnectionDeps, 'outbound' | 'probeTimeoutMs' | 'logger'>;

function probeServer(deps: ProbeDeps, url: string, authType: 'apikey' | 'none', apiKey?: string): Promise<ProbeResult> {
  return probeConnection({
    url,
    authType,
    ...(apiKey !== undefined ? { apiKey } : {}),
    outbound: deps.outbound,
    ...(deps.probeTimeoutMs ? { timeoutMs: deps.probeTimeoutMs } : {}),
    ...(deps.logger ? { logger: deps.logger } : {}),
  });
}

function validationFailed(diagnostic: Diagnostic): ApiError {
  return mcpConnectionErrors.connection_validation_failed(
    `The MCP server could not be validated: ${diagnostic.message}`,
    { diagnostic },
  );
}

/**
 * Probes before anything is written; a failure is 502 with the diagnostic. Passed, the server's
 * catalog (for the caller to record once the connection is written), or null when none was taken.
 */
export async function validateByProbe(
  deps: ProbeDeps,
  url: string,
  authType: AuthType,
  credentialMode: CredentialMode,
  apiKey: string | undefined,
): Promise<ServerCatalog | null> {
  if (authType === 'oauth') return null;
  const withKey = authType === 'apikey' && apiKey !== undefined;
  const result = await probeServer(deps, url, withKey ? 'apikey' : 'none', withKey ? apiKey : undefined);
  if (result.ok) return result.catalog;
  // A per-member API-key server is checked before any member has a key: a server that answers
  // "credentials required" has shown it is there; each member's key is checked when they add it.
  const awaitingMemberKeys = authType === 'apikey' && credentialMode === 'per_member' && !withKey;
  if (awaitingMemberKeys && result.diagnostic.phase === 'AUTH_RESOURCE_DISCOVERY') return null;
  throw validationFailed(result.diagnostic);
}

/**
 * Probes the stored configuration with the stored credential and records its health. OAuth
 * connections are tested by the OAuth flows (./oauth/): refresh first, why a token was refused, one
 * scope step-up. The health it records is an observation of the server, not a change the caller
 * makes, so it is written outside a write's transaction, as each probe's outcome arrives.
 */
export async function testConnection(deps: ConnectionDeps, ctx: CallerContext, id: string): Promise<TestResult> {
  const { organizationId, memberId } = requirePermission(ctx.actor, 'mcp_connections.view');
  const row = await deps.store.findConnection(deps.db, organizationId, id);
  if (!row) throw connectionNotFound();
  await allowProbe(deps, organizationId, memberId);
  // First, not beside the test: what the server demands of a client with no credential at all
  // (requiredAuthType), one unauthenticated request (two or three more when it refuses).
  const required = await observeAuthRequirement(row.url, (url, init) => deps.outbound.fetch(url, init));
  if (required) await recordAuthRequirement(deps.db, organizationId, id, row.url, required);
  return row.authType === 'oauth'
    ? deps.oauth.testConnection(row, row.credentialMode === 'shared' ? null : memberId)
    : testStored(deps, row, memberId);
}

async function testStored(deps: ConnectionDeps, row: ConnectionRow, memberId: string | null): Promise<TestResult> {
  const { db, store, secrets } = deps;
  const { organizationId, id } = row;
  const credentials = await store.credentialsFor(db, organizationId, [id], memberId);
  const credential = row.credentialMode === 'shared' ? credentials.shared.get(id) : credentials.mine.get(id);
  const apiKey =
    credential && row.authType === 'apikey'
      ? openApiKey(secrets, row.identityFingerprint, credential.secretSealed)
      : null;
  const result =
    apiKey !== null ? await probeServer(deps, row.url, 'apikey', apiKey) : await probeServer(deps, row.url, 'none');

  if (result.ok) {
    await recordCatalog(db, organizationId, id, row.identityFingerprint, result.catalog);
    if (credential && apiKey !== null)
      await store.setCredentialHealth(db, organizationId, credential.id, 'ready', null);
    else if (row.authType === 'none') await store.setConnectionHealth(db, organizationId, id, 'ready', null);
    return { ok: true, highestPassed: result.highestPassed, tools: result.tools, diagnostic: null };
  }
  const rejected = result.diagnostic.phase === 'AUTH_RESOURCE_VALIDATION';
  if (rejected && credential)
    await store.setCredentialHealth(db, organizationId, credential.id, 'reconnect_required', 'authorization_rejected');
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
}
