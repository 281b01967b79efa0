// OAuth tokens are revoked at the authorization server (RFC 7009) when orgplane forgets them without
// the person asking: the connection deleted, its identity changed by an edit, the member removed. Best effort: a server that cannot
// be reached is logged (never the token) and the deletion stands.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { addMember, signUp, type TestUser } from '../support/fixtures.ts';
import { api } from '../support/http.ts';
import type { OAuthMcpServer } from '../support/oauth-mcp-server/index.ts';
import { connectThroughOAuth, createOAuthConnection, editBody, useOAuthWorld } from './helpers.ts';

const world = useOAuthWorld();
const owner = () => api(world.app.url, world.tenant.owner.token);

async function newMember(label: string): Promise<TestUser> {
  const user = await signUp(world.app.url, label);
  await addMember(world.app.url, world.tenant.owner, world.tenant.orgId, user, 'member');
  return user;
}

/** The stored access token, as the module hands it to its callers. */
async function storedToken(connectionId: string, memberId: string | null): Promise<string> {
  const result = await world.app.app.mcpOAuth.accessToken(world.tenant.orgId, connectionId, memberId);
  assert.equal(result.status, 'ok', JSON.stringify(result));
  return (result as { accessToken: string }).accessToken;
}

/** What the MCP server answers a request carrying this token (401 once it is revoked). */
async function resourceStatus(server: OAuthMcpServer, token: string): Promise<number> {
  const response = await fetch(server.url, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
  });
  await response.body?.cancel();
  return response.status;
}

test("deleting a connection revokes every stored token of it (shared and each member's): access and refresh tokens", async () => {
  const s = await world.server();
  const connection = await createOAuthConnection(world, s.url);
  const { member, admin } = world.tenant;
  assert.equal((await connectThroughOAuth(world, member, connection.id)).callback.status, 200);
  assert.equal((await connectThroughOAuth(world, admin, connection.id)).callback.status, 200);
  const tokens = [await storedToken(connection.id, member.memberId), await storedToken(connection.id, admin.memberId)];
  for (const token of tokens) assert.notEqual(await resourceStatus(s, token), 401, 'usable before');

  const deleted = await api(world.app.url, admin.token).delete(`/v1/mcp-connections/${connection.id}`);
  assert.equal(deleted.status, 204, deleted.text);
  assert.deepEqual(s.stats.revocations.map((r) => r.kind).sort(), [
    'access_token',
    'access_token',
    'refresh_token',
    'refresh_token',
  ]);
  for (const token of tokens) assert.equal(await resourceStatus(s, token), 401, 'dead at the server');
});

test("an edit that changes the connection's identity revokes the old identity's tokens; an edit of its name revokes nothing", async () => {
  const s = await world.server();
  const connection = await createOAuthConnection(world, s.url);
  const { member, admin } = world.tenant;
  assert.equal((await connectThroughOAuth(world, member, connection.id)).callback.status, 200);
  const token = await storedToken(connection.id, member.memberId);
  const edit = api(world.app.url, admin.token);

  const renamed = await edit.put(`/v1/mcp-connections/${connection.id}`, {
    ...editBody(connection),
    name: 'Files (renamed)',
  });
  assert.equal(renamed.status, 200, renamed.text);
  assert.equal(renamed.body.identityChanged, false);
  assert.equal(s.stats.revocations.length, 0, 'a name is not the identity');
  assert.notEqual(await resourceStatus(s, token), 401, 'still usable');

  const other = await world.server();
  const moved = await edit.put(`/v1/mcp-connections/${connection.id}`, { ...editBody(renamed.body), url: other.url });
  assert.equal(moved.status, 200, moved.text);
  assert.equal(moved.body.identityChanged, true);
  assert.deepEqual(
    s.stats.revocations.map((r) => r.kind).sort(),
    ['access_token', 'refresh_token'],
    "revoked at the old identity's server",
  );
  assert.equal(other.stats.revocations.length, 0, 'the new server is not told of tokens it never issued');
  assert.equal(await resourceStatus(s, token), 401, 'dead at the old server');
});

test('a connection of a dynamically registered client with a secret: the revocation authenticates as that client, although its row went with the connection', async () => {
  const s = await world.server();
  const connection = await createOAuthConnection(world, s.url, { credentialMode: 'shared' });
  assert.equal((await connectThroughOAuth(world, world.tenant.admin, connection.id)).callback.status, 200);
  const registered = s.stats.registrations[0]!;
  assert.ok(registered.client_secret, 'the registration issued a client secret');
  assert.equal(
    (await api(world.app.url, world.tenant.admin.token).delete(`/v1/mcp-connections/${connection.id}`)).status,
    204,
  );
  assert.ok(s.stats.revocations.length >= 1);
  assert.ok(
    s.stats.revocations.every((r) => r.clientId === registered.client_id && r.kind !== 'unknown'),
    JSON.stringify(s.stats.revocations),
  );
});

test("removing a member revokes their own tokens on every connection, and nobody else's", async () => {
  const s = await world.server();
  const first = await createOAuthConnection(world, s.url);
  const second = await createOAuthConnection(world, s.url, { name: 'Second' });
  const leaving = await newMember('leaving-with-tokens');
  const staying = world.tenant.member;
  for (const connection of [first, second])
    assert.equal((await connectThroughOAuth(world, leaving, connection.id)).callback.status, 200);
  assert.equal((await connectThroughOAuth(world, staying, first.id)).callback.status, 200);
  const leavingTokens = [await storedToken(first.id, leaving.memberId), await storedToken(second.id, leaving.memberId)];
  const stayingToken = await storedToken(first.id, staying.memberId);

  const removed = await owner().delete(`/v1/orgs/${world.tenant.orgId}/members/${leaving.memberId}`);
  assert.equal(removed.status, 204, removed.text);
  assert.equal(s.stats.revocations.length, 4, 'two connections, an access and a refresh token each');
  for (const token of leavingTokens) assert.equal(await resourceStatus(s, token), 401);
  assert.notEqual(await resourceStatus(s, stayingToken), 401, "another member's token untouched");
  assert.equal(await storedToken(first.id, staying.memberId), stayingToken);
});

test('a member who leaves by themselves: their tokens are revoked too', async () => {
  const s = await world.server();
  const connection = await createOAuthConnection(world, s.url);
  const leaving = await newMember('leaving-by-themselves');
  assert.equal((await connectThroughOAuth(world, leaving, connection.id)).callback.status, 200);
  const left = await api(world.app.url, leaving.token).delete(
    `/v1/orgs/${world.tenant.orgId}/members/${leaving.memberId}`,
  );
  assert.equal(left.status, 204, left.text);
  assert.equal(s.stats.revocations.length, 2);
});

test('the authorization server unreachable: the deletion and the removal still happen (204), the failure is logged without the token', async () => {
  const s = await world.server();
  const connection = await createOAuthConnection(world, s.url);
  const leaving = await newMember('leaving-while-server-down');
  assert.equal((await connectThroughOAuth(world, leaving, connection.id)).callback.status, 200);
  const other = await createOAuthConnection(world, s.url, { name: 'Other' });
  assert.equal((await connectThroughOAuth(world, world.tenant.member, other.id)).callback.status, 200);
  const tokens = [
    await storedToken(connection.id, leaving.memberId),
    await storedToken(other.id, world.tenant.member.memberId),
  ];
  await s.close();
  const logBefore = world.app.logText().length;

  const removed = await owner().delete(`/v1/orgs/${world.tenant.orgId}/members/${leaving.memberId}`);
  assert.equal(removed.status, 204, removed.text);
  const deleted = await api(world.app.url, world.tenant.admin.token).delete(`/v1/mcp-connections/${other.id}`);
  assert.equal(deleted.status, 204, deleted.text);
  assert.equal((await api(world.app.url, world.tenant.admin.token).get(`/v1/mcp-connections/${other.id}`)).status, 404);
  const { rows } = await world.app.db.query('SELECT count(*)::int AS n FROM members WHERE id = $1', [leaving.memberId]);
  assert.equal(rows[0].n, 0);
  const log = world.app.logText().slice(logBefore);
  assert.equal(log.split('MCP OAuth token revocation failed').length - 1, 2, log);
  for (const token of tokens) assert.ok(!log.includes(token), 'no token in the log');
});

test('an API-key connection deleted: nothing to revoke, no call to anyone', async () => {
  const s = await world.server();
  const created = await api(world.app.url, world.tenant.admin.token).post('/v1/mcp-connections', {
    name: 'Keyed',
    url: s.url,
    authType: 'apikey',
    credentialMode: 'per_member',
    access: { orgWide: true },
  });
  assert.equal(created.status, 201, created.text);
  const before = s.stats.metadataFetches.length;
  assert.equal(
    (await api(world.app.url, world.tenant.admin.token).delete(`/v1/mcp-connections/${created.body.id}`)).status,
    204,
  );
  assert.equal(s.stats.metadataFetches.length, before);
  assert.equal(s.stats.revocations.length, 0);
});

test("a member cannot delete a connection, and so cannot make anyone's tokens be revoked (403)", async () => {
  const s = await world.server();
  const connection = await createOAuthConnection(world, s.url);
  assert.equal((await connectThroughOAuth(world, world.tenant.admin, connection.id)).callback.status, 200);
  const refused = await api(world.app.url, world.tenant.member.token).delete(`/v1/mcp-connections/${connection.id}`);
  assert.equal(refused.status, 403, refused.text);
  const anonymous = await api(world.app.url).delete(`/v1/mcp-connections/${connection.id}`);
  assert.equal(anonymous.status, 401);
  assert.equal(s.stats.revocations.length, 0);
  assert.equal(
    (await world.app.app.mcpOAuth.accessToken(world.tenant.orgId, connection.id, world.tenant.admin.memberId)).status,
    'ok',
  );
});
