// GET /v1/mcp-connections/{id}/tools and PUT .../tool-policy against real SDK servers: the catalog
// each successful probe stores (annotations, prompt and resource counts, serverInfo), a catalog that
// changes between probes, and the policy applied (allow/deny lists, absent tools, approvals).
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { TestApp } from '../support/app.ts';
import type { Tenant } from '../support/fixtures.ts';
import { startStreamableServer, type RunningServer } from '../support/mcp-servers.ts';
import { api, connectionBody, createConnection, setup } from '../mcp-connections/helpers.ts';

let app: TestApp;
let tenant: Tenant;
let annotated: RunningServer;
let changing: RunningServer;
let keyed: RunningServer;
let offered: unknown[];

const readTool = {
  name: 'search',
  title: 'Search the docs',
  description: 'Full-text search',
  inputSchema: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
  annotations: { readOnlyHint: true, openWorldHint: false },
};
const deleteTool = {
  name: 'delete_page',
  description: 'Deletes a page',
  inputSchema: { type: 'object', properties: { id: { type: 'string' } } },
  annotations: { destructiveHint: true, idempotentHint: true },
};
const plainTool = { name: 'plain', inputSchema: { type: 'object' } }; // no annotations: may be destructive

before(async () => {
  ({ app, tenant } = await setup());
  offered = [readTool, deleteTool];
  [annotated, changing, keyed] = await Promise.all([
    startStreamableServer({
      toolDefinitions: () => [readTool, deleteTool, plainTool],
      prompts: ['summarize', 'translate'],
      resources: ['file:///a', 'file:///b', 'file:///c'],
      serverInfo: { name: 'docs-server', version: '2.4.1' },
    }),
    startStreamableServer({ toolDefinitions: () => offered }),
    startStreamableServer({ apiKey: 'tool-key-1', toolDefinitions: () => [readTool] }),
  ]);
});

after(async () => {
  await Promise.all([annotated, changing, keyed].map((server) => server.close()));
  await app.close();
});

const admin = () => api(app.url, tenant.admin.token);
const member = () => api(app.url, tenant.member.token);

describe('the catalog', () => {
  test('create stores the catalog: serverInfo, protocol version, capabilities, tools with schemas and annotations, counts', async () => {
    const created = await createConnection(app.url, tenant.admin.token, connectionBody(annotated.url));
    assert.deepEqual(created.toolPolicy, { mode: 'all', tools: [], destructiveNeedsApproval: false, updatedAt: null });
    const response = await admin().get(`/v1/mcp-connections/${created.id}/tools`);
    assert.equal(response.status, 200, response.text);
    const body = response.body;
    assert.deepEqual(body.serverInfo, { name: 'docs-server', version: '2.4.1' });
    assert.match(body.protocolVersion, /^\d{4}-\d\d-\d\d$/);
    assert.ok(
      body.capabilities.tools && body.capabilities.prompts && body.capabilities.resources,
      JSON.stringify(body.capabilities),
    );
    assert.equal(body.promptCount, 2);
    assert.equal(body.resourceCount, 3);
    assert.equal(body.truncated, false);
    assert.match(body.catalogUpdatedAt, /^\d{4}-\d\d-\d\dT/);
    assert.deepEqual(body.tools, [
      { ...readTool, allowed: true, needsApproval: false, absent: false },
      { ...deleteTool, allowed: true, needsApproval: false, absent: false },
      { ...plainTool, allowed: true, needsApproval: false, absent: false },
    ]);
  });

  test('a member who may use the connection sees it; POST .../test takes the catalog again as it is now', async () => {
    const created = await createConnection(app.url, tenant.admin.token, connectionBody(changing.url));
    const first = await member().get(`/v1/mcp-connections/${created.id}/tools`);
    assert.equal(first.status, 200, first.text);
    assert.deepEqual(
      first.body.tools.map((tool: { name: string }) => tool.name),
      ['search', 'delete_page'],
    );

    offered = [deleteTool, { name: 'new_tool', inputSchema: { type: 'object' } }];
    const tested = await admin().post(`/v1/mcp-connections/${created.id}/test`);
    assert.equal(tested.body.ok, true, tested.text);
    const second = await member().get(`/v1/mcp-connections/${created.id}/tools`);
    assert.deepEqual(
      second.body.tools.map((tool: { name: string }) => tool.name),
      ['delete_page', 'new_tool'],
    );
    assert.ok(second.body.catalogUpdatedAt >= first.body.catalogUpdatedAt);
    offered = [readTool, deleteTool];
  });

  test('an API key stored by PUT .../credentials takes the catalog with that key', async () => {
    const created = await createConnection(
      app.url,
      tenant.admin.token,
      connectionBody(keyed.url, { authType: 'apikey', credentialMode: 'per_member' }),
    );
    const before = await admin().get(`/v1/mcp-connections/${created.id}/tools`);
    assert.equal(before.body.catalogUpdatedAt, null, 'no catalog before any key worked');
    assert.deepEqual(before.body.tools, []);
    const stored = await member().put(`/v1/mcp-connections/${created.id}/credentials`, { apiKey: 'tool-key-1' });
    assert.equal(stored.status, 200, stored.text);
    const after = await member().get(`/v1/mcp-connections/${created.id}/tools`);
    assert.deepEqual(
      after.body.tools.map((tool: { name: string }) => tool.name),
      ['search'],
    );
  });

  test('a catalog of a former url is not shown after an edit to a server not probed yet', async () => {
    const created = await createConnection(app.url, tenant.admin.token, connectionBody(annotated.url));
    // An OAuth identity is not probed on edit: the stored catalog belongs to the no-auth identity.
    const edited = await admin().put(`/v1/mcp-connections/${created.id}`, {
      expectedUpdatedAt: created.updatedAt,
      name: created.name,
      url: created.url,
      authType: 'oauth',
      credentialMode: 'shared',
      access: { orgWide: true },
    });
    assert.equal(edited.status, 200, edited.text);
    const tools = await admin().get(`/v1/mcp-connections/${created.id}/tools`);
    assert.equal(tools.body.catalogUpdatedAt, null);
    assert.deepEqual(tools.body.tools, []);
  });
});

describe('the tool policy', () => {
  test('allow-list: only the tools named are allowed; the response and the list carry the policy', async () => {
    const created = await createConnection(app.url, tenant.admin.token, connectionBody(annotated.url));
    const set = await admin().put(`/v1/mcp-connections/${created.id}/tool-policy`, {
      mode: 'allow_list',
      tools: ['search', 'search'],
      destructiveNeedsApproval: false,
    });
    assert.equal(set.status, 200, set.text);
    assert.equal(set.body.toolPolicy.mode, 'allow_list');
    assert.deepEqual(set.body.toolPolicy.tools, ['search']);
    assert.match(set.body.toolPolicy.updatedAt, /^\d{4}-/);
    assert.equal(set.body.updatedAt, created.updatedAt, 'the policy is not an edit of the connection');
    const fetched = await member().get(`/v1/mcp-connections/${created.id}`);
    assert.deepEqual(fetched.body.toolPolicy, set.body.toolPolicy);
    const tools = await member().get(`/v1/mcp-connections/${created.id}/tools`);
    assert.deepEqual(
      tools.body.tools.map((tool: { name: string; allowed: boolean }) => [tool.name, tool.allowed]),
      [
        ['search', true],
        ['delete_page', false],
        ['plain', false],
      ],
    );
  });

  test('deny-list with destructive approval: denied tools are not allowed; allowed tools that may be destructive need approval', async () => {
    const created = await createConnection(app.url, tenant.admin.token, connectionBody(annotated.url));
    const set = await admin().put(`/v1/mcp-connections/${created.id}/tool-policy`, {
      mode: 'deny_list',
      tools: ['delete_page'],
      destructiveNeedsApproval: true,
    });
    assert.equal(set.status, 200, set.text);
    const tools = await admin().get(`/v1/mcp-connections/${created.id}/tools`);
    assert.deepEqual(
      tools.body.tools.map((tool: { name: string; allowed: boolean; needsApproval: boolean }) => [
        tool.name,
        tool.allowed,
        tool.needsApproval,
      ]),
      [
        ['search', true, false],
        ['delete_page', false, false],
        ['plain', true, true],
      ],
    );
    const back = await admin().put(`/v1/mcp-connections/${created.id}/tool-policy`, {
      mode: 'all',
      destructiveNeedsApproval: false,
    });
    assert.equal(back.status, 200, back.text);
    assert.deepEqual(back.body.toolPolicy.tools, []);
  });

  test('a tool gone from the catalog stays in the policy, shown absent, and keeps its decision when it returns', async () => {
    const created = await createConnection(app.url, tenant.admin.token, connectionBody(changing.url));
    await admin().put(`/v1/mcp-connections/${created.id}/tool-policy`, {
      mode: 'allow_list',
      tools: ['delete_page', 'future_tool'],
      destructiveNeedsApproval: false,
    });
    offered = [readTool];
    assert.equal((await admin().post(`/v1/mcp-connections/${created.id}/test`)).body.ok, true);
    const gone = await admin().get(`/v1/mcp-connections/${created.id}/tools`);
    assert.deepEqual(gone.body.tools, [
      { ...readTool, allowed: false, needsApproval: false, absent: false },
      { name: 'delete_page', inputSchema: null, allowed: true, needsApproval: false, absent: true },
      { name: 'future_tool', inputSchema: null, allowed: true, needsApproval: false, absent: true },
    ]);
    assert.deepEqual(gone.body.toolPolicy.tools, ['delete_page', 'future_tool']);
    offered = [readTool, deleteTool];
    assert.equal((await admin().post(`/v1/mcp-connections/${created.id}/test`)).body.ok, true);
    const back = await admin().get(`/v1/mcp-connections/${created.id}/tools`);
    const returned = back.body.tools.find((tool: { name: string }) => tool.name === 'delete_page');
    assert.equal(returned.allowed, true);
    assert.equal(returned.absent, false);
  });
});
