import type { Config } from '../../src/config.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { startDnsServer, type TestDnsServer } from '../support/dns-server.ts';
import { api } from '../support/http.ts';
import { setPlanAsOperator } from '../support/identity.ts';

/** An app whose SSO checks ask a DNS server on loopback that the test controls. */
export async function startSsoApp(
  overrides: Partial<Config> = {},
): Promise<{ app: TestApp; dns: TestDnsServer; close(): Promise<void> }> {
  const dns = await startDnsServer();
  const app = await startTestApp({ dnsServers: [dns.address], ...overrides });
  return {
    app,
    dns,
    async close() {
      await app.close();
      await dns.close();
    },
  };
}

export async function setPlan(app: TestApp, organizationId: string, plan: 'free' | 'team' | 'enterprise') {
  await setPlanAsOperator(app, organizationId, plan);
}

export const connectionBody = (domain: string, extra: Record<string, unknown> = {}) => ({
  domain,
  issuer: 'https://idp.example.test/oauth2/default',
  clientId: 'client-123',
  ...extra,
});

/** Puts a connection for `domain`, publishes its record and verifies it. */
export async function verifiedConnection(app: TestApp, dns: TestDnsServer, token: string, domain: string) {
  const put = await api(app.url, token).put('/v1/sso/connection', connectionBody(domain));
  if (put.status !== 200) throw new Error(`PUT /v1/sso/connection: ${put.status} ${put.text}`);
  dns.setTxt(put.body.connection.verification.recordName, [put.body.connection.verification.recordValue]);
  const verified = await api(app.url, token).post('/v1/sso/verify-domain');
  if (verified.status !== 200) throw new Error(`verify-domain: ${verified.status} ${verified.text}`);
  return verified.body.connection;
}
