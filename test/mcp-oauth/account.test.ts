// externalAccountId and tenantId of an OAuth connection: what the provider's token response says of
// the account (its ID token's sub and tid, or its own user_id / account_id / tenant_id fields), for
// the credential the caller would use; null when the provider names nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { providerAccountOf } from '../../src/modules/mcp-connections/oauth/account.ts';
import { connectThroughOAuth, createOAuthConnection, getConnection, useOAuthWorld } from './helpers.ts';

const world = useOAuthWorld();

test('an ID token in the token response: externalAccountId is its sub, tenantId its tid', async () => {
  const s = await world.server({ idTokenClaims: { sub: 'user-42', tid: 'tenant-7' } });
  const connection = await createOAuthConnection(world, s.url);
  const before = await getConnection(world, world.tenant.member, connection.id);
  assert.equal(before.externalAccountId, null);
  assert.equal(before.tenantId, null);
  assert.deepEqual(before.grantedScopes, []);
  assert.equal((await connectThroughOAuth(world, world.tenant.member, connection.id)).callback.status, 200);
  const seen = await getConnection(world, world.tenant.member, connection.id);
  assert.equal(seen.externalAccountId, 'user-42');
  assert.equal(seen.tenantId, 'tenant-7');
  // Per member: another member, not connected, sees none of it.
  const admin = await getConnection(world, world.tenant.admin, connection.id);
  assert.equal(admin.externalAccountId, null);
  assert.equal(admin.tenantId, null);
});

test('provider fields instead of an ID token (user_id, tenant_id); a provider that names nothing leaves both null', async () => {
  const s = await world.server({ tokenResponseExtras: { user_id: 'U123', tenant_id: 'T9' } });
  const connection = await createOAuthConnection(world, s.url, { credentialMode: 'shared' });
  await connectThroughOAuth(world, world.tenant.admin, connection.id);
  const seen = await getConnection(world, world.tenant.member, connection.id);
  assert.equal(seen.externalAccountId, 'U123', "the shared identity's account, for every member");
  assert.equal(seen.tenantId, 'T9');

  const plain = await world.server();
  const other = await createOAuthConnection(world, plain.url, { name: 'Plain' });
  await connectThroughOAuth(world, world.tenant.member, other.id);
  const none = await getConnection(world, world.tenant.member, other.id);
  assert.equal(none.connectedForMe, true);
  assert.equal(none.externalAccountId, null);
  assert.equal(none.tenantId, null);
});

test('a refresh that names no account keeps what the authorization named', async () => {
  const s = await world.server({ accessTokenTtlSeconds: 30, idTokenClaims: { sub: 'kept-sub', tid: 'kept-tid' } });
  const connection = await createOAuthConnection(world, s.url);
  await connectThroughOAuth(world, world.tenant.member, connection.id);
  // From now on the server's token responses carry no ID token.
  delete s.options.idTokenClaims;
  const refreshed = await world.app.app.mcpOAuth.accessToken(
    world.tenant.orgId,
    connection.id,
    world.tenant.member.memberId,
  );
  assert.ok(refreshed.status === 'ok' && refreshed.refreshed, JSON.stringify(refreshed));
  const seen = await getConnection(world, world.tenant.member, connection.id);
  assert.equal(seen.externalAccountId, 'kept-sub');
  assert.equal(seen.tenantId, 'kept-tid');
});

test('hostile or malformed values are not stored: non-strings, over-long ids, an ID token that is not JSON', () => {
  assert.deepEqual(providerAccountOf({ user_id: 42, tenant_id: { x: 1 } }), {
    externalAccountId: null,
    tenantId: null,
  });
  assert.deepEqual(providerAccountOf({ account_id: 'a'.repeat(513) }), { externalAccountId: null, tenantId: null });
  assert.deepEqual(providerAccountOf({ id_token: 'a.!!!.c', account_id: 'acc' }), {
    externalAccountId: 'acc',
    tenantId: null,
  });
  assert.deepEqual(providerAccountOf({ id_token: `x.${Buffer.from('[1]').toString('base64url')}.y` }), {
    externalAccountId: null,
    tenantId: null,
  });
  assert.deepEqual(providerAccountOf(null), { externalAccountId: null, tenantId: null });
});
