// The spec's optional fields about what a connection's server demands and offers: requiredAuthType
// (learned by an unauthenticated request at POST .../test, or by a no-auth probe that passed),
// authTypeMismatch, authPolicyConfirmed and missingFeatures; each present only when known.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { TestApp } from '../support/app.ts';
import type { Tenant } from '../support/fixtures.ts';
import { startStreamableServer, type RunningServer } from '../support/mcp-servers.ts';
import { startOAuthMcpServer, type OAuthMcpServer } from '../support/oauth-mcp-server/index.ts';
import { api, connectionBody, createConnection, setup } from './helpers.ts';

let app: TestApp;
let tenant: Tenant;
let open: RunningServer;
let keyed: RunningServer;
let promptsOnly: RunningServer;
let oauth: OAuthMcpServer;

before(async () => {
  ({ app, tenant } = await setup());
  [open, keyed, promptsOnly, oauth] = await Promise.all([
    startStreamableServer({ tools: ['search'] }),
    startStreamableServer({ apiKey: 'key-1' }),
    startStreamableServer({ withoutTools: true, prompts: ['summarize'] }),
    startOAuthMcpServer(),
  ]);
});

after(async () => {
  await Promise.all([open, keyed, promptsOnly, oauth].map((server) => server.close()));
  await app.close();
});

const admin = () => api(app.url, tenant.admin.token);
const read = async (id: string, token = tenant.admin.token) => {
  const response = await api(app.url, token).get(`/v1/mcp-connections/${id}`);
  assert.equal(response.status, 200, response.text);
  return response.body;
};
const testRoute = async (id: string) => {
  const response = await admin().post(`/v1/mcp-connections/${id}/test`);
  assert.equal(response.status, 200, response.text);
  return response.body;
};

test('a no-auth connection: its passing probe shows the server demands nothing, the policy confirmed, no feature missing', async () => {
  const created = await createConnection(app.url, tenant.admin.token, connectionBody(open.url));
  assert.equal(created.requiredAuthType, 'none');
  assert.equal(created.authTypeMismatch, false);
  assert.equal(created.authPolicyConfirmed, true);
  assert.deepEqual(created.missingFeatures, []);
  // A member who may use it reads the same.
  const seen = await read(created.id, tenant.member.token);
  assert.equal(seen.requiredAuthType, 'none');
  assert.deepEqual(seen.missingFeatures, []);
});

test('an API-key connection: unknown until tested; the test learns the server refuses without a key and names no OAuth (apikey)', async () => {
  const created = await createConnection(
    app.url,
    tenant.admin.token,
    connectionBody(keyed.url, { authType: 'apikey', apiKey: 'key-1' }),
  );
  assert.equal(created.requiredAuthType, null);
  assert.equal('authTypeMismatch' in created, false, 'nothing to compare with yet');
  assert.equal(created.authPolicyConfirmed, false);
  assert.deepEqual(created.missingFeatures, [], 'the probe with the key saw the tools capability');
  assert.equal((await testRoute(created.id)).ok, true);
  const seen = await read(created.id);
  assert.equal(seen.requiredAuthType, 'apikey');
  assert.equal(seen.authTypeMismatch, false);
  assert.equal(seen.authPolicyConfirmed, true);
});

test('an API key configured for a server that demands none: the test shows the mismatch', async () => {
  const created = await createConnection(
    app.url,
    tenant.admin.token,
    connectionBody(open.url, { authType: 'apikey', apiKey: 'not-needed' }),
  );
  assert.equal((await testRoute(created.id)).ok, true);
  const seen = await read(created.id);
  assert.equal(seen.requiredAuthType, 'none');
  assert.equal(seen.authTypeMismatch, true);
  assert.equal(seen.authPolicyConfirmed, false);
});

test('an OAuth connection: nothing known at creation; the test learns oauth from the 401 naming resource metadata, no credential needed', async () => {
  const created = await createConnection(
    app.url,
    tenant.admin.token,
    connectionBody(oauth.url, { authType: 'oauth', credentialMode: 'per_member' }),
  );
  assert.equal(created.requiredAuthType, null);
  assert.equal('authTypeMismatch' in created, false);
  assert.equal(created.authPolicyConfirmed, false);
  assert.equal('missingFeatures' in created, false, 'no probe of the server yet');
  assert.equal((await testRoute(created.id)).ok, false, 'not connected yet');
  const seen = await read(created.id);
  assert.equal(seen.requiredAuthType, 'oauth');
  assert.equal(seen.authTypeMismatch, false);
  assert.equal(seen.authPolicyConfirmed, true);
});

test('a server without the tools capability: missingFeatures names tools', async () => {
  const created = await createConnection(app.url, tenant.admin.token, connectionBody(promptsOnly.url));
  assert.deepEqual(created.missingFeatures, ['tools']);
  const listed = await admin().get('/v1/mcp-connections');
  assert.deepEqual(listed.body.connections.find((c: { id: string }) => c.id === created.id).missingFeatures, ['tools']);
});

test('what was learned belongs to the url: pointed at another server, it is unknown again until checked', async () => {
  const created = await createConnection(
    app.url,
    tenant.admin.token,
    connectionBody(keyed.url, { authType: 'apikey', apiKey: 'key-1' }),
  );
  await testRoute(created.id);
  assert.equal((await read(created.id)).requiredAuthType, 'apikey');
  const current = await read(created.id);
  const edited = await admin().put(`/v1/mcp-connections/${created.id}`, {
    expectedUpdatedAt: current.updatedAt,
    name: current.name,
    url: promptsOnly.url,
    authType: 'apikey',
    credentialMode: 'shared',
    access: { orgWide: true },
    apiKey: 'any',
  });
  assert.equal(edited.status, 200, edited.text);
  assert.equal(edited.body.requiredAuthType, null);
  assert.equal('authTypeMismatch' in edited.body, false);
  assert.deepEqual(edited.body.missingFeatures, ['tools'], "the new server's catalog, from the edit's probe");
  // Only the authType changes (same url): what the server demands still holds, now a match.
  const again = await read(created.id);
  const toNone = await admin().put(`/v1/mcp-connections/${created.id}`, {
    expectedUpdatedAt: again.updatedAt,
    name: again.name,
    url: promptsOnly.url,
    authType: 'none',
    credentialMode: 'shared',
    access: { orgWide: true },
  });
  assert.equal(toNone.status, 200, toNone.text);
  assert.equal(toNone.body.requiredAuthType, 'none');
  assert.equal(toNone.body.authPolicyConfirmed, true);
});

test('an unreachable server teaches nothing: requiredAuthType stays as it was', async () => {
  const server = await startStreamableServer();
  const created = await createConnection(app.url, tenant.admin.token, connectionBody(server.url));
  assert.equal(created.requiredAuthType, 'none');
  await server.close();
  const tested = await testRoute(created.id);
  assert.equal(tested.ok, false);
  assert.equal((await read(created.id)).requiredAuthType, 'none');
});

test('another organization never sees these fields of a connection (404), and the learned values are per connection', async () => {
  const created = await createConnection(app.url, tenant.admin.token, connectionBody(open.url));
  const { createTenant } = await import('../support/fixtures.ts');
  const other = await createTenant(app.url);
  const foreign = await api(app.url, other.admin.token).get(`/v1/mcp-connections/${created.id}`);
  assert.equal(foreign.status, 404);
  const tested = await api(app.url, other.admin.token).post(`/v1/mcp-connections/${created.id}/test`);
  assert.equal(tested.status, 404);
  const { rows } = await app.db.query(
    'SELECT organization_id FROM mcp_connection_auth_requirements WHERE connection_id = $1',
    [created.id],
  );
  assert.deepEqual(
    rows.map((r) => r.organization_id),
    [tenant.orgId],
  );
});
