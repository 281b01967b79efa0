// Who may read a connection's tools and set its tool policy, and what bad input gets.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { TestApp } from '../support/app.ts';
import type { Tenant } from '../support/fixtures.ts';
import { startStreamableServer, type RunningServer } from '../support/mcp-servers.ts';
import { api, connectionBody, createConnection, setup } from '../mcp-connections/helpers.ts';

let app: TestApp;
let tenant: Tenant;
let server: RunningServer;
let restricted: Record<string, any>; // usable by nobody but admins
let open: Record<string, any>; // org-wide

before(async () => {
  ({ app, tenant } = await setup());
  server = await startStreamableServer({ tools: ['search'] });
  restricted = await createConnection(
    app.url,
    tenant.admin.token,
    connectionBody(server.url, { access: { orgWide: false } }),
  );
  open = await createConnection(app.url, tenant.admin.token, connectionBody(server.url));
});

after(async () => {
  await server.close();
  await app.close();
});

const policy = { mode: 'deny_list', tools: ['search'], destructiveNeedsApproval: true };
const toolsOf = (id: string) => `/v1/mcp-connections/${id}/tools`;
const policyOf = (id: string) => `/v1/mcp-connections/${id}/tool-policy`;

async function currentPolicy(id: string) {
  return (await api(app.url, tenant.admin.token).get(`/v1/mcp-connections/${id}`)).body.toolPolicy;
}

describe('GET .../tools', () => {
  test('anonymous and a bad token: 401', async () => {
    assert.equal((await api(app.url).get(toolsOf(open.id))).status, 401);
    assert.equal((await api(app.url, 'not-a-token').get(toolsOf(open.id))).status, 401);
  });

  test('a member may not see the tools of a connection they may not use: 404, as if it did not exist', async () => {
    const response = await api(app.url, tenant.member.token).get(toolsOf(restricted.id));
    assert.equal(response.status, 404);
    assert.equal(response.body.error, 'connection_not_found');
    assert.equal((await api(app.url, tenant.member.token).get(toolsOf(open.id))).status, 200);
  });

  test("another organization's admin: 404; a signed-in non-member: 403", async () => {
    const other = await api(app.url, tenant.otherAdmin.token).get(toolsOf(open.id));
    assert.equal(other.status, 404);
    assert.equal(other.body.error, 'connection_not_found');
    assert.equal((await api(app.url, tenant.outsider.token).get(toolsOf(open.id))).status, 403);
  });

  test('tampered ids: a malformed id is 400, an unknown one 404', async () => {
    const malformed = await api(app.url, tenant.admin.token).get(toolsOf('emc_nope'));
    assert.equal(malformed.status, 400);
    assert.equal(malformed.body.error, 'invalid_request');
    const unknown = await api(app.url, tenant.admin.token).get(toolsOf(`${open.id.slice(0, -4)}zzzz`));
    assert.equal(unknown.status, 404);
  });
});

describe('PUT .../tool-policy', () => {
  test('a member (even one who may use the connection): 403, nothing changed', async () => {
    const response = await api(app.url, tenant.member.token).put(policyOf(open.id), policy);
    assert.equal(response.status, 403);
    assert.equal((await currentPolicy(open.id)).mode, 'all');
  });

  test("anonymous: 401; another organization's admin: 404; nothing changed", async () => {
    assert.equal((await api(app.url).put(policyOf(open.id), policy)).status, 401);
    const other = await api(app.url, tenant.otherAdmin.token).put(policyOf(open.id), policy);
    assert.equal(other.status, 404);
    assert.equal((await currentPolicy(open.id)).mode, 'all');
  });

  test('the owner may set it', async () => {
    const response = await api(app.url, tenant.owner.token).put(policyOf(restricted.id), {
      mode: 'allow_list',
      tools: [],
      destructiveNeedsApproval: false,
    });
    assert.equal(response.status, 200, response.text);
    assert.equal(response.body.toolPolicy.mode, 'allow_list');
  });

  test('bad bodies: 400 invalid_request pointing at the field, nothing changed', async () => {
    const cases: Array<[unknown, Array<string | number>]> = [
      [{ mode: 'some', tools: [], destructiveNeedsApproval: false }, ['mode']],
      [{ mode: 'all', tools: ['search'], destructiveNeedsApproval: false }, ['tools']],
      [{ mode: 'deny_list', tools: [''], destructiveNeedsApproval: false }, ['tools', 0]],
      [{ mode: 'deny_list', tools: ['x'.repeat(129)], destructiveNeedsApproval: false }, ['tools', 0]],
      [
        { mode: 'deny_list', tools: Array.from({ length: 1001 }, (_, i) => `t${i}`), destructiveNeedsApproval: false },
        ['tools'],
      ],
      [{ mode: 'deny_list', tools: [7], destructiveNeedsApproval: false }, ['tools', 0]],
      [{ mode: 'deny_list', tools: [] }, ['destructiveNeedsApproval']],
      [{ mode: 'deny_list', tools: 'search', destructiveNeedsApproval: false }, ['tools']],
    ];
    for (const [body, path] of cases) {
      const response = await api(app.url, tenant.admin.token).put(policyOf(open.id), body);
      assert.equal(response.status, 400, `${JSON.stringify(body).slice(0, 80)}: ${response.text}`);
      assert.equal(response.body.error, 'invalid_request');
      assert.ok(
        response.body.details.some(
          (detail: { path: unknown[] }) => JSON.stringify(detail.path) === JSON.stringify(path),
        ),
        response.text,
      );
    }
    assert.equal((await currentPolicy(open.id)).mode, 'all');
  });

  test('a deleted connection: 404 for its tools and its policy', async () => {
    const doomed = await createConnection(app.url, tenant.admin.token, connectionBody(server.url));
    assert.equal((await api(app.url, tenant.admin.token).delete(`/v1/mcp-connections/${doomed.id}`)).status, 204);
    assert.equal((await api(app.url, tenant.admin.token).put(policyOf(doomed.id), policy)).status, 404);
    assert.equal((await api(app.url, tenant.admin.token).get(toolsOf(doomed.id))).status, 404);
  });
});
