// Catalogs no one should store as given: too many tools, oversize or deeply nested schemas, text
// PostgreSQL's jsonb refuses (NUL, lone surrogates), a credential echoed back, malformed entries.
// Each is stored bounded with `truncated`, never a 500.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { TestApp } from '../support/app.ts';
import type { Tenant } from '../support/fixtures.ts';
import { startStreamableServer, type RunningServer } from '../support/mcp-servers.ts';
import { catalogLimits } from '../../src/modules/mcp-connections/probe/index.ts';
import { api, connectionBody, createConnection, setup } from '../mcp-connections/helpers.ts';

let app: TestApp;
let tenant: Tenant;
let server: RunningServer;
let offered: unknown[] = [];
const KEY = 'sk-catalog-echo-5d41402abc4b2a76';

before(async () => {
  ({ app, tenant } = await setup());
  server = await startStreamableServer({ apiKey: KEY, toolDefinitions: () => offered });
});

after(async () => {
  await server.close();
  await app.close();
});

async function catalogOf(tools: unknown[]) {
  offered = tools;
  const created = await createConnection(
    app.url,
    tenant.admin.token,
    connectionBody(server.url, { authType: 'apikey', apiKey: KEY }),
  );
  const response = await api(app.url, tenant.admin.token).get(`/v1/mcp-connections/${created.id}/tools`);
  assert.equal(response.status, 200, response.text);
  return response.body;
}

test('more tools than the limit: the first ones are stored, truncated', async () => {
  const body = await catalogOf(
    Array.from({ length: catalogLimits.maxTools + 20 }, (_, i) => ({ name: `t${i}`, inputSchema: { type: 'object' } })),
  );
  assert.equal(body.tools.length, catalogLimits.maxTools);
  assert.equal(body.tools[0].name, 't0');
  assert.equal(body.truncated, true);
});

test('an oversize or too deeply nested schema is replaced, the tool kept, truncated', async () => {
  let deep: Record<string, unknown> = { type: 'object' };
  for (let i = 0; i < 200; i += 1) deep = { type: 'object', properties: { x: deep } };
  const body = await catalogOf([
    { name: 'big', inputSchema: { type: 'object', description: 'x'.repeat(catalogLimits.maxSchemaBytes + 10) } },
    { name: 'deep', inputSchema: deep },
    { name: 'fine', inputSchema: { type: 'object', properties: { a: { type: 'string' } } } },
  ]);
  assert.deepEqual(
    body.tools.map((tool: { name: string; inputSchema: unknown }) => [tool.name, tool.inputSchema]),
    [
      ['big', { type: 'object' }],
      ['deep', { type: 'object' }],
      ['fine', { type: 'object', properties: { a: { type: 'string' } } }],
    ],
  );
  assert.equal(body.truncated, true);
});

test('NUL characters, lone surrogates and the echoed API key are cleaned out; long descriptions are cut', async () => {
  const body = await catalogOf([
    {
      name: 'nul\u0000name',
      description: `key ${KEY} and a lone \ud800 surrogate`,
      inputSchema: { type: 'object', properties: { [`k\u0000${KEY}`]: { type: 'string', default: 'a\u0000b' } } },
    },
    { name: 'long', description: 'd'.repeat(catalogLimits.maxDescriptionChars + 5), inputSchema: { type: 'object' } },
  ]);
  const text = JSON.stringify(body);
  assert.ok(!text.includes(KEY), 'the key never comes back');
  assert.ok(!text.includes('\\u0000'));
  assert.equal(body.tools[0].name, 'nulname');
  assert.match(body.tools[0].description, /^key \[redacted\] and a lone \uFFFD surrogate$/);
  assert.deepEqual(body.tools[0].inputSchema, {
    type: 'object',
    properties: { 'k[redacted]': { type: 'string', default: 'ab' } },
  });
  assert.equal(body.tools[1].description.length, catalogLimits.maxDescriptionChars);
  assert.equal(body.truncated, true);
});

test('duplicate names are kept once, the first', async () => {
  const body = await catalogOf([
    { name: 'same', inputSchema: { type: 'object' }, annotations: { destructiveHint: false, title: 'Same' } },
    { name: 'same', inputSchema: { type: 'object' } },
  ]);
  assert.equal(body.tools.length, 1);
  assert.deepEqual(body.tools[0].annotations, { title: 'Same', destructiveHint: false });
  assert.equal(body.truncated, false);
});
