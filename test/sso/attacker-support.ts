// The attacker of the SSO and desktop sign-in security tests: the admin of another organization (the
// tenant's second one, Globex), on the enterprise plan, with an SSO connection of her own: her domain,
// verified through the test's DNS server, at an OpenID Provider she runs. Whatever orgplane sends to
// that provider's token endpoint, she reads (`receivedCodes`).
import { api } from '../support/http.ts';
import type { TestApp } from '../support/app.ts';
import type { TestDnsServer } from '../support/dns-server.ts';
import type { Tenant } from '../support/fixtures.ts';
import { setPlanAsOperator } from '../support/identity.ts';
import { startTestIdp, type CookieJar, type TestIdp } from '../support/oidc-idp.ts';
import { appRedirectUri, identityProviderUrl, pkcePair } from './oidc-support.ts';

export const attackerDomain = 'attacker.test';

export interface Attacker {
  /** Her own identity provider. */
  idp: TestIdp;
  /** Her browser. */
  jar: CookieJar;
  /**
   * orgplane's OIDC callback URL for a sign-in she starts for her own domain and opens in her browser (as
   * far as her IdP): its state, and her issuer (RFC 9207's `iss`, which the callback checks). A code added
   * to it is exchanged at her IdP's token endpoint.
   */
  ownCallback(): Promise<string>;
  close(): Promise<void>;
}

export async function startAttacker(app: TestApp, dns: TestDnsServer, tenant: Tenant): Promise<Attacker> {
  const admin = tenant.otherAdmin;
  await setPlanAsOperator(app, tenant.otherOrgId, 'enterprise');
  const idp = await startTestIdp({ redirectUri: `${app.config.publicUrl}/v1/auth/sso/oidc/callback` });
  const put = await api(app.url, admin.token).put('/v1/sso/connection', {
    domain: attackerDomain,
    issuer: idp.issuer,
    clientId: idp.clientId,
    clientSecret: idp.clientSecret,
  });
  if (put.status !== 200) throw new Error(`the attacker's PUT /v1/sso/connection: ${put.status} ${put.text}`);
  dns.setTxt(put.body.connection.verification.recordName, [put.body.connection.verification.recordValue]);
  const verified = await api(app.url, admin.token).post('/v1/sso/verify-domain');
  if (verified.status !== 200) throw new Error(`the attacker's verify-domain: ${verified.status} ${verified.text}`);
  const jar: CookieJar = new Map();
  return {
    idp,
    jar,
    async ownCallback() {
      const started = await api(app.url).post('/v1/auth/sso/start', {
        email: `eve@${attackerDomain}`,
        redirectUri: appRedirectUri,
        codeChallenge: pkcePair().challenge,
        codeChallengeMethod: 'S256',
      });
      if (started.status !== 200) throw new Error(`the attacker's own start: ${started.status} ${started.text}`);
      const state = new URL(await identityProviderUrl(app, started.body.authorizationUrl, jar)).searchParams.get(
        'state',
      );
      if (!state) throw new Error("her identity provider's URL carries no state");
      return `${app.config.publicUrl}/v1/auth/sso/oidc/callback?${new URLSearchParams({ state, iss: idp.issuer })}`;
    },
    close: () => idp.close(),
  };
}
