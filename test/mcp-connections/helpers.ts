// Shared setup for the MCP-connection route tests: the real app (outbound calls allowed to
// loopback, where the tests' MCP servers listen), a tenant, and small helpers.

import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../support/app.ts';
import { createTenant, type Tenant } from '../support/fixtures.ts';
import { api } from '../support/http.ts';

export const LOOPBACK = ['127.0.0.0/8', '::1/128'];

export async function startMcpApp(options: { shareDatabaseWith?: TestApp } = {}): Promise<TestApp> {
  return startTestApp(
    { allowedPrivateNetworks: LOOPBACK },
    options.shareDatabaseWith ? { shareDatabaseWith: options.shareDatabaseWith } : {},
  );
}

export async function setup(): Promise<{ app: TestApp; tenant: Tenant }> {
  const app = await startMcpApp();
  const tenant = await createTenant(app.url);
  return { app, tenant };
}

export function connectionBody(url: string, overrides: Record<string, unknown> = {}) {
  return {
    name: 'Docs server',
    url,
    authType: 'none',
    credentialMode: 'shared',
    access: { orgWide: true },
    ...overrides,
  };
}

/** Creates a connection as `token` and returns its body (asserting 201). */
export async function createConnection(baseUrl: string, token: string, body: Record<string, unknown>) {
  const response = await api(baseUrl, token).post('/v1/mcp-connections', body);
  assert.equal(response.status, 201, response.text);
  return response.body;
}

/** Rows of the credential table for a connection, straight from the database. */
export async function credentialRows(app: TestApp, connectionId: string) {
  const { rows } = await app.db.query<{ memberId: string | null; kind: string; secretSealed: string }>(
    `SELECT member_id AS "memberId", kind, secret_sealed AS "secretSealed" FROM mcp_connection_credentials WHERE connection_id = $1 ORDER BY member_id NULLS FIRST`,
    [connectionId],
  );
  return rows;
}

export { api };
