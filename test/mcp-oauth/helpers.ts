// Shared bits of the MCP OAuth tests.
import { createOutboundClient } from '../../src/platform/outbound.ts';
import type { FetchLike } from '../../src/modules/mcp-connections/oauth/errors.ts';
import { after } from 'node:test';
import type { TestApp } from '../support/app.ts';
import type { Tenant, TestUser } from '../support/fixtures.ts';
import { useTenantApp } from '../support/harness.ts';
import { api, type ApiResponse } from '../support/http.ts';
import {
  startOAuthMcpServer,
  type OAuthMcpServer,
  type OAuthMcpServerOptions,
} from '../support/oauth-mcp-server/index.ts';

const LOOPBACK = ['127.0.0.0/8', '::1/128'];

/** The guarded outbound client, allowed to reach loopback where the test servers listen. */
const outbound = createOutboundClient({ allowedPrivateNetworks: LOOPBACK });
export const testFetch: FetchLike = (url, init) => outbound.fetch(url, init);

/** The same client with the production policy: loopback refused. */
const strict = createOutboundClient({ allowedPrivateNetworks: [] });
export const strictFetch: FetchLike = (url, init) => strict.fetch(url, init);

/** Follows an authorization URL to the auto-approving server and returns where it redirects. */
export async function followAuthorization(authorizationUrl: string): Promise<URL> {
  const response = await fetch(authorizationUrl, { redirect: 'manual' });
  await response.body?.cancel();
  const location = response.headers.get('location');
  if (response.status !== 302 || !location) throw new Error(`authorization endpoint answered ${response.status}`);
  return new URL(location);
}

export interface OAuthWorld {
  readonly app: TestApp;
  readonly tenant: Tenant;
  /** Starts an OAuth-protected MCP server that is closed with the world. */
  server(options?: OAuthMcpServerOptions): Promise<OAuthMcpServer>;
}

/**
 * The file's orgplane (loopback allowed for outbound calls) with a tenant, and OAuth MCP servers on
 * demand: started before the file's first test, the servers and then the app closed after its last.
 */
export function useOAuthWorld(): OAuthWorld {
  const servers: OAuthMcpServer[] = [];
  after(async () => {
    await Promise.allSettled(servers.map((s) => s.close()));
  });
  const harness = useTenantApp({ config: { allowedPrivateNetworks: LOOPBACK } });
  return {
    get app() {
      return harness.app;
    },
    get tenant() {
      return harness.tenant;
    },
    async server(options = {}) {
      const s = await startOAuthMcpServer(options);
      servers.push(s);
      return s;
    },
  };
}

export async function createOAuthConnection(
  world: OAuthWorld,
  serverUrl: string,
  extra: Record<string, unknown> = {},
): Promise<any> {
  const response = await api(world.app.url, world.tenant.admin.token).post('/v1/mcp-connections', {
    name: 'Files',
    url: serverUrl,
    authType: 'oauth',
    credentialMode: 'per_member',
    access: { orgWide: true },
    ...extra,
  });
  if (response.status !== 201) throw new Error(`create connection: ${response.status} ${response.text}`);
  return response.body;
}

/** The PUT body that keeps what `current` shows (the test then changes one thing). */
export function editBody(current: any) {
  return {
    name: current.name,
    url: current.url,
    authType: current.authType,
    credentialMode: current.credentialMode,
    access: { orgWide: true },
    expectedUpdatedAt: current.updatedAt,
  };
}

export async function startAuthorization(
  world: OAuthWorld,
  user: TestUser,
  connectionId: string,
): Promise<ApiResponse> {
  return api(world.app.url, user.token).post(`/v1/mcp-connections/${connectionId}/oauth/authorize`);
}

/**
 * The Cookie header of the browser that made this authorize call: the binding cookie its response
 * set (what a browser would send back to the callback). Fails when none was set.
 */
export function browserOf(authorize: ApiResponse, extra: Record<string, string> = {}): Record<string, string> {
  const set = authorize.headers.get('set-cookie');
  const pair = set?.split(';')[0];
  if (!pair?.startsWith('orgplane_mcp_oauth=')) throw new Error(`authorize set no binding cookie: ${set}`);
  return { cookie: pair, ...extra };
}

/** authorize -> the server approves -> the browser lands on our callback; returns each step. */
export async function connectThroughOAuth(world: OAuthWorld, user: TestUser, connectionId: string) {
  const authorize = await startAuthorization(world, user, connectionId);
  if (authorize.status !== 200) throw new Error(`authorize: ${authorize.status} ${authorize.text}`);
  const redirect = await followAuthorization(authorize.body.authorizationUrl);
  const callback = await api(world.app.url).get(`${redirect.pathname}${redirect.search}`, {
    headers: browserOf(authorize),
  });
  return { authorize, redirect, callback };
}

export async function getConnection(world: OAuthWorld, user: TestUser, connectionId: string): Promise<any> {
  const response = await api(world.app.url, user.token).get(`/v1/mcp-connections/${connectionId}`);
  if (response.status !== 200) throw new Error(`get connection: ${response.status} ${response.text}`);
  return response.body;
}
