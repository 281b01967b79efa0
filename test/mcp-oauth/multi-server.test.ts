// Two orgplane servers on one database (separate connection pools, so separate database
// sessions), racing each other:
//  - refresh is single-flight per credential: asked concurrently for a token that must be
//    refreshed, they cause exactly one refresh at the authorization server, and all get the new
//    token (with rotating refresh tokens a second refresh would use a dead refresh token and fail,
//    so this also proves nobody refreshed with a stale one);
//  - dynamic registration happens once per connection, however many first authorizations race.
import { test, describe, before, after } from 'node:test';
import type { TestApp } from '../support/app.ts';
import assert from 'node:assert/strict';
import { startTestApp } from '../support/app.ts';
import { api } from '../support/http.ts';
import { connectThroughOAuth, createOAuthConnection, getConnection, useOAuthWorld } from './helpers.ts';
import { listToolsWith } from './mcp-client.ts';

const cleanups: Array<() => Promise<void>> = [];
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

const world = useOAuthWorld();
// In a suite: its before runs once the world (a root-level hook) is up, which the second server needs.
describe('two servers of one deployment on one database', () => {
  let second: TestApp;
  before(async () => {
    // Processes of one deployment share PUBLIC_URL (and so the callback URLs registered with servers).
    second = await startTestApp(
      { allowedPrivateNetworks: ['127.0.0.0/8', '::1/128'], publicUrl: world.app.config.publicUrl },
      { shareDatabaseWith: world.app },
    );
    cleanups.push(() => second.close());
  });

  test('concurrent refreshes of one credential from two servers: one refresh, one token for all', async () => {
    const s = await world.server({ accessTokenTtlSeconds: 3600, rotateRefreshTokens: true });
    const connection = await createOAuthConnection(world, s.url, { credentialMode: 'shared' });
    await connectThroughOAuth(world, world.tenant.admin, connection.id);
    // Time passes: the stored access token is now about to expire.
    await world.app.db.query(
      `UPDATE mcp_connection_credentials SET expires_at = now() + interval '5 seconds' WHERE connection_id = $1`,
      [connection.id],
    );

    const services = [world.app.app.mcpOAuth, second.app.mcpOAuth];
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => services[i % 2]!.accessToken(world.tenant.orgId, connection.id, null)),
    );
    assert.ok(
      results.every((r) => r.status === 'ok'),
      JSON.stringify(results.map((r) => r.status)),
    );
    const tokens = new Set(results.map((r) => (r as { accessToken: string }).accessToken));
    assert.equal(tokens.size, 1, 'everyone got the one refreshed token');
    assert.equal(results.filter((r) => r.status === 'ok' && r.refreshed).length, 1);
    const refreshes = s.stats.tokenRequests.filter((r) => r.grantType === 'refresh_token');
    assert.equal(refreshes.length, 1, 'exactly one refresh reached the authorization server');
    assert.equal(refreshes[0]!.outcome, 'issued');
    assert.deepEqual(await listToolsWith(s.url, [...tokens][0]!), ['whoami']);
    assert.equal((await getConnection(world, world.tenant.member, connection.id)).credentialHealth, 'ready');
  });

  test('concurrent first authorizations on two servers register one client, which every member then uses', async () => {
    // Registration is slow here, so the racing authorizations overlap while one registers.
    const s = await world.server({ registrationDelayMs: 300 });
    const connection = await createOAuthConnection(world, s.url);
    const { owner, admin, member } = world.tenant;
    const bases = [world.app.url, second.url];
    const starts = await Promise.all(
      [owner, admin, member, member].map((user, i) =>
        api(bases[i % 2]!, user.token).post(`/v1/mcp-connections/${connection.id}/oauth/authorize`),
      ),
    );
    assert.deepEqual(
      starts.map((r) => r.status),
      [200, 200, 200, 200],
    );
    assert.equal(s.stats.registrations.length, 1);
    const clientIds = new Set(starts.map((r) => new URL(r.body.authorizationUrl).searchParams.get('client_id')));
    assert.equal(clientIds.size, 1);
  });
});
