import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { TestApp } from '../support/app.ts';
import type { Tenant } from '../support/fixtures.ts';
import { closedPort, startStreamableServer, type RunningServer } from '../support/mcp-servers.ts';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from '../support/app.ts';
import { api, connectionBody, createConnection, credentialRows, setup, startMcpApp } from './helpers.ts';

/** `orgplane start` as a separate OS process on the same PostgreSQL database as `app`. */
async function spawnServer(shared: TestApp): Promise<{ url: string; stop(): Promise<void> }> {
  const port = await freePort();
  const dataDir = await mkdtemp(path.join(tmpdir(), 'orgplane-proc-'));
  const child: ChildProcess = spawn(process.execPath, ['src/main.ts', 'start'], {
    cwd: path.resolve(import.meta.dirname, '../..'),
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: shared.databaseUrl,
      ORGPLANE_SECRET_KEY: shared.config.secretKey,
      ALLOWED_PRIVATE_NETWORKS: '127.0.0.0/8',
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      RUN_WORKERS: 'false',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const url = `http://127.0.0.1:${port}`;
  for (let attempt = 0; ; attempt += 1) {
    if (child.exitCode !== null) throw new Error(`server process exited: ${stderr}`);
    const ok = await fetch(`${url}/health`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    if (attempt > 300) throw new Error(`server process did not start: ${stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    url,
    async stop() {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

let app: TestApp;
let tenant: Tenant;
let open: RunningServer;
let keyed: RunningServer;
let connection: Record<string, any>;

before(async () => {
  ({ app, tenant } = await setup());
  [open, keyed] = await Promise.all([startStreamableServer(), startStreamableServer({ apiKey: 'good-key' })]);
  connection = await createConnection(
    app.url,
    tenant.admin.token,
    connectionBody(keyed.url, { authType: 'apikey', apiKey: 'good-key' }),
  );
});

after(async () => {
  await Promise.all([open.close(), keyed.close()]);
  await app.close();
});

const admin = () => api(app.url, tenant.admin.token);
const long = (n: number) => 'x'.repeat(n);
const longUrl = (n: number) => `https://example.com/${'p'.repeat(n - 'https://example.com/'.length)}`;

function editBody(overrides: Record<string, unknown> = {}) {
  return {
    expectedUpdatedAt: connection.updatedAt,
    name: connection.name,
    url: connection.url,
    authType: connection.authType,
    credentialMode: connection.credentialMode,
    access: { orgWide: true },
    ...overrides,
  };
}

async function expectInvalid(response: { status: number; body: any; text: string }, path: Array<string | number>) {
  assert.equal(response.status, 400, response.text);
  assert.equal(response.body.error, 'invalid_request');
  assert.ok(Array.isArray(response.body.details) && response.body.details.length > 0);
  // The spec allows string or number path items; array indexes may come back as either.
  const same = (a: unknown[]) => JSON.stringify(a.map(String)) === JSON.stringify(path.map(String));
  assert.ok(
    response.body.details.some((detail: { path: unknown[] }) => same(detail.path)),
    `no detail at ${JSON.stringify(path)}: ${response.text}`,
  );
}

describe('400 invalid_request: every limit, with the path of the offending field', () => {
  const cases: Array<[string, Record<string, unknown>, Array<string | number>]> = [
    ['empty name', { name: '' }, ['name']],
    ['name of 256 characters', { name: long(256) }, ['name']],
    ['url of 2049 characters', { url: longUrl(2049) }, ['url']],
    ['url that is not http(s)', { url: 'ftp://example.com/mcp' }, ['url']],
    ['url that is not a URL', { url: 'mcp server' }, ['url']],
    ['unknown authType', { authType: 'basic' }, ['authType']],
    ['unknown credentialMode', { credentialMode: 'team' }, ['credentialMode']],
    ['empty apiKey', { apiKey: '' }, ['apiKey']],
    ['apiKey of 4097 characters', { apiKey: long(4097) }, ['apiKey']],
    ['oauthClient without clientId', { oauthClient: {} }, ['oauthClient', 'clientId']],
    ['clientId of 513 characters', { oauthClient: { clientId: long(513) } }, ['oauthClient', 'clientId']],
    [
      'clientSecret of 4097 characters',
      { oauthClient: { clientId: 'c', clientSecret: long(4097) } },
      ['oauthClient', 'clientSecret'],
    ],
    [
      'unknown tokenEndpointAuthMethod',
      { oauthClient: { clientId: 'c', tokenEndpointAuthMethod: 'tls_client_auth' } },
      ['oauthClient', 'tokenEndpointAuthMethod'],
    ],
    ['issuer of 2049 characters', { authorizationServerIssuer: longUrl(2049) }, ['authorizationServerIssuer']],
    ['101 requested scopes', { requestedScopes: Array.from({ length: 101 }, (_, i) => `s${i}`) }, ['requestedScopes']],
    ['a scope of 256 characters', { requestedScopes: ['ok', long(256)] }, ['requestedScopes', 1]],
    ['an empty scope', { requestedScopes: [''] }, ['requestedScopes', 0]],
    [
      '201 member ids',
      { access: { memberIds: Array.from({ length: 201 }, (_, i) => `m${i}`) } },
      ['access', 'memberIds'],
    ],
    ['an empty member id', { access: { memberIds: [''] } }, ['access', 'memberIds', 0]],
    ['201 team ids', { access: { teamIds: Array.from({ length: 201 }, (_, i) => `t${i}`) } }, ['access', 'teamIds']],
    ['an empty team id', { access: { teamIds: ['ok', ''] } }, ['access', 'teamIds', 1]],
    ['orgWide not a boolean', { access: { orgWide: 'yes' } }, ['access', 'orgWide']],
    ['missing access', { access: undefined }, ['access']],
    ['missing expectedUpdatedAt', { expectedUpdatedAt: undefined }, ['expectedUpdatedAt']],
    ['expectedUpdatedAt without Z', { expectedUpdatedAt: '2026-01-01T10:00:00' }, ['expectedUpdatedAt']],
    [
      'expectedUpdatedAt on 29 February of a common year',
      { expectedUpdatedAt: '2023-02-29T10:00:00Z' },
      ['expectedUpdatedAt'],
    ],
  ];
  for (const [label, overrides, path] of cases) {
    test(`edit: ${label}`, async () => {
      await expectInvalid(await admin().put(`/v1/mcp-connections/${connection.id}`, editBody(overrides)), path);
    });
  }

  test('create applies the same limits', async () => {
    await expectInvalid(await admin().post('/v1/mcp-connections', connectionBody(open.url, { name: long(256) })), [
      'name',
    ]);
    await expectInvalid(
      await admin().post('/v1/mcp-connections', connectionBody(open.url, { requestedScopes: [long(256)] })),
      ['requestedScopes', 0],
    );
  });

  test('limits count characters, not UTF-16 units: 255 emoji are a name, 256 are not', async () => {
    const emoji = (n: number) => '\u{1F600}'.repeat(n);
    await expectInvalid(await admin().put(`/v1/mcp-connections/${connection.id}`, editBody({ name: emoji(256) })), [
      'name',
    ]);
    await expectInvalid(
      await admin().put(`/v1/mcp-connections/${connection.id}`, editBody({ requestedScopes: [emoji(256)] })),
      ['requestedScopes', 0],
    );
    const response = await admin().put(
      `/v1/mcp-connections/${connection.id}`,
      editBody({ name: emoji(255), requestedScopes: [emoji(255)] }),
    );
    assert.equal(response.status, 200, response.text);
    assert.equal(response.body.name, emoji(255));
    connection = response.body;
  });

  test('a limit at its maximum is accepted', async () => {
    const response = await admin().put(
      `/v1/mcp-connections/${connection.id}`,
      editBody({ name: long(255), requestedScopes: Array.from({ length: 100 }, (_, i) => `${i}`.padEnd(255, 's')) }),
    );
    assert.equal(response.status, 200, response.text);
    connection = response.body;
  });

  test('a malformed connection id is 400 pointing at the path parameter', async () => {
    for (const id of [
      'emc_123',
      'usr_01jqz3v6b8e9f0g1h2j3k4m5n6',
      'emc_01JQZ3V6B8E9F0G1H2J3K4M5N6X',
      `${connection.id}x`,
    ]) {
      const response = await admin().put(`/v1/mcp-connections/${encodeURIComponent(id)}`, editBody());
      await expectInvalid(response, ['connectionId']);
    }
  });

  // The spec's 400 carries `details` whatever failed, so a client reads one shape.
  test('a body that is not JSON, or empty, is 400 with details', async () => {
    for (const raw of ['{"name":', '']) {
      const response = await admin().put(`/v1/mcp-connections/${connection.id}`, undefined, {
        raw,
        headers: { 'content-type': 'application/json' },
      });
      assert.equal(response.status, 400, response.text);
      assert.equal(response.body.error, 'invalid_request');
      assert.ok(Array.isArray(response.body.details) && response.body.details.length > 0, response.text);
      assert.deepEqual(response.body.details[0].path, []);
      assert.equal(typeof response.body.details[0].message, 'string');
    }
  });

  test('member and team ids of another organization are refused, pointing at the item', async () => {
    const otherOrgMember = tenant.otherAdmin.memberId;
    const edit = await admin().put(
      `/v1/mcp-connections/${connection.id}`,
      editBody({ access: { memberIds: [tenant.member.memberId, otherOrgMember] } }),
    );
    await expectInvalid(edit, ['access', 'memberIds', 1]);
    const team = await api(app.url, tenant.otherAdmin.token).post(`/v1/orgs/${tenant.otherOrgId}/teams`, {
      name: 'Their team',
    });
    assert.equal(team.status, 201, team.text);
    const teamId = team.body.team?.id ?? team.body.id;
    const replace = await admin().put(`/v1/mcp-connections/${connection.id}/access`, { access: { teamIds: [teamId] } });
    await expectInvalid(replace, ['access', 'teamIds', 0]);
    const create = await admin().post(
      '/v1/mcp-connections',
      connectionBody(open.url, { access: { memberIds: ['mem_01jqz3v6b8e9f0g1h2j3k4m5n6'] } }),
    );
    await expectInvalid(create, ['access', 'memberIds', 0]);
  });

  test('a shared API-key connection needs its key when it is created or its identity changes', async () => {
    await expectInvalid(await admin().post('/v1/mcp-connections', connectionBody(keyed.url, { authType: 'apikey' })), [
      'apiKey',
    ]);
    await expectInvalid(
      await admin().put(`/v1/mcp-connections/${connection.id}`, editBody({ url: `${keyed.url}?v=2` })),
      ['apiKey'],
    );
  });
});

describe('404, 409, 502', () => {
  test('an unknown connection is 404 connection_not_found', async () => {
    const ghost = 'emc_01jqz3v6b8e9f0g1h2j3k4m5n6';
    for (const response of [
      await admin().put(`/v1/mcp-connections/${ghost}`, editBody()),
      await admin().put(`/v1/mcp-connections/${ghost}/access`, { access: {} }),
      await admin().get(`/v1/mcp-connections/${ghost}`),
      await admin().delete(`/v1/mcp-connections/${ghost}`),
      await admin().post(`/v1/mcp-connections/${ghost}/test`),
    ]) {
      assert.equal(response.status, 404, response.text);
      assert.equal(response.body.error, 'connection_not_found');
      assert.equal(typeof response.body.message, 'string');
    }
  });

  test('a stale expectedUpdatedAt is 409 connection_conflict and changes nothing', async () => {
    const stale = new Date(Date.parse(connection.updatedAt) - 1).toISOString();
    const response = await admin().put(
      `/v1/mcp-connections/${connection.id}`,
      editBody({ expectedUpdatedAt: stale, name: 'Lost update' }),
    );
    assert.equal(response.status, 409);
    assert.equal(response.body.error, 'connection_conflict');
    const current = await admin().get(`/v1/mcp-connections/${connection.id}`);
    assert.equal(current.body.name, connection.name);
    assert.equal(current.body.updatedAt, connection.updatedAt);
  });

  test('a proposed server that fails the probe is 502 with a diagnostic, and nothing is written', async () => {
    const port = await closedPort();
    const response = await admin().put(
      `/v1/mcp-connections/${connection.id}`,
      editBody({ url: `http://127.0.0.1:${port}/mcp/secret-path-token`, apiKey: 'new-key' }),
    );
    assert.equal(response.status, 502, response.text);
    assert.equal(response.body.error, 'connection_validation_failed');
    assert.equal(typeof response.body.message, 'string');
    const diagnostic = response.body.diagnostic;
    for (const field of [
      'referenceId',
      'phase',
      'category',
      'code',
      'highestPassed',
      'retryable',
      'actionOwner',
      'operatorAction',
      'message',
    ]) {
      assert.ok(field in diagnostic, field);
    }
    assert.equal(diagnostic.phase, 'NETWORK_TCP');
    assert.equal(diagnostic.code, 'connection_refused');
    assert.deepEqual(diagnostic.outbound.origin, `http://127.0.0.1:${port}`);
    assert.ok(!response.text.includes('secret-path-token') && !response.text.includes('new-key'));
    assert.ok(app.logText().includes(diagnostic.referenceId), 'the reference id is in the server log');

    const current = await admin().get(`/v1/mcp-connections/${connection.id}`);
    assert.equal(current.body.url, connection.url);
    assert.equal(current.body.updatedAt, connection.updatedAt);
    assert.equal((await credentialRows(app, connection.id)).length, 1, 'the stored key survives');
  });

  test('a wrong API key is 502 at the auth phase; a create that fails stores nothing', async () => {
    const before = (await admin().get('/v1/mcp-connections?limit=100')).body.connections.length;
    const response = await admin().post(
      '/v1/mcp-connections',
      connectionBody(keyed.url, { authType: 'apikey', apiKey: 'bad-key' }),
    );
    assert.equal(response.status, 502);
    assert.equal(response.body.diagnostic.code, 'api_key_rejected');
    assert.equal(response.body.diagnostic.httpStatus, 401);
    assert.equal((await admin().get('/v1/mcp-connections?limit=100')).body.connections.length, before);
  });

  test('a server that answers initialize with an error carries the JSON-RPC code', async () => {
    const broken = await startStreamableServer({ fault: 'initialize_error' });
    const response = await admin().post('/v1/mcp-connections', connectionBody(broken.url));
    await broken.close();
    assert.equal(response.status, 502);
    assert.equal(response.body.diagnostic.phase, 'MCP_INITIALIZE');
    assert.equal(response.body.diagnostic.jsonRpcCode, -32602);
  });
});

describe('storing an API key', () => {
  test('wrong key 502, wrong auth type 400, shared key by a member 403, no access 404, limits 400', async () => {
    const perMember = await createConnection(
      app.url,
      tenant.admin.token,
      connectionBody(keyed.url, {
        authType: 'apikey',
        credentialMode: 'per_member',
        access: { orgWide: true },
      }),
    );
    const member = api(app.url, tenant.member.token);
    const wrong = await member.put(`/v1/mcp-connections/${perMember.id}/credentials`, { apiKey: 'not-the-key' });
    assert.equal(wrong.status, 502);
    assert.equal(wrong.body.error, 'connection_validation_failed');
    assert.equal(wrong.body.diagnostic.code, 'api_key_rejected');
    assert.equal((await credentialRows(app, perMember.id)).length, 0, 'nothing stored');

    await expectInvalid(await member.put(`/v1/mcp-connections/${perMember.id}/credentials`, { apiKey: '' }), [
      'apiKey',
    ]);
    await expectInvalid(await member.put(`/v1/mcp-connections/${perMember.id}/credentials`, { apiKey: long(4097) }), [
      'apiKey',
    ]);

    const noAuth = await createConnection(app.url, tenant.admin.token, connectionBody(open.url));
    await expectInvalid(await admin().put(`/v1/mcp-connections/${noAuth.id}/credentials`, { apiKey: 'k' }), ['apiKey']);

    const shared = await member.put(`/v1/mcp-connections/${connection.id}/credentials`, { apiKey: 'good-key' });
    assert.equal(shared.status, 403, shared.text);

    const hidden = await createConnection(
      app.url,
      tenant.admin.token,
      connectionBody(keyed.url, {
        authType: 'apikey',
        credentialMode: 'per_member',
        access: { orgWide: false },
      }),
    );
    const notGranted = await member.put(`/v1/mcp-connections/${hidden.id}/credentials`, { apiKey: 'good-key' });
    assert.equal(notGranted.status, 404);
    assert.equal(notGranted.body.error, 'connection_not_found');
  });

  test('an admin replaces the shared key through the same route', async () => {
    const replaced = await admin().put(`/v1/mcp-connections/${connection.id}/credentials`, { apiKey: 'good-key' });
    assert.equal(replaced.status, 200, replaced.text);
    assert.equal(replaced.body.connected, true);
    connection = (await admin().get(`/v1/mcp-connections/${connection.id}`)).body;
  });
});

describe('concurrent edits from several app instances on one database', () => {
  test('the same expectedUpdatedAt gives exactly one 200, 409 for the rest', async () => {
    const others = await Promise.all([
      startMcpApp({ shareDatabaseWith: app }),
      startMcpApp({ shareDatabaseWith: app }),
    ]);
    try {
      const instances = [app, ...others];
      const start = (await admin().get(`/v1/mcp-connections/${connection.id}`)).body;
      for (const round of [0, 1]) {
        const current = (await admin().get(`/v1/mcp-connections/${connection.id}`)).body;
        const attempts = Array.from({ length: 6 }, (_, i) =>
          api(instances[i % instances.length]!.url, tenant.admin.token).put(`/v1/mcp-connections/${connection.id}`, {
            expectedUpdatedAt: current.updatedAt,
            name: `Edit ${round}-${i}`,
            // Round 1 changes identity too (probe, then credential deletion) on every attempt.
            url: round === 0 ? current.url : `${keyed.url}?round=${i}`,
            authType: 'apikey',
            credentialMode: 'shared',
            apiKey: 'good-key',
            access: { orgWide: true },
          }),
        );
        const responses = await Promise.all(attempts);
        const statuses = responses.map((response) => response.status).sort();
        assert.deepEqual(statuses, [200, 409, 409, 409, 409, 409], JSON.stringify(responses.map((r) => r.body)));
        const winner = responses.find((response) => response.status === 200)!;
        const final = (await admin().get(`/v1/mcp-connections/${connection.id}`)).body;
        assert.equal(final.name, winner.body.name);
        assert.equal(final.updatedAt, winner.body.updatedAt);
        assert.ok(responses.filter((r) => r.status === 409).every((r) => r.body.error === 'connection_conflict'));
        assert.equal((await credentialRows(app, connection.id)).length, 1);
      }
      assert.notEqual(start.updatedAt, (await admin().get(`/v1/mcp-connections/${connection.id}`)).body.updatedAt);
    } finally {
      await Promise.all(others.map((other) => other.close()));
    }
  });
  test('several server processes on one PostgreSQL: exactly one 200', async (t) => {
    if (!app.databaseUrl) {
      t.skip('PGlite is embedded in one process; this case needs PostgreSQL');
      return;
    }
    const processes = await Promise.all([spawnServer(app), spawnServer(app)]);
    try {
      const urls = [app.url, ...processes.map((p) => p.url)];
      const current = (await admin().get(`/v1/mcp-connections/${connection.id}`)).body;
      const responses = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          api(urls[i % urls.length]!, tenant.admin.token).put(`/v1/mcp-connections/${connection.id}`, {
            expectedUpdatedAt: current.updatedAt,
            name: `Process edit ${i}`,
            url: current.url,
            authType: 'apikey',
            credentialMode: 'shared',
            access: { orgWide: true },
          }),
        ),
      );
      assert.deepEqual(
        responses.map((r) => r.status).sort(),
        [200, 409, 409, 409, 409, 409],
        JSON.stringify(responses.map((r) => r.body)),
      );
      const winner = responses.find((r) => r.status === 200)!;
      assert.equal((await admin().get(`/v1/mcp-connections/${connection.id}`)).body.name, winner.body.name);
    } finally {
      await Promise.all(processes.map((p) => p.stop()));
    }
  });
});
