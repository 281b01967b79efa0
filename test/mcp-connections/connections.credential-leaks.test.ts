// A credential is shown once and never again. Two ways it used to come back: a key that is not a
// valid header value made fetch throw an error quoting it (logged), and a hostile MCP server that
// echoes the Authorization header it received (in a JSON-RPC error, in its protocolVersion) had
// that text logged and quoted in the diagnostic of a 502 or of the test route.

import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { TestApp } from '../support/app.ts';
import type { Tenant } from '../support/fixtures.ts';
import { startStreamableServer, type McpServerOptions, type RunningServer } from '../support/mcp-servers.ts';
import { api, connectionBody, createConnection, credentialRows, setup } from './helpers.ts';

// Long enough that the 32 characters the version diagnostic quotes would hold only its start.
const KEY = 'sk-live-5f0c2a9e7b3d41c8a6e2f9b0d7c4e1a3';
const KEY_START = KEY.slice(0, 16);

let app: TestApp;
let tenant: Tenant;
let echoOptions: McpServerOptions;
let echo: RunningServer;
let connection: Record<string, any>;

before(async () => {
  ({ app, tenant } = await setup());
  echoOptions = { apiKey: KEY };
  echo = await startStreamableServer(echoOptions);
  // Stored while the server behaves; it turns hostile per test below.
  connection = await createConnection(
    app.url,
    tenant.admin.token,
    connectionBody(echo.url, { authType: 'apikey', apiKey: KEY }),
  );
});

after(async () => {
  await echo.close();
  await app.close();
});

const admin = () => api(app.url, tenant.admin.token);

function assertNoKey(text: string, where: string) {
  assert.ok(!text.includes(KEY), `${where} holds the key: ${text}`);
  assert.ok(!text.includes(KEY_START), `${where} holds the start of the key: ${text}`);
}

/** The log lines written since `offset` (each test looks at its own). */
function assertLogClean(offset: number) {
  const log = app.logText().slice(offset);
  assert.ok(log.length > 0);
  for (const line of log.split('\n')) assertNoKey(line, 'a log line');
}

describe('a server that echoes the credential back', () => {
  const cases = [
    {
      fault: 'echo_credential_in_error' as const,
      phase: 'MCP_INITIALIZE',
      logged: 'unknown credential: Bearer [redacted]',
    },
    {
      fault: 'echo_credential_in_version' as const,
      phase: 'MCP_VERSION',
      logged: 'protocol version \\"Bearer [redacted]\\"',
    },
  ];
  for (const { fault, phase, logged } of cases) {
    test(`${fault}: an edit that fails validation shows the key in neither the 502 nor the log`, async () => {
      echoOptions.fault = fault;
      const logOffset = app.logText().length;
      const current = (await admin().get(`/v1/mcp-connections/${connection.id}`)).body;
      const response = await admin().put(`/v1/mcp-connections/${connection.id}`, {
        expectedUpdatedAt: current.updatedAt,
        name: current.name,
        url: `${echo.url}?edited=1`,
        authType: 'apikey',
        credentialMode: 'shared',
        access: { orgWide: true },
        apiKey: KEY,
      });
      assert.equal(response.status, 502, response.text);
      assert.equal(response.body.error, 'connection_validation_failed');
      assert.equal(response.body.diagnostic.phase, phase);
      assertNoKey(response.text, 'the 502 body');
      assertLogClean(logOffset);
      // The echo did arrive: it is in the log, redacted.
      assert.ok(app.logText().slice(logOffset).includes(logged), app.logText().slice(logOffset));
      assert.equal(
        (await admin().get(`/v1/mcp-connections/${connection.id}`)).body.url,
        current.url,
        'nothing written',
      );
    });

    test(`${fault}: the test route and storing the key show it in neither the response nor the log`, async () => {
      echoOptions.fault = fault;
      const logOffset = app.logText().length;
      const tested = await admin().post(`/v1/mcp-connections/${connection.id}/test`);
      assert.equal(tested.status, 200, tested.text);
      assert.equal(tested.body.ok, false);
      assert.equal(tested.body.diagnostic.phase, phase);
      assertNoKey(tested.text, 'the test result');
      const stored = await admin().put(`/v1/mcp-connections/${connection.id}/credentials`, { apiKey: KEY });
      assert.equal(stored.status, 502, stored.text);
      assertNoKey(stored.text, 'the 502 body');
      assertLogClean(logOffset);
      // Control: the key stored is still the one that works once the server behaves.
      echoOptions.fault = 'none';
      assert.equal((await admin().post(`/v1/mcp-connections/${connection.id}/test`)).body.ok, true);
    });
  }
});

describe('an API key that is not a valid header value', () => {
  const bad = [
    ['a newline', `${KEY}\nX-Injected: 1`],
    ['a carriage return', `${KEY}\r`],
    ['NUL', `${KEY}\u0000`],
    ['a leading space', ` ${KEY}`],
    ['a character beyond Latin-1', `${KEY}\u2603`],
  ] as const;
  for (const [label, apiKey] of bad) {
    test(`with ${label} is 400 invalid_request naming apiKey on create, edit and store; nothing probed, stored or logged`, async () => {
      echoOptions.fault = 'none';
      const logOffset = app.logText().length;
      const requestsBefore = echo.requests.length;
      const rowsBefore = await credentialRows(app, connection.id);
      const current = (await admin().get(`/v1/mcp-connections/${connection.id}`)).body;
      const responses = [
        await admin().post('/v1/mcp-connections', connectionBody(echo.url, { authType: 'apikey', apiKey })),
        await admin().put(`/v1/mcp-connections/${connection.id}`, {
          expectedUpdatedAt: current.updatedAt,
          name: current.name,
          url: current.url,
          authType: 'apikey',
          credentialMode: 'shared',
          access: { orgWide: true },
          apiKey,
        }),
        await admin().put(`/v1/mcp-connections/${connection.id}/credentials`, { apiKey }),
      ];
      for (const response of responses) {
        assert.equal(response.status, 400, response.text);
        assert.equal(response.body.error, 'invalid_request');
        assert.deepEqual(
          response.body.details.map((detail: { path: unknown[] }) => detail.path),
          [['apiKey']],
          response.text,
        );
        assert.equal(typeof response.body.details[0].message, 'string');
        assertNoKey(response.text, 'the 400 body');
      }
      assert.equal(echo.requests.length, requestsBefore, 'no probe reached the server');
      assert.deepEqual(await credentialRows(app, connection.id), rowsBefore, 'nothing stored');
      assert.equal(
        (await admin().get(`/v1/mcp-connections/${connection.id}`)).body.updatedAt,
        current.updatedAt,
        'nothing changed',
      );
      assertLogClean(logOffset);
    });
  }

  test('the OpenAPI document states the allowed characters', async () => {
    const document = (await api(app.url).get('/openapi.json')).body;
    const text = JSON.stringify(document.paths['/v1/mcp-connections/{connectionId}/credentials'].put.requestBody);
    assert.match(text, /printable ASCII/);
    assert.match(text, /"pattern"/);
  });
});
