import { startTestApp, type TestApp } from '../support/app.ts';
import { startDnsServer, type TestDnsServer } from '../support/dns-server.ts';
import { createTenant, type Tenant } from '../support/fixtures.ts';
import { api, type ApiResponse } from '../support/http.ts';
import { setPlanAsOperator } from '../support/identity.ts';

export interface ScimEnv {
  app: TestApp;
  dns: TestDnsServer;
  tenant: Tenant;
  close(): Promise<void>;
}

/** An app, a loopback DNS server and a tenant. With `domain`, the tenant is enterprise with that SSO domain verified. */
export async function startScimEnv(options: { domain?: string } = {}): Promise<ScimEnv> {
  const dns = await startDnsServer();
  const app = await startTestApp({ dnsServers: [dns.address] });
  const tenant = await createTenant(app.url);
  if (options.domain) await verifySso(app, dns, tenant.orgId, tenant.owner.token, options.domain);
  return {
    app,
    dns,
    tenant,
    async close() {
      await app.close();
      await dns.close();
    },
  };
}

export async function verifySso(app: TestApp, dns: TestDnsServer, orgId: string, token: string, domain: string) {
  await setPlanAsOperator(app, orgId, 'enterprise');
  const put = await api(app.url, token).put('/v1/sso/connection', {
    domain,
    issuer: 'https://idp.example.test',
    clientId: 'c',
  });
  if (put.status !== 200) throw new Error(`PUT /v1/sso/connection: ${put.text}`);
  dns.setTxt(put.body.connection.verification.recordName, [put.body.connection.verification.recordValue]);
  const verified = await api(app.url, token).post('/v1/sso/verify-domain');
  if (verified.status !== 200) throw new Error(`verify-domain: ${verified.text}`);
}

export async function rotateScimToken(app: TestApp, sessionToken: string): Promise<string> {
  const response = await api(app.url, sessionToken).post('/v1/scim/token');
  if (response.status !== 200) throw new Error(`POST /v1/scim/token: ${response.status} ${response.text}`);
  return response.body.scimToken;
}

/** A SCIM client the way identity providers talk: application/scim+json bodies, bearer token. */
export function scim(app: TestApp, token: string | undefined) {
  const client = api(app.url, token);
  const options = { headers: { 'content-type': 'application/scim+json', accept: 'application/scim+json' } };
  const path = (p: string) => `/scim/v2${p}`;
  return {
    get: (p: string): Promise<ApiResponse> => client.get(path(p), { headers: { accept: 'application/scim+json' } }),
    post: (p: string, body: unknown) => client.post(path(p), body, options),
    put: (p: string, body: unknown) => client.put(path(p), body, options),
    patch: (p: string, body: unknown) => client.patch(path(p), body, options),
    delete: (p: string) => client.delete(path(p)),
  };
}

export const patchOp = (...Operations: unknown[]) => ({
  schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
  Operations,
});

export const userBody = (userName: string, extra: Record<string, unknown> = {}) => ({
  schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
  userName,
  name: { givenName: 'Ann', familyName: 'Lee' },
  emails: [{ primary: true, value: userName, type: 'work' }],
  displayName: 'Ann Lee',
  active: true,
  ...extra,
});

export async function health(app: TestApp, sessionToken: string) {
  const response = await api(app.url, sessionToken).get('/v1/scim/connection');
  return response.body.health as Record<string, unknown>;
}

/** The organization membership of the account with this e-mail, as stored. */
export async function memberOf(
  app: TestApp,
  orgId: string,
  email: string,
): Promise<{ id: string; status: string; role: string; user_id: string } | undefined> {
  const { rows } = await app.db.query(
    `SELECT m.id, m.status, m.role, m.user_id FROM members m JOIN users u ON u.id = m.user_id
      WHERE m.organization_id = $1 AND lower(u.email) = lower($2)`,
    [orgId, email],
  );
  return rows[0];
}
