import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { TestApp } from '../support/app.ts';
import type { Tenant } from '../support/fixtures.ts';
import { startLegacySseServer, startStreamableServer, type RunningServer } from '../support/mcp-servers.ts';
import { api, connectionBody, createConnection, credentialRows, setup } from './helpers.ts';

let app: TestApp;
let tenant: Tenant;
let open: RunningServer; // no auth
let keyed: RunningServer; // demands Bearer key-1
let keyed2: RunningServer; // demands Bearer key-2
let legacy: RunningServer;

before(async () => {
  ({ app, tenant } = await setup());
  [open, keyed, keyed2, legacy] = await Promise.all([
    startStreamableServer({ tools: ['search'] }),
    startStreamableServer({ apiKey: 'key-1', stateful: true }),
    startStreamableServer({ apiKey: 'key-2' }),
    startLegacySseServer(),
  ]);
});

after(async () => {
  await Promise.all([open, keyed, keyed2, legacy].map((server) => server.close()));
  await app.close();
});

const admin = () => api(app.url, tenant.admin.token);

function editBody(connection: Record<string, any>, overrides: Record<string, unknown> = {}) {
  return {
    expectedUpdatedAt: connection.updatedAt,
    name: connection.name,
    url: connection.url,
    authType: connection.authType,
    credentialMode: connection.credentialMode,
    access: connection.access ?? { orgWide: true },
    ...overrides,
  };
}

describe('create, read, list, delete', () => {
  test('a no-auth server is probed and created with the computed fields', async () => {
    const created = await createConnection(app.url, tenant.owner.token, connectionBody(open.url));
    assert.match(created.id, /^emc_[0-9a-z]{26}$/);
    assert.equal(created.id.length, 30);
    assert.equal(created.connected, true);
    assert.equal(created.connectedForMe, true);
    assert.equal(created.credentialHealth, 'ready');
    assert.equal(created.needsReconnect, false);
    assert.deepEqual(created.access, { orgWide: true, memberIds: [], teamIds: [] });
    assert.deepEqual(created.requiredBy, []);
    assert.equal(created.createdByName, tenant.owner.name);
    assert.match(created.updatedAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.ok(open.requests.length > 0, 'the server was really probed');

    const fetched = await admin().get(`/v1/mcp-connections/${created.id}`);
    assert.equal(fetched.status, 200);
    assert.deepEqual(fetched.body, created);
  });

  test('a legacy SSE server is accepted', async () => {
    const created = await createConnection(app.url, tenant.admin.token, connectionBody(legacy.url, { name: 'Legacy' }));
    assert.equal(created.connected, true);
  });

  test('an API-key server stores the key encrypted, never returns it', async () => {
    const response = await admin().post(
      '/v1/mcp-connections',
      connectionBody(keyed.url, { authType: 'apikey', apiKey: 'key-1' }),
    );
    assert.equal(response.status, 201, response.text);
    assert.ok(!response.text.includes('key-1'));
    assert.equal(response.body.connected, true);
    assert.equal(response.body.credentialHealth, 'ready');
    const rows = await credentialRows(app, response.body.id);
    assert.equal(rows.length, 1);
    assert.equal(rows[0]!.memberId, null);
    assert.match(rows[0]!.secretSealed, /^v1:/);
    assert.ok(!rows[0]!.secretSealed.includes('key-1'));
  });

  test('members list only the connections they may use; admins list all, paged', async () => {
    const privateOne = await createConnection(
      app.url,
      tenant.admin.token,
      connectionBody(open.url, { name: 'Private', access: { orgWide: false } }),
    );
    const granted = await createConnection(
      app.url,
      tenant.admin.token,
      connectionBody(open.url, { name: 'For member', access: { orgWide: false, memberIds: [tenant.member.memberId] } }),
    );
    const asMember = await api(app.url, tenant.member.token).get('/v1/mcp-connections?limit=100');
    assert.equal(asMember.status, 200);
    const memberIds = asMember.body.connections.map((c: { id: string }) => c.id);
    assert.ok(memberIds.includes(granted.id));
    assert.ok(!memberIds.includes(privateOne.id));
    assert.ok(
      asMember.body.connections.every((c: { access: unknown }) => c.access === null),
      'members do not see access lists',
    );
    assert.equal((await api(app.url, tenant.member.token).get(`/v1/mcp-connections/${privateOne.id}`)).status, 404);

    const all: string[] = [];
    let cursor: string | null = null;
    do {
      const page: any = await admin().get(`/v1/mcp-connections?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      assert.equal(page.status, 200);
      all.push(...page.body.connections.map((c: { id: string }) => c.id));
      cursor = page.body.nextCursor;
    } while (cursor);
    assert.ok(all.includes(privateOne.id) && all.includes(granted.id));
    assert.equal(new Set(all).size, all.length);
  });

  test('delete removes the connection and its credentials', async () => {
    const created = await createConnection(
      app.url,
      tenant.admin.token,
      connectionBody(keyed2.url, { authType: 'apikey', apiKey: 'key-2' }),
    );
    const deleted = await admin().delete(`/v1/mcp-connections/${created.id}`);
    assert.equal(deleted.status, 204);
    assert.equal((await admin().get(`/v1/mcp-connections/${created.id}`)).status, 404);
    assert.equal((await credentialRows(app, created.id)).length, 0);
  });
});

describe('edit (spec operation 1)', () => {
  test('a name and access edit keeps every credential and is not probed', async () => {
    const created = await createConnection(
      app.url,
      tenant.admin.token,
      connectionBody(keyed.url, { authType: 'apikey', apiKey: 'key-1' }),
    );
    const before = keyed.requests.length;
    const edited = await admin().put(
      `/v1/mcp-connections/${created.id}`,
      editBody(created, {
        name: 'Renamed',
        access: { orgWide: false, memberIds: [tenant.member.memberId], teamIds: [] },
      }),
    );
    assert.equal(edited.status, 200, edited.text);
    assert.equal(edited.body.name, 'Renamed');
    assert.equal(edited.body.identityChanged, false);
    assert.equal(edited.body.reconnectionRequired, false);
    assert.equal(edited.body.connected, true);
    assert.deepEqual(edited.body.access, { orgWide: false, memberIds: [tenant.member.memberId], teamIds: [] });
    assert.ok(edited.body.updatedAt > created.updatedAt);
    assert.equal(keyed.requests.length, before, 'no probe for a name/access edit');
    assert.equal((await credentialRows(app, created.id)).length, 1);
  });

  test('changing the url deletes the stored key; a supplied key replaces it after a probe', async () => {
    const created = await createConnection(
      app.url,
      tenant.admin.token,
      connectionBody(keyed.url, { authType: 'apikey', apiKey: 'key-1' }),
    );
    const sealedBefore = (await credentialRows(app, created.id))[0]!.secretSealed;
    const edited = await admin().put(
      `/v1/mcp-connections/${created.id}`,
      editBody(created, { url: keyed2.url, apiKey: 'key-2' }),
    );
    assert.equal(edited.status, 200, edited.text);
    assert.equal(edited.body.identityChanged, true);
    assert.equal(edited.body.reconnectionRequired, false, 'the new shared key came with the edit');
    assert.equal(edited.body.connected, true);
    assert.ok(!edited.text.includes('key-2'));
    const rows = await credentialRows(app, created.id);
    assert.equal(rows.length, 1);
    assert.notEqual(rows[0]!.secretSealed, sealedBefore);
  });

  test('an identity change deletes every member credential too (per-member API keys)', async () => {
    const created = await createConnection(
      app.url,
      tenant.admin.token,
      connectionBody(keyed.url, { authType: 'apikey', credentialMode: 'per_member', apiKey: 'key-1' }),
    );
    assert.equal(created.connectedForMe, true, "the admin's own key");
    assert.equal(created.reconnectActionOwner, null);
    // The owner has no key of their own on this per-member connection.
    const asOwner = await api(app.url, tenant.owner.token).get(`/v1/mcp-connections/${created.id}`);
    assert.equal(asOwner.body.connected, true);
    assert.equal(asOwner.body.connectedForMe, false);
    assert.equal(asOwner.body.needsReconnect, true);
    assert.equal(asOwner.body.reconnectActionOwner, 'member');

    const edited = await admin().put(
      `/v1/mcp-connections/${created.id}`,
      editBody(created, { credentialMode: 'shared', apiKey: 'key-1' }),
    );
    assert.equal(edited.status, 200, edited.text);
    assert.equal(edited.body.identityChanged, true);
    const rows = await credentialRows(app, created.id);
    assert.deepEqual(
      rows.map((row) => row.memberId),
      [null],
      'the member key is gone, the new shared key stored',
    );
  });

  test('switching to OAuth requires reconnection and reports the OAuth fields', async () => {
    const created = await createConnection(
      app.url,
      tenant.admin.token,
      connectionBody(keyed.url, { authType: 'apikey', apiKey: 'key-1' }),
    );
    const edited = await admin().put(
      `/v1/mcp-connections/${created.id}`,
      editBody(created, {
        authType: 'oauth',
        oauthClient: { clientId: 'client-abc', clientSecret: 'very-secret-client-secret' },
        requestedScopes: ['read', 'write', 'read'],
        authorizationServerIssuer: 'https://auth.example.com',
      }),
    );
    assert.equal(edited.status, 200, edited.text);
    const body = edited.body;
    assert.equal(body.identityChanged, true);
    assert.equal(body.reconnectionRequired, true);
    assert.equal(body.connected, false);
    assert.equal(body.needsReconnect, true);
    assert.equal(body.reconnectActionOwner, 'organization_admin');
    assert.equal(body.oauthClientConfigured, true);
    assert.equal(body.oauthClientId, 'client-abc');
    assert.equal(body.oauthRegistrationSource, 'pre-registered');
    assert.equal(body.oauthCallbackMode, 'isolated-v1');
    assert.equal(body.oauthCallbackUrl, `${app.url}/v1/mcp-connections/${created.id}/oauth/callback`);
    assert.equal(body.oauthSharedCallbackUrl, `${app.url}/v1/mcp-connections/oauth/callback`);
    assert.equal(body.oauthClientMetadataUrl, `${app.url}/oauth/client-metadata.json`);
    assert.equal(body.setupRequired, false);
    assert.deepEqual(body.requestedScopes, ['read', 'write']);
    assert.equal(body.authorizationServerIssuer, 'https://auth.example.com');
    assert.ok(!edited.text.includes('very-secret-client-secret'));
    assert.equal((await credentialRows(app, created.id)).length, 0);
  });

  test('OAuth credentials of every member and pending authorizations go with an identity change, not with a rename', async (t) => {
    const pendingTable = (
      await app.db.query<{ t: string | null }>(`SELECT to_regclass('mcp_oauth_pending_authorizations')::text AS t`)
    ).rows[0]!.t;
    if (!pendingTable) {
      t.skip('the OAuth module (migration 0200) is not in this tree');
      return;
    }
    const created = await createConnection(
      app.url,
      tenant.admin.token,
      connectionBody('https://mcp.oauth.example/mcp', { authType: 'oauth', credentialMode: 'per_member' }),
    );
    const { rows } = await app.db.query<{ fp: string }>(
      'SELECT identity_fingerprint AS fp FROM mcp_connections WHERE id = $1',
      [created.id],
    );
    const fingerprint = rows[0]!.fp;
    for (const [index, memberId] of [tenant.admin.memberId, tenant.member.memberId].entries()) {
      await app.db.query(
        `INSERT INTO mcp_connection_credentials (id, organization_id, connection_id, member_id, kind, identity_fingerprint, secret_sealed)
         VALUES ($1, $2, $3, $4, 'oauth', $5, 'v1:placeholder')`,
        [`emcc_test_${index}_${Date.now()}`, tenant.orgId, created.id, memberId, fingerprint],
      );
    }
    const pending = () =>
      app.db.query(
        `INSERT INTO mcp_oauth_pending_authorizations (id, organization_id, connection_id, identity_fingerprint, member_id, subject, callback_mode,
           redirect_uri, issuer, iss_parameter_supported, token_endpoint, resource, scopes, registration_source, client_id, code_verifier_sealed, expires_at,
           browser_binding_hash)
         VALUES ($1, $2, $3, $4, $5, 'member', 'isolated-v1', 'https://x/cb', 'https://auth.example', true, 'https://auth.example/token',
           'https://mcp.oauth.example/mcp', '[]', 'dynamic', 'client', 'v1:placeholder', now() + interval '10 minutes', repeat('0', 64))`,
        [`pend_${Date.now()}_${Math.random()}`, tenant.orgId, created.id, fingerprint, tenant.member.memberId],
      );
    await pending();
    const counts = async () => ({
      credentials: (await credentialRows(app, created.id)).length,
      pending: (
        await app.db.query('SELECT 1 FROM mcp_oauth_pending_authorizations WHERE connection_id = $1', [created.id])
      ).rows.length,
    });

    const renamed = await admin().put(
      `/v1/mcp-connections/${created.id}`,
      editBody(created, { name: 'Renamed OAuth' }),
    );
    assert.equal(renamed.status, 200, renamed.text);
    assert.equal(renamed.body.connectedForMe, true, "the admin's own OAuth credential");
    assert.deepEqual(await counts(), { credentials: 2, pending: 1 });

    const moved = await admin().put(
      `/v1/mcp-connections/${created.id}`,
      editBody(renamed.body, { url: 'https://mcp.oauth.example/v2/mcp' }),
    );
    assert.equal(moved.status, 200, moved.text);
    assert.equal(moved.body.identityChanged, true);
    assert.equal(moved.body.reconnectionRequired, true);
    assert.equal(moved.body.connectedForMe, false);
    assert.deepEqual(await counts(), { credentials: 0, pending: 0 });
  });

  test('expectedUpdatedAt is compared as an instant: 10:00Z equals 10:00:00.000000Z', async () => {
    const created = await createConnection(app.url, tenant.admin.token, connectionBody(open.url));
    await app.db.query(`UPDATE mcp_connections SET updated_at = '2030-01-01T10:00:00.000Z' WHERE id = $1`, [
      created.id,
    ]);
    const first = await admin().put(
      `/v1/mcp-connections/${created.id}`,
      editBody(created, { expectedUpdatedAt: '2030-01-01T10:00Z', name: 'A' }),
    );
    assert.equal(first.status, 200, first.text);
    await app.db.query(`UPDATE mcp_connections SET updated_at = '2030-01-01T10:00:00.000Z' WHERE id = $1`, [
      created.id,
    ]);
    const second = await admin().put(
      `/v1/mcp-connections/${created.id}`,
      editBody(created, { expectedUpdatedAt: '2030-01-01T10:00:00.000000Z', name: 'B' }),
    );
    assert.equal(second.status, 200, second.text);
    // The token moves forward even when edits land in the same millisecond.
    assert.ok(second.body.updatedAt > '2030-01-01T10:00:00.000Z');
    // Fractions of any length (the spec sets no limit) are read to the millisecond.
    await app.db.query(`UPDATE mcp_connections SET updated_at = '2030-01-01T10:00:00.000Z' WHERE id = $1`, [
      created.id,
    ]);
    const third = await admin().put(
      `/v1/mcp-connections/${created.id}`,
      editBody(created, { expectedUpdatedAt: '2030-01-01T10:00:00.0000000000Z', name: 'C' }),
    );
    assert.equal(third.status, 200, third.text);
  });

  test('an unchanged identity keeps credentials even when the url is spelled differently', async () => {
    const created = await createConnection(
      app.url,
      tenant.admin.token,
      connectionBody(keyed.url, { authType: 'apikey', apiKey: 'key-1' }),
    );
    const respelled = `${keyed.url.replace('http://', 'HTTP://')}#fragment`;
    const edited = await admin().put(`/v1/mcp-connections/${created.id}`, editBody(created, { url: respelled }));
    assert.equal(edited.status, 200, edited.text);
    assert.equal(edited.body.identityChanged, false);
    assert.equal((await credentialRows(app, created.id)).length, 1);
  });
});

describe('per-member API keys', () => {
  test('a member stores their own key: probed, encrypted, counted for them only', async () => {
    const created = await createConnection(
      app.url,
      tenant.admin.token,
      connectionBody(keyed.url, {
        authType: 'apikey',
        credentialMode: 'per_member',
        access: { orgWide: false, memberIds: [tenant.member.memberId] },
      }),
    );
    assert.equal(created.connected, false);
    assert.equal(created.connectedForMe, false);
    assert.equal(created.reconnectActionOwner, 'member');
    const before = keyed.requests.length;
    const stored = await api(app.url, tenant.member.token).put(`/v1/mcp-connections/${created.id}/credentials`, {
      apiKey: 'key-1',
    });
    assert.equal(stored.status, 200, stored.text);
    assert.ok(keyed.requests.length > before, 'the key was probed');
    assert.ok(!stored.text.includes('key-1'));
    assert.equal(stored.body.connectedForMe, true);
    assert.equal(stored.body.connected, true);
    assert.equal(stored.body.credentialHealth, 'ready');
    assert.equal(stored.body.needsReconnect, false);
    const rows = await credentialRows(app, created.id);
    assert.deepEqual(
      rows.map((row) => row.memberId),
      [tenant.member.memberId],
    );
    const asAdmin = await admin().get(`/v1/mcp-connections/${created.id}`);
    assert.equal(asAdmin.body.connected, true, 'some member is connected');
    assert.equal(asAdmin.body.connectedForMe, false, 'but not the admin');
    // The admin, who has no key of their own, tests it: the advice is to add one, not to change the type.
    const tested = await admin().post(`/v1/mcp-connections/${created.id}/test`);
    assert.equal(tested.status, 200, tested.text);
    assert.equal(tested.body.ok, false);
    assert.equal(tested.body.diagnostic.code, 'authorization_required');
    assert.equal(tested.body.diagnostic.actionOwner, 'member');
    assert.match(tested.body.diagnostic.operatorAction, /\/credentials/);
  });
});

describe('access replace (spec operation 2)', () => {
  test('replaces the whole set and returns the connection without edit-only fields', async () => {
    const teamResponse = await api(app.url, tenant.owner.token).post(`/v1/orgs/${tenant.orgId}/teams`, {
      name: `Team ${Date.now()}`,
    });
    assert.equal(teamResponse.status, 201, teamResponse.text);
    const teamId = teamResponse.body.team?.id ?? teamResponse.body.id;
    const created = await createConnection(
      app.url,
      tenant.admin.token,
      connectionBody(open.url, { access: { orgWide: true } }),
    );
    const replaced = await admin().put(`/v1/mcp-connections/${created.id}/access`, {
      access: { memberIds: [tenant.member.memberId, tenant.member.memberId], teamIds: [teamId] },
    });
    assert.equal(replaced.status, 200, replaced.text);
    assert.deepEqual(replaced.body.access, { orgWide: false, memberIds: [tenant.member.memberId], teamIds: [teamId] });
    assert.ok(!('identityChanged' in replaced.body) && !('reconnectionRequired' in replaced.body));
    assert.ok(replaced.body.updatedAt > created.updatedAt);

    const cleared = await api(app.url, tenant.owner.token).put(`/v1/mcp-connections/${created.id}/access`, {
      access: {},
    });
    assert.equal(cleared.status, 200);
    assert.deepEqual(cleared.body.access, { orgWide: false, memberIds: [], teamIds: [] });
    assert.equal((await api(app.url, tenant.member.token).get(`/v1/mcp-connections/${created.id}`)).status, 404);
  });
});

describe('test route and plugins', () => {
  test('test probes the stored configuration with the stored key and records health', async () => {
    const created = await createConnection(
      app.url,
      tenant.admin.token,
      connectionBody(keyed.url, { authType: 'apikey', apiKey: 'key-1' }),
    );
    const ok = await admin().post(`/v1/mcp-connections/${created.id}/test`);
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.body.ok, true);
    assert.equal(ok.body.highestPassed, 'catalog_ready');
    assert.deepEqual(ok.body.tools, ['echo', 'add']);

    // The server rotates its key: the stored one is now rejected.
    await app.db.query(`UPDATE mcp_connections SET url = $2 WHERE id = $1`, [created.id, keyed2.url]);
    const rejected = await admin().post(`/v1/mcp-connections/${created.id}/test`);
    assert.equal(rejected.status, 200);
    assert.equal(rejected.body.ok, false);
    assert.equal(rejected.body.diagnostic.code, 'api_key_rejected');
    const after = await admin().get(`/v1/mcp-connections/${created.id}`);
    assert.equal(after.body.credentialHealth, 'reconnect_required');
    assert.equal(after.body.credentialHealthReason, 'authorization_rejected');
    assert.equal(after.body.needsReconnect, true);
    assert.equal(after.body.reconnectActionOwner, 'organization_admin');
  });

  test('a plugin install links connections; a managed identity refuses identity edits until uninstalled', async () => {
    await createConnection(app.url, tenant.admin.token, connectionBody(open.url, { name: 'Existing' }));
    const count = async () =>
      (await app.db.query<{ n: number }>('SELECT count(*)::int AS n FROM mcp_connections')).rows[0]!.n;
    const before = await count();
    const installed = await admin().post('/v1/plugins', {
      manifest: {
        name: 'Docs Plugin',
        version: '1.2.0',
        mcpConnections: [
          { name: 'Docs', url: open.url, authType: 'none', credentialMode: 'shared', manageIdentity: true },
          { name: 'Brand new', url: 'https://mcp.plugin.example/mcp', authType: 'oauth', credentialMode: 'per_member' },
        ],
      },
    });
    assert.equal(installed.status, 201, installed.text);
    const plugin = installed.body.plugin;
    assert.match(plugin.id, /^plg_/);
    assert.equal(plugin.requires.length, 2);
    assert.equal(
      await count(),
      before + 1,
      'the existing connection to the docs server is reused, one new one is created',
    );
    assert.equal(plugin.managesIdentityOf.length, 1);
    assert.equal(plugin.managesIdentityOf[0], plugin.requires[0]);
    const managedId = plugin.managesIdentityOf[0];

    const managed = await admin().get(`/v1/mcp-connections/${managedId}`);
    assert.deepEqual(managed.body.requiredBy, [{ pluginId: plugin.id, name: 'Docs Plugin' }]);
    assert.deepEqual(managed.body.identityManagedBy, [{ pluginId: plugin.id, name: 'Docs Plugin' }]);

    const renamed = await admin().put(
      `/v1/mcp-connections/${managedId}`,
      editBody(managed.body, { name: 'Still fine' }),
    );
    assert.equal(renamed.status, 200, 'name edits of a managed connection are allowed');
    const moved = await admin().put(`/v1/mcp-connections/${managedId}`, editBody(renamed.body, { url: keyed2.url }));
    assert.equal(moved.status, 409);
    assert.equal(moved.body.error, 'marketplace_managed');
    // Nor can a connection the plugin requires be deleted from under it.
    for (const required of plugin.requires) {
      const refused = await admin().delete(`/v1/mcp-connections/${required}`);
      assert.equal(refused.status, 409, refused.text);
      assert.equal(refused.body.error, 'connection_required');
      assert.match(refused.body.message, /Docs Plugin/);
    }
    assert.equal(await count(), before + 1, 'nothing was deleted');

    assert.equal((await admin().delete(`/v1/plugins/${plugin.id}`)).status, 204);
    const free = await admin().get(`/v1/mcp-connections/${managedId}`);
    assert.deepEqual(free.body.identityManagedBy, []);
    const movedNow = await admin().put(`/v1/mcp-connections/${managedId}`, editBody(free.body, { url: legacy.url }));
    assert.equal(movedNow.status, 200, movedNow.text);
    assert.equal((await admin().delete(`/v1/plugins/${plugin.id}`)).status, 404);
    assert.equal(
      (await admin().delete(`/v1/mcp-connections/${managedId}`)).status,
      204,
      'free again once the plugin is gone',
    );
  });
});
