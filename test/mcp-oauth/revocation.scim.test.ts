// A member the directory deprovisions (SCIM DELETE /Users/{id}) loses their MCP OAuth tokens at the
// authorization server too (RFC 7009), as when an admin removes them; a suspension (active: false)
// keeps the membership, and so the tokens.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../support/app.ts';
import { startDnsServer, type TestDnsServer } from '../support/dns-server.ts';
import { createTenant, type Tenant } from '../support/fixtures.ts';
import { startOAuthMcpServer, type OAuthMcpServer } from '../support/oauth-mcp-server/index.ts';
import { patchOp, rotateScimToken, scim, userBody, verifySso } from '../scim/helpers.ts';
import { connectThroughOAuth, createOAuthConnection, type OAuthWorld } from './helpers.ts';

let dns: TestDnsServer;
let app: TestApp;
let tenant: Tenant;
let server: OAuthMcpServer;
let scimToken: string;
before(async () => {
  dns = await startDnsServer();
  app = await startTestApp({ dnsServers: [dns.address], allowedPrivateNetworks: ['127.0.0.0/8', '::1/128'] });
  tenant = await createTenant(app.url);
  await verifySso(app, dns, tenant.orgId, tenant.owner.token, tenant.member.email.split('@')[1]!);
  scimToken = await rotateScimToken(app, tenant.owner.token);
  server = await startOAuthMcpServer();
});
after(async () => {
  await server?.close();
  await app?.close();
  await dns?.close();
});

const world = (): OAuthWorld => ({
  app,
  tenant,
  server: () => {
    throw new Error('one server in this file');
  },
});

test('SCIM deprovisioning a member revokes their tokens; suspending them does not', async () => {
  const connection = await createOAuthConnection(world(), server.url);
  for (const person of [tenant.member, tenant.admin]) {
    assert.equal((await connectThroughOAuth(world(), person, connection.id)).callback.status, 200);
  }
  // The directory takes over the existing members (linked by e-mail).
  const directory = scim(app, scimToken);
  const linked = await Promise.all(
    [tenant.member, tenant.admin].map((person) => directory.post('/Users', userBody(person.email))),
  );
  for (const response of linked) assert.equal(response.status, 201, response.text);
  const [memberUser, adminUser] = linked.map((response) => response.body.id as string);

  const suspended = await directory.patch(
    `/Users/${adminUser}`,
    patchOp({ op: 'replace', path: 'active', value: false }),
  );
  assert.equal(suspended.status, 200, suspended.text);
  assert.equal(server.stats.revocations.length, 0, 'a suspension revokes nothing');

  const deleted = await directory.delete(`/Users/${memberUser}`);
  assert.equal(deleted.status, 204, deleted.text);
  assert.equal(server.stats.revocations.length, 2, "the deprovisioned member's access and refresh tokens");
  const { rows } = await app.db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM mcp_connection_credentials WHERE organization_id = $1 AND connection_id = $2',
    [tenant.orgId, connection.id],
  );
  assert.equal(rows[0]!.n, 1, "only the suspended admin's credential is left");
});
