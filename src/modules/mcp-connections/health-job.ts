// Credential health in the background, so that a credential that stopped working is found before someone
// needs it: every `pollSeconds` a process that runs workers
// claims the connections with a due credential, organization by organization (health-store.ts: leased
// with SKIP LOCKED, so N processes share them and each connection is checked by one process at a time),
// and checks each due credential of a connection one after another: OAuth access tokens within the
// refresh margin of their expiry are refreshed, and every credential (shared and each member's, OAuth
// and API keys) is probed once per MCP_HEALTH_INTERVAL_SECONDS.
//
// What a check learned is written on the credential, which is what credentialHealth,
// credentialHealthReason and credentialHealthCheckedAt report:
//  - a passed probe: ready (and validated);
//  - a definite refusal moves to reconnect_required at once: invalid_grant on refresh
//    (credential_expired), a 401/403 that a fresh token gets too (authorization_rejected; before any
//    probe had passed since the authorization, post_authorization_validation_failed), an API key the
//    server refuses (authorization_rejected);
//  - anything else (server or token endpoint unreachable, timeouts, 5xx, protocol errors) says nothing
//    about the credential: it counts one consecutive failure, and only at MCP_HEALTH_FAILURE_THRESHOLD
//    moves to reconnect_required (post_authorization_validation_failed after failed probes,
//    credential_expired after failed refreshes). A passed check resets the count.
// These are observations of the server, not changes someone made: like POST .../test, they are
// written outside a write's transaction and are not audit events.
import { randomUUID } from 'node:crypto';
import type { McpHealthSettings } from '../../config.ts';
import type { Database } from '../../db/database.ts';
import type { OutboundClient } from '../../platform/outbound.ts';
import type { SecretBox } from '../../platform/secrets.ts';
import { openApiKey } from './api-key-envelope.ts';
import type { ConnectionOAuthHooks, ConnectionRow, CredentialCheck } from './contracts.ts';
import {
  claimDueConnections,
  dueCredentials,
  organizationsWithDueConnections,
  recordCheck,
  recordInconclusive,
  releaseConnections,
  scheduleProbe,
  type DueCredential,
} from './health-store.ts';
import { probeConnection } from './probe/index.ts';
import type { ConnectionStore } from './store.ts';
import { countJobRound } from '../../platform/job-metrics.ts';

export interface HealthJobDeps {
  db: Database;
  store: Pick<ConnectionStore, 'findConnection'>;
  secrets: SecretBox;
  outbound: OutboundClient;
  oauth: Pick<ConnectionOAuthHooks, 'checkCredential'>;
  settings: McpHealthSettings;
  log: {
    info(details: Record<string, unknown>, message: string): void;
    warn(details: Record<string, unknown>, message: string): void;
  };
}

/** What one run did, by credential (a connection's due credentials are all checked in its turn). */
export interface HealthRunSummary {
  connections: number;
  credentials: number;
  probes: number;
  refreshes: number;
  ready: number;
  inconclusive: number;
  reconnectRequired: number;
}

export interface McpHealthJob {
  /** Checks everything due at `now` (the real time by default) and returns when nothing due is left unclaimed. */
  runOnce(now?: Date): Promise<HealthRunSummary>;
  /** Stops the schedule (if any) and waits for the run in progress, which stops after the connections in hand. */
  stop(): Promise<void>;
}

export function createMcpHealthJob(deps: HealthJobDeps): McpHealthJob & { start(): void } {
  const { settings } = deps;
  let stopping = false;
  let running: Promise<unknown> | null = null;
  let timer: NodeJS.Timeout | undefined;

  async function runOnce(now = new Date()): Promise<HealthRunSummary> {
    const summary: HealthRunSummary = {
      connections: 0,
      credentials: 0,
      probes: 0,
      refreshes: 0,
      ready: 0,
      inconclusive: 0,
      reconnectRequired: 0,
    };
    const token = randomUUID();
    const nextProbeAt = new Date(now.getTime() + settings.intervalSeconds * 1000);
    const nextBatch = claimsOfRun(deps.db, settings, now, token);
    while (!stopping) {
      const batch = await nextBatch();
      if (batch.length === 0) break;
      try {
        await eachAtMost(settings.concurrency, batch, async (claim) => {
          if (!stopping) await checkConnection(claim.organizationId, claim.id, now, nextProbeAt, summary);
        });
      } finally {
        // One statement per organization of the batch; a connection checked early in it is held a little
        // longer, harmlessly (it is no longer due, and the lease only keeps other processes off it).
        for (const [organizationId, ids] of Map.groupBy(batch, (claim) => claim.organizationId)) {
          await releaseConnections(
            deps.db,
            organizationId,
            ids.map((claim) => claim.id),
            token,
          );
        }
      }
    }
    return summary;
  }

  async function checkConnection(
    organizationId: string,
    connectionId: string,
    now: Date,
    nextProbeAt: Date,
    summary: HealthRunSummary,
  ): Promise<void> {
    const connection = await deps.store.findConnection(deps.db, organizationId, connectionId);
    if (!connection || connection.authType === 'none') return;
    summary.connections += 1;
    const due = await dueCredentials(
      deps.db,
      organizationId,
      connectionId,
      connection.identityFingerprint,
      now,
      settings.refreshMarginSeconds,
    );
    // One at a time: a connection's server sees one check of this job at once.
    for (const credential of due) {
      if (stopping) return;
      summary.credentials += 1;
      let check: CredentialCheck;
      try {
        check = await checkCredential(connection, credential);
      } catch (error) {
        deps.log.warn({ connectionId, credentialId: credential.id, err: error }, 'MCP credential health check failed');
        check = { kind: 'inconclusive', step: 'probe', code: 'check_failed', probed: false, refreshed: false };
      }
      await record(connection, credential, check, nextProbeAt, summary);
    }
  }

  function checkCredential(connection: ConnectionRow, credential: DueCredential): Promise<CredentialCheck> {
    const wants = { refresh: credential.refreshDue, probe: credential.probeDue };
    if (connection.authType === 'oauth')
      return deps.oauth.checkCredential(
        connection,
        { memberId: credential.memberId, validated: credential.validated },
        wants,
      );
    return checkApiKey(connection, credential);
  }

  async function checkApiKey(connection: ConnectionRow, credential: DueCredential): Promise<CredentialCheck> {
    const apiKey = openApiKey(deps.secrets, connection.identityFingerprint, credential.secretSealed);
    if (apiKey === null) return { kind: 'gone' };
    const result = await probeConnection({
      url: connection.url,
      authType: 'apikey',
      apiKey,
      outbound: deps.outbound,
      logger: deps.log,
    });
    if (result.ok) return { kind: 'healthy', probed: true, refreshed: false };
    if (result.diagnostic.phase === 'AUTH_RESOURCE_VALIDATION')
      return {
        kind: 'refused',
        reason: 'authorization_rejected',
        probed: true,
        refreshed: false,
        alreadyMarked: false,
      };
    return { kind: 'inconclusive', step: 'probe', code: result.diagnostic.code, probed: true, refreshed: false };
  }

  async function record(
    connection: ConnectionRow,
    credential: DueCredential,
    check: CredentialCheck,
    nextProbeAt: Date,
    summary: HealthRunSummary,
  ): Promise<void> {
    const { organizationId } = connection;
    const where = { connectionId: connection.id, credentialId: credential.id };
    if (check.kind === 'gone') return scheduleProbe(deps.db, organizationId, credential.id, nextProbeAt);
    if (check.probed) summary.probes += 1;
    if (check.refreshed) summary.refreshes += 1;
    switch (check.kind) {
      case 'healthy':
        summary.ready += 1;
        // A refresh alone says the grant stands (usableAccessToken marked it ready); the probe stays when it was due.
        if (check.probed) await recordCheck(deps.db, organizationId, credential.id, 'ready', null, nextProbeAt);
        return;
      case 'refused':
        summary.reconnectRequired += 1;
        if (!check.alreadyMarked)
          await recordCheck(deps.db, organizationId, credential.id, 'reconnect_required', check.reason, nextProbeAt);
        deps.log.info({ ...where, reason: check.reason }, 'MCP credential needs a reconnect');
        return;
      case 'inconclusive': {
        summary.inconclusive += 1;
        const reason = check.step === 'refresh' ? 'credential_expired' : 'post_authorization_validation_failed';
        const now = await recordInconclusive(
          deps.db,
          organizationId,
          credential.id,
          settings.failureThreshold,
          reason,
          nextProbeAt,
        );
        if (now?.health === 'reconnect_required') {
          summary.reconnectRequired += 1;
          deps.log.info(
            { ...where, reason, failures: now.failures, code: check.code },
            'MCP credential needs a reconnect: the failure threshold was reached',
          );
        } else {
          deps.log.warn(
            { ...where, failures: now?.failures, code: check.code },
            'MCP credential health check inconclusive',
          );
        }
        return;
      }
    }
  }

  function tick(): void {
    if (running || stopping) return;
    running = runOnce()
      .then(
        () => countJobRound('mcp-health', false),
        (error: unknown) => {
          countJobRound('mcp-health', true);
          deps.log.warn({ err: error }, 'MCP credential health run failed');
        },
      )
      .finally(() => {
        running = null;
      });
  }

  return {
    runOnce: (now) => runOnce(now),
    start() {
      timer = setInterval(tick, settings.pollSeconds * 1000);
      timer.unref();
    },
    async stop() {
      stopping = true;
      clearInterval(timer);
      await running;
    },
  };
}

/**
 * A run's claims, a batch (`batchSize` connections) at a time. The organizations with due connections
 * take turns: each claims what is left of the batch, and one that filled it goes to the back of the
 * line, so an organization with many due connections does not hold the others back for the whole run.
 * The organizations are looked up again once every turn is taken; when a lookup's turns claim nothing
 * (all leased, or locked by another process's claim), nothing due is left unclaimed and the run ends.
 */
function claimsOfRun(
  db: Database,
  settings: McpHealthSettings,
  now: Date,
  token: string,
): () => Promise<Array<{ organizationId: string; id: string }>> {
  const lease = {
    now,
    marginSeconds: settings.refreshMarginSeconds,
    leaseUntil: new Date(now.getTime() + settings.leaseSeconds * 1000),
    token,
  };
  // What this run has claimed, by organization: not claimed again even when still due (a check that
  // could not write its result), so a run ends.
  const seen = new Map<string, string[]>();
  let turns: string[] = [];
  return async () => {
    const batch: Array<{ organizationId: string; id: string }> = [];
    let lookedUp = false;
    while (batch.length < settings.batchSize) {
      if (turns.length === 0) {
        // Every organization has had its turn: what the batch holds is checked before every shard is asked again.
        if (batch.length > 0 || lookedUp) break;
        turns = await organizationsWithDueConnections(db, {
          now,
          marginSeconds: settings.refreshMarginSeconds,
          exclude: [...seen.values()].flat(),
        });
        lookedUp = true;
        continue;
      }
      const organizationId = turns.shift()!;
      const limit = settings.batchSize - batch.length;
      const earlier = seen.get(organizationId) ?? [];
      const ids = await claimDueConnections(db, organizationId, { ...lease, limit, exclude: earlier });
      seen.set(organizationId, [...earlier, ...ids]);
      if (ids.length === limit) turns.push(organizationId);
      for (const id of ids) batch.push({ organizationId, id });
    }
    return batch;
  };
}

/** Runs `work` over `items`, at most `limit` at once. */
async function eachAtMost<T>(limit: number, items: T[], work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await work(items[next++]!);
  });
  await Promise.all(lanes);
}
