import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { TestApp } from '../support/app.ts';
import type { Tenant } from '../support/fixtures.ts';
import { startStreamableServer, type RunningServer } from '../support/mcp-servers.ts';
import { probeLimits } from '../../src/modules/mcp-connections/index.ts';
import { api, connectionBody, createConnection, setup } from './helpers.ts';

let app: TestApp;
let tenant: Tenant;
let keyed: RunningServer;
let connection: Record<string, any>;
let pluginId: string;
const API_KEY = 'sk-live-7f3a9c1e5b2d4680';
const CLIENT_SECRET = 'cs-9e8d7c6b5a4f3e2d1c0b';

before(async () => {
  ({ app, tenant } = await setup());
  keyed = await startStreamableServer({ apiKey: API_KEY });
  connection = await createConnection(
    app.url,
    tenant.admin.token,
    connectionBody(keyed.url, { authType: 'apikey', apiKey: API_KEY, access: { orgWide: false } }),
  );
  const plugin = await api(app.url, tenant.admin.token).post('/v1/plugins', {
    manifest: { name: 'P', mcpConnections: [] },
  });
  assert.equal(plugin.status, 201, plugin.text);
  pluginId = plugin.body.plugin.id;
});

after(async () => {
  await keyed.close();
  await app.close();
});

function editBody(overrides: Record<string, unknown> = {}) {
  return {
    expectedUpdatedAt: connection.updatedAt,
    name: 'Hijacked',
    url: connection.url,
    authType: 'apikey',
    credentialMode: 'shared',
    access: { orgWide: true },
    ...overrides,
  };
}

/** Every route of the module, as (method, path, body). */
function routes(): Array<[string, string, unknown]> {
  return [
    ['POST', '/v1/mcp-connections', connectionBody(keyed.url)],
    ['GET', '/v1/mcp-connections', undefined],
    ['GET', `/v1/mcp-connections/${connection.id}`, undefined],
    ['PUT', `/v1/mcp-connections/${connection.id}`, editBody()],
    ['PUT', `/v1/mcp-connections/${connection.id}/access`, { access: { orgWide: true } }],
    ['POST', `/v1/mcp-connections/${connection.id}/test`, undefined],
    ['PUT', `/v1/mcp-connections/${connection.id}/credentials`, { apiKey: API_KEY }],
    ['DELETE', `/v1/mcp-connections/${connection.id}`, undefined],
    ['POST', '/v1/plugins', { manifest: { name: 'Evil', mcpConnections: [] } }],
    ['DELETE', `/v1/plugins/${pluginId}`, undefined],
  ];
}

describe('who may call', () => {
  test('anonymous and garbage tokens get 401 on every route', async () => {
    for (const token of [undefined, 'ops_not-a-real-token', `${tenant.admin.token}x`]) {
      for (const [method, path, body] of routes()) {
        const response = await api(app.url, token).send<any>(method, path, body);
        assert.equal(response.status, 401, `${method} ${path} with ${token ?? 'no token'}: ${response.text}`);
        assert.equal(response.body.error, 'unauthorized');
      }
    }
  });

  test('a member gets 403 on every administrative route', async () => {
    for (const [method, path, body] of routes()) {
      // The credentials route is for members too; it is covered below.
      if (method === 'GET' || path.endsWith('/credentials')) continue;
      const response = await api(app.url, tenant.member.token).send<any>(method, path, body);
      assert.equal(response.status, 403, `${method} ${path}: ${response.text}`);
      assert.equal(response.body.error, 'forbidden');
    }
    const still = await api(app.url, tenant.admin.token).get(`/v1/mcp-connections/${connection.id}`);
    assert.equal(still.body.name, connection.name, 'nothing changed');
  });

  test('a member cannot read a connection they were not granted; granted, they see it without the access list', async () => {
    assert.equal((await api(app.url, tenant.member.token).get(`/v1/mcp-connections/${connection.id}`)).status, 404);
    const granted = await api(app.url, tenant.admin.token).put(`/v1/mcp-connections/${connection.id}/access`, {
      access: { memberIds: [tenant.member.memberId] },
    });
    assert.equal(granted.status, 200);
    connection = granted.body;
    const seen = await api(app.url, tenant.member.token).get(`/v1/mcp-connections/${connection.id}`);
    assert.equal(seen.status, 200);
    assert.equal(seen.body.access, null);
    assert.equal(seen.body.connectedForMe, true, 'shared credential');
    const sharedKey = await api(app.url, tenant.member.token).put(`/v1/mcp-connections/${connection.id}/credentials`, {
      apiKey: 'member-attempt',
    });
    assert.equal(sharedKey.status, 403, 'a member may not replace the shared key');
  });

  test('a signed-in user of no organization is refused', async () => {
    const response = await api(app.url, tenant.outsider.token).put(`/v1/mcp-connections/${connection.id}`, editBody());
    assert.equal(response.status, 403);
  });

  test("another organization's admin finds nothing: 404, no hint it exists", async () => {
    for (const [method, path, body] of routes()) {
      if (path === '/v1/mcp-connections' || path === '/v1/plugins') continue;
      const response = await api(app.url, tenant.otherAdmin.token).send<any>(method, path, body);
      const expected = path.startsWith('/v1/plugins') ? 'plugin_not_found' : 'connection_not_found';
      assert.equal(response.status, 404, `${method} ${path}: ${response.text}`);
      assert.equal(response.body.error, expected);
      assert.ok(!response.text.includes(tenant.orgId));
    }
    const list = await api(app.url, tenant.otherAdmin.token).get('/v1/mcp-connections');
    assert.ok(!list.body.connections.some((c: { id: string }) => c.id === connection.id));
    const still = await api(app.url, tenant.admin.token).get(`/v1/mcp-connections/${connection.id}`);
    assert.equal(still.status, 200);
  });

  test('a tampered id (one character changed) is another id: 404', async () => {
    const last = connection.id.at(-1) === 'a' ? 'b' : 'a';
    const tampered = `${connection.id.slice(0, -1)}${last}`;
    const response = await api(app.url, tenant.admin.token).put(`/v1/mcp-connections/${tampered}`, editBody());
    assert.equal(response.status, 404);
  });
});

describe('secrets', () => {
  test('API keys and OAuth client secrets never appear in a response or the log', async () => {
    const created = await api(app.url, tenant.owner.token).post(
      '/v1/mcp-connections',
      connectionBody('https://mcp.example.com/mcp', {
        authType: 'oauth',
        oauthClient: { clientId: 'visible-client-id', clientSecret: CLIENT_SECRET },
      }),
    );
    assert.equal(created.status, 201, created.text);
    const texts = [
      created.text,
      (await api(app.url, tenant.owner.token).get(`/v1/mcp-connections/${created.body.id}`)).text,
      (await api(app.url, tenant.owner.token).get('/v1/mcp-connections?limit=100')).text,
      (
        await api(app.url, tenant.admin.token).put(
          `/v1/mcp-connections/${connection.id}`,
          editBody({ name: 'Again', apiKey: API_KEY }),
        )
      ).text,
      (
        await api(app.url, tenant.admin.token).put(
          `/v1/mcp-connections/${connection.id}`,
          editBody({ apiKey: `${API_KEY}-wrong` }),
        )
      ).text,
      (await api(app.url, tenant.admin.token).post(`/v1/mcp-connections/${connection.id}/test`)).text,
    ];
    for (const text of texts) {
      assert.ok(!text.includes(API_KEY), text);
      assert.ok(!text.includes(CLIENT_SECRET), text);
    }
    assert.ok(created.text.includes('visible-client-id'), 'the client id is not a secret');
    const log = app.logText();
    assert.ok(log.length > 0);
    assert.ok(!log.includes(API_KEY), 'API key in the log');
    assert.ok(!log.includes(CLIENT_SECRET), 'client secret in the log');
    const { rows } = await app.db.query<{ sealed: string }>(
      'SELECT oauth_client_secret_sealed AS sealed FROM mcp_connections WHERE id = $1',
      [created.body.id],
    );
    assert.ok(rows[0]!.sealed.startsWith('v1:') && !rows[0]!.sealed.includes(CLIENT_SECRET), 'encrypted at rest');
  });

  test('a stored credential does not open for another identity', async () => {
    // Point the row's sealed key at another connection's identity: the envelope names its own.
    const other = await createConnection(
      app.url,
      tenant.admin.token,
      connectionBody(`${keyed.url}?other=1`, { authType: 'apikey', apiKey: API_KEY }),
    );
    await app.db.query(
      `UPDATE mcp_connection_credentials SET secret_sealed = (SELECT secret_sealed FROM mcp_connection_credentials WHERE connection_id = $1)
        WHERE connection_id = $2`,
      [connection.id, other.id],
    );
    const tested = await api(app.url, tenant.admin.token).post(`/v1/mcp-connections/${other.id}/test`);
    assert.equal(tested.status, 200);
    assert.equal(tested.body.ok, false, 'the moved key was not used');
    assert.equal(tested.body.diagnostic.code, 'authorization_required');
  });

  test('the probe refuses the cloud metadata address through the route', async () => {
    const response = await api(app.url, tenant.admin.token).post(
      '/v1/mcp-connections',
      connectionBody('http://169.254.169.254/latest/meta-data/'),
    );
    assert.equal(response.status, 502);
    assert.equal(response.body.diagnostic.code, 'address_blocked');
    assert.equal(response.body.diagnostic.phase, 'NETWORK_DNS');
  });
});

describe('probe budget', () => {
  test('a member who keeps submitting keys is rate limited (429 rate_limited with Retry-After)', async () => {
    const perMember = await createConnection(
      app.url,
      tenant.admin.token,
      connectionBody(keyed.url, { authType: 'apikey', credentialMode: 'per_member' }),
    );
    const member = api(app.url, tenant.member.token);
    let accepted = 0;
    let limited: { status: number; body: any; headers: Headers } | undefined;
    // Fixed windows: should one end mid-test, the limit is reached again in the next one.
    for (let i = 0; i < 2 * probeLimits.perMember + 1 && !limited; i += 1) {
      const response = await member.put(`/v1/mcp-connections/${perMember.id}/credentials`, { apiKey: `wrong-${i}` });
      if (response.status === 429) limited = response;
      else {
        assert.equal(response.status, 502, response.text);
        accepted += 1;
      }
    }
    assert.ok(limited, 'never limited');
    assert.ok(accepted >= probeLimits.perMember, `limited after ${accepted}`);
    assert.equal(limited.body.error, 'rate_limited');
    assert.equal(typeof limited.body.message, 'string');
    assert.ok(Number(limited.headers.get('retry-after')) > 0);
    // Another member of the same organization still has their own budget.
    const other = await api(app.url, tenant.admin.token).put(`/v1/mcp-connections/${perMember.id}/credentials`, {
      apiKey: 'still-wrong',
    });
    assert.equal(other.status, 502);
  });
});
