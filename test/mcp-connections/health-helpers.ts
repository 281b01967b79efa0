// Shared setup of the background credential health job's tests: an app whose job is built (interval
// on) but never ticks by itself (a poll of an hour), so each test drives it with runOnce(now) and an
// injected clock; OAuth MCP servers and real SDK MCP servers closed with the file.
import { after } from 'node:test';
import { loadConfig, type McpHealthSettings } from '../../src/config.ts';
import type { HealthRunSummary, McpHealthJob } from '../../src/modules/mcp-connections/index.ts';
import type { TestApp } from '../support/app.ts';
import { useTenantApp, type TenantHarness } from '../support/harness.ts';
import { api } from '../support/http.ts';
import {
  startOAuthMcpServer,
  type OAuthMcpServer,
  type OAuthMcpServerOptions,
} from '../support/oauth-mcp-server/index.ts';
import type { OAuthWorld } from '../mcp-oauth/helpers.ts';
import { LOOPBACK } from './helpers.ts';

export const HOUR = 3600;

/** The job's settings for tests: on, threshold 3, and no timer that would run it behind the test's back. */
export function healthSettings(overrides: Partial<McpHealthSettings> = {}): McpHealthSettings {
  return { ...loadConfig({}).mcpHealth, intervalSeconds: HOUR, failureThreshold: 3, pollSeconds: HOUR, ...overrides };
}

export interface HealthWorld extends OAuthWorld {
  readonly harness: TenantHarness;
  job(app?: TestApp): McpHealthJob;
  /**
   * A clock starting now: `at(s)` runs the job once as if `s` seconds had passed (the servers' tokens
   * keep real time, so the job's view of expiry is what moves).
   */
  clock(app?: TestApp): { at(seconds: number): Promise<HealthRunSummary> };
}

export function useHealthWorld(settings: Partial<McpHealthSettings> = {}): HealthWorld {
  const servers: OAuthMcpServer[] = [];
  after(async () => {
    await Promise.allSettled(servers.map((s) => s.close()));
  });
  const harness = useTenantApp({ config: { allowedPrivateNetworks: LOOPBACK, mcpHealth: healthSettings(settings) } });
  const world: HealthWorld = {
    harness,
    get app() {
      return harness.app;
    },
    get tenant() {
      return harness.tenant;
    },
    async server(options: OAuthMcpServerOptions = {}) {
      const s = await startOAuthMcpServer(options);
      servers.push(s);
      return s;
    },
    job(app = harness.app) {
      const job = app.app.mcpHealth;
      if (!job) throw new Error('the health job is not running in this app');
      return job;
    },
    clock(app) {
      const start = Date.now();
      return { at: (seconds) => world.job(app).runOnce(new Date(start + seconds * 1000)) };
    },
  };
  return world;
}

/**
 * Deletes the test's connections when it ends: the job's runs see every due credential of the app,
 * so a test that left its own behind would be counted in the next test's runs.
 */
export function removeAfter(
  t: { after(fn: () => Promise<void>): void },
  world: HealthWorld,
  ...connectionIds: string[]
): void {
  t.after(async () => {
    for (const id of connectionIds)
      await api(world.app.url, world.tenant.admin.token).delete(`/v1/mcp-connections/${id}`);
  });
}

/** The connection as `token` sees it. */
export async function viewOf(app: TestApp, token: string, connectionId: string): Promise<any> {
  const response = await api(app.url, token).get(`/v1/mcp-connections/${connectionId}`);
  if (response.status !== 200) throw new Error(`get connection: ${response.status} ${response.text}`);
  return response.body;
}

export const refreshesIssued = (s: OAuthMcpServer) =>
  s.stats.tokenRequests.filter((r) => r.grantType === 'refresh_token' && r.outcome === 'issued').length;
export const refreshesRefused = (s: OAuthMcpServer) =>
  s.stats.tokenRequests.filter((r) => r.grantType === 'refresh_token' && r.outcome === 'refused').length;
