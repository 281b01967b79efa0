// MCP OAuth writes that race with removals: the member who authorizes removed or demoted while the
// authorization starts or while the code is exchanged, and the connection deleted while an
// authorization starts. Each was a 500 (a foreign key refused the pending authorization, the
// credential, the registered client or the flow state), or stored a shared credential for an admin
// demoted meanwhile. The moment is set without timing where it can be: a transaction holding rows
// (PostgreSQL) makes the request wait where the race lands, a trigger deletes the connection as the
// flow writes, a slow registration leaves the delete ample time.
import { test, describe, before } from 'node:test';
import assert from 'node:assert/strict';
import { testBackend } from '../support/app.ts';
import { addMember, signUp, type TestUser } from '../support/fixtures.ts';
import { holdLocks } from '../support/held-locks.ts';
import { api, type ApiResponse } from '../support/http.ts';
import type { OAuthMcpServer } from '../support/oauth-mcp-server/index.ts';
import { browserOf, createOAuthConnection, followAuthorization, startAuthorization, useOAuthWorld } from './helpers.ts';

const postgresOnly = { skip: testBackend !== 'postgres' && 'holding row locks needs PostgreSQL' };

const world = useOAuthWorld();
let s: OAuthMcpServer;
before(async () => {
  s = await world.server();
});

const owner = () => api(world.app.url, world.tenant.owner.token);

async function newMember(label: string, role: 'admin' | 'member' = 'member'): Promise<TestUser> {
  const user = await signUp(world.app.url, label);
  await addMember(world.app.url, world.tenant.owner, world.tenant.orgId, user, role);
  return user;
}

const remove = (user: TestUser) => owner().delete(`/v1/orgs/${world.tenant.orgId}/members/${user.memberId}`);
const setRole = (user: TestUser, role: 'admin' | 'member') =>
  owner().patch(`/v1/orgs/${world.tenant.orgId}/members/${user.memberId}`, { role });

async function count(table: string, connectionId: string, where = 'TRUE'): Promise<number> {
  const { rows } = await world.app.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM ${table} WHERE connection_id = $1 AND ${where}`,
    [connectionId],
  );
  return rows[0]!.n;
}

/** The same request again, now that the change is committed: what the route answers now. */
async function assertSameAsNow(again: Promise<ApiResponse>, response: ApiResponse, status: number, error: string) {
  const now = await again;
  assert.equal(now.status, status, now.text);
  assert.equal(now.body.error, error);
  assert.equal(response.status, now.status, response.text);
  assert.deepEqual(response.body, now.body);
}

/** authorize and approve; returns the callback path the browser would open, and the cookie it carries. */
async function approvedCallback(
  user: TestUser,
  connectionId: string,
): Promise<{ path: string; headers: Record<string, string> }> {
  const authorize = await startAuthorization(world, user, connectionId);
  assert.equal(authorize.status, 200, authorize.text);
  const redirect = await followAuthorization(authorize.body.authorizationUrl);
  return { path: `${redirect.pathname}${redirect.search}`, headers: browserOf(authorize) };
}

describe('the member who authorizes removed as the authorization starts', () => {
  test(
    'removal in progress as the pending authorization is written: it waits, then 403 forbidden like any non-member, nothing written',
    postgresOnly,
    async () => {
      const connection = await createOAuthConnection(world, s.url);
      const doomed = await newMember('doomed-authorizer');
      // The removal, uncommitted: the request is authenticated as a member, runs discovery, then its write waits for the member row.
      const removing = await holdLocks(world.app, 'DELETE FROM members WHERE id = $1', [doomed.memberId]);
      const authorizing = startAuthorization(world, doomed, connection.id);
      await removing.waitForBlocked(1);
      await removing.release();
      const response = await authorizing;
      assert.equal(response.status, 403, response.text);
      assert.equal(await count('mcp_oauth_pending_authorizations', connection.id), 0, 'nothing written');
      await assertSameAsNow(startAuthorization(world, doomed, connection.id), response, 403, 'forbidden');
    },
  );

  test('authorize and removal fired together: never a 5xx', async () => {
    const connection = await createOAuthConnection(world, s.url);
    for (let round = 0; round < 6; round++) {
      const racer = await newMember(`racing-authorizer-${round}`);
      const [authorized, removed] = await Promise.all([startAuthorization(world, racer, connection.id), remove(racer)]);
      assert.equal(removed.status, 204, removed.text);
      assert.ok(authorized.status === 200 || authorized.status === 403, authorized.text);
    }
  });
});

describe('the member who authorized removed or demoted during the code exchange', () => {
  test('removed: 403 forbidden, nothing stored', postgresOnly, async () => {
    const connection = await createOAuthConnection(world, s.url);
    const doomed = await newMember('doomed-at-callback');
    const callbackPath = await approvedCallback(doomed, connection.id);
    // Holds the connection row: the callback claims its state, checks the member, exchanges the code, then waits to write.
    const holding = await holdLocks(world.app, 'SELECT 1 FROM mcp_connections WHERE id = $1 FOR UPDATE', [
      connection.id,
    ]);
    const callingBack = api(world.app.url).get(callbackPath.path, { headers: callbackPath.headers });
    await holding.waitForBlocked(1);
    const removed = await remove(doomed);
    assert.equal(removed.status, 204, removed.text);
    await holding.release();
    const response = await callingBack;
    assert.equal(response.status, 403, response.text);
    assert.equal(response.body.error, 'forbidden');
    assert.equal(s.stats.tokenRequests.at(-1)?.grantType, 'authorization_code', 'the code was exchanged');
    assert.equal(await count('mcp_connection_credentials', connection.id), 0, 'nothing stored');
  });

  test(
    'an admin demoted while connecting the shared identity: 403 forbidden as for a demotion before the callback, nothing stored',
    postgresOnly,
    async () => {
      const connection = await createOAuthConnection(world, s.url, { credentialMode: 'shared' });
      const demoted = await newMember('demoted-at-callback', 'admin');
      const callbackPath = await approvedCallback(demoted, connection.id);
      const holding = await holdLocks(world.app, 'SELECT 1 FROM mcp_connections WHERE id = $1 FOR UPDATE', [
        connection.id,
      ]);
      const callingBack = api(world.app.url).get(callbackPath.path, { headers: callbackPath.headers });
      await holding.waitForBlocked(1);
      assert.equal((await setRole(demoted, 'member')).status, 200);
      await holding.release();
      const response = await callingBack;
      assert.equal(response.status, 403, response.text);
      assert.equal(await count('mcp_connection_credentials', connection.id), 0, 'no shared credential');

      // The same authorization with the demotion committed before the callback.
      assert.equal((await setRole(demoted, 'admin')).status, 200);
      const again = await approvedCallback(demoted, connection.id);
      assert.equal((await setRole(demoted, 'member')).status, 200);
      await assertSameAsNow(api(world.app.url).get(again.path, { headers: again.headers }), response, 403, 'forbidden');
      assert.equal(await count('mcp_connection_credentials', connection.id), 0, 'no shared credential');
    },
  );

  test('callback and removal fired together: never a 5xx, never a credential of a non-member', async () => {
    const connection = await createOAuthConnection(world, s.url);
    for (let round = 0; round < 6; round++) {
      const racer = await newMember(`racing-callback-${round}`);
      const callbackPath = await approvedCallback(racer, connection.id);
      const [calledBack, removed] = await Promise.all([
        api(world.app.url).get(callbackPath.path, { headers: callbackPath.headers }),
        remove(racer),
      ]);
      assert.equal(removed.status, 204, removed.text);
      // 200 stored before the removal (which takes it away), 400 the removal took the pending authorization first, 403 in between.
      assert.ok([200, 400, 403].includes(calledBack.status), calledBack.text);
    }
    assert.equal(await count('mcp_connection_credentials', connection.id), 0);
  });
});

describe('the connection deleted as an authorization starts', () => {
  before(async () => {
    // Deletes a connection named 'Doomed' when the flow records its state (after the client is
    // obtained, before the pending authorization is written).
    await world.app.db.query(`
      CREATE FUNCTION test_delete_doomed_oauth_connection() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM mcp_connections WHERE id = NEW.connection_id AND name = 'Doomed';
        RETURN NULL;
      END $$`);
    await world.app.db.query(`CREATE TRIGGER test_doomed_oauth_state AFTER INSERT OR UPDATE ON mcp_oauth_connection_state
      FOR EACH ROW EXECUTE FUNCTION test_delete_doomed_oauth_connection()`);
  });

  /** Deletes the connection in a transaction left open, starts an authorization, lets the delete commit. */
  async function authorizeWhileDeleting(connectionId: string): Promise<ApiResponse> {
    const deleting = await holdLocks(world.app, 'DELETE FROM mcp_connections WHERE id = $1', [connectionId]);
    const authorizing = startAuthorization(world, world.tenant.member, connectionId);
    await deleting.waitForBlocked(1);
    await deleting.release();
    return authorizing;
  }

  test('deleted as the dynamically registered client is saved: 404 connection_not_found', postgresOnly, async () => {
    const dynamic = await world.server();
    const connection = await createOAuthConnection(world, dynamic.url);
    const response = await authorizeWhileDeleting(connection.id);
    assert.equal(response.status, 404, response.text);
    assert.equal(dynamic.stats.registrations.length, 1, 'it waited after registering');
    await assertSameAsNow(
      startAuthorization(world, world.tenant.member, connection.id),
      response,
      404,
      'connection_not_found',
    );
  });

  test('deleted as the flow state is recorded: 404 connection_not_found', postgresOnly, async () => {
    const preRegistered = await world.server({
      dynamicRegistration: false,
      clients: [{ clientId: 'race-client', redirectUris: [], tokenEndpointAuthMethod: 'none' }],
    });
    const connection = await createOAuthConnection(world, preRegistered.url, {
      oauthClient: { clientId: 'race-client' },
    });
    const response = await authorizeWhileDeleting(connection.id);
    assert.equal(response.status, 404, response.text);
    assert.equal(preRegistered.stats.registrations.length, 0);
    await assertSameAsNow(
      startAuthorization(world, world.tenant.member, connection.id),
      response,
      404,
      'connection_not_found',
    );
  });

  test('deleted just before the pending authorization is written: 404 connection_not_found, not a 500', async () => {
    const connection = await createOAuthConnection(world, s.url, { name: 'Doomed' });
    const response = await startAuthorization(world, world.tenant.member, connection.id);
    assert.equal(response.status, 404, response.text);
    assert.equal(response.body.error, 'connection_not_found');
    assert.equal(
      (await world.app.db.query('SELECT id FROM mcp_connections WHERE id = $1', [connection.id])).rows.length,
      0,
      'the deletion did happen',
    );
  });

  test('deleted while the client is being registered: 404 connection_not_found, not a 500', async () => {
    const slow = await world.server({ registrationDelayMs: 200 });
    const connection = await createOAuthConnection(world, slow.url);
    const authorizing = startAuthorization(world, world.tenant.member, connection.id);
    while (slow.stats.metadataFetches.length === 0) await new Promise((resolve) => setTimeout(resolve, 2));
    // Discovery has begun, and registering takes 200 ms: the delete commits before the client is saved.
    const deleted = await api(world.app.url, world.tenant.admin.token).delete(`/v1/mcp-connections/${connection.id}`);
    assert.equal(deleted.status, 204, deleted.text);
    const response = await authorizing;
    assert.equal(response.status, 404, response.text);
    await assertSameAsNow(
      startAuthorization(world, world.tenant.member, connection.id),
      response,
      404,
      'connection_not_found',
    );
  });
});
