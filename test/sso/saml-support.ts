// An app, a tenant on the enterprise plan whose SSO connection is SAML, pointing at a real IdP on
// loopback (test/support/saml-idp.ts, samlify signing with a key generated here) with example.test
// verified through the test's DNS server, and the steps of a sign-in as an app and a browser take them.
import type { Config } from '../../src/config.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { startDnsServer, type TestDnsServer } from '../support/dns-server.ts';
import { createTenant, type Tenant } from '../support/fixtures.ts';
import { api } from '../support/http.ts';
import { setPlanAsOperator } from '../support/identity.ts';
import { cookieHeader, type CookieJar } from '../support/oidc-idp.ts';
import { startSamlIdp, type SamlAnswer, type SamlPerson, type TestSamlIdp } from '../support/saml-idp.ts';
import { appRedirectUri, identityProviderUrl, pkcePair, startInBrowser } from './oidc-support.ts';

export { appRedirectUri, pkcePair, startInBrowser };

export interface SamlWorld {
  app: TestApp;
  dns: TestDnsServer;
  idp: TestSamlIdp;
  tenant: Tenant;
  connectionId: string;
  close(): Promise<void>;
}

export async function startSamlWorld(overrides: Partial<Config> = {}): Promise<SamlWorld> {
  const dns = await startDnsServer();
  const app = await startTestApp({ dnsServers: [dns.address], allowedPrivateNetworks: ['127.0.0.1/32'], ...overrides });
  const tenant = await createTenant(app.url);
  await setPlanAsOperator(app, tenant.orgId, 'enterprise');
  const idp = await startSamlIdp();
  const put = await api(app.url, tenant.owner.token).put('/v1/sso/connection', {
    domain: 'example.test',
    protocol: 'saml',
    idpMetadataXml: idp.metadataXml,
  });
  if (put.status !== 200) throw new Error(`PUT /v1/sso/connection: ${put.status} ${put.text}`);
  dns.setTxt(put.body.connection.verification.recordName, [put.body.connection.verification.recordValue]);
  const verified = await api(app.url, tenant.owner.token).post('/v1/sso/verify-domain');
  if (verified.status !== 200) throw new Error(`verify-domain: ${verified.status} ${verified.text}`);
  return {
    app,
    dns,
    idp,
    tenant,
    connectionId: put.body.connection.id,
    async close() {
      await idp.close();
      await app.close();
      await dns.close();
    },
  };
}

/** Posts the IdP's form to the ACS as a browser (whose cookies are `jar`) would; the answer is not followed. */
export async function postToAcs(
  url: string,
  fields: { SAMLResponse?: string; RelayState?: string },
  jar: CookieJar = new Map(),
) {
  const response = await fetch(url, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: cookieHeader(jar) },
    body: new URLSearchParams(fields as Record<string, string>).toString(),
  });
  const location = response.headers.get('location') ?? undefined;
  return {
    status: response.status,
    location,
    contentType: response.headers.get('content-type'),
    text: await response.text(),
    code: location ? (new URL(location).searchParams.get('code') ?? undefined) : undefined,
  };
}

/**
 * Starts a sign-in for `email` in a browser of its own, lets the IdP answer as `person`, and posts its
 * form to orgplane's ACS from that browser (on `acsBase`, the world's app by default).
 */
export async function samlSignIn(
  world: SamlWorld,
  email: string,
  person: SamlPerson,
  options: { reauthenticate?: boolean; acsBase?: string } = {},
) {
  const pkce = pkcePair();
  const started = await api(world.app.url).post('/v1/auth/sso/start', {
    email,
    redirectUri: appRedirectUri,
    codeChallenge: pkce.challenge,
    codeChallengeMethod: 'S256',
    ...(options.reauthenticate ? { reauthenticate: true } : {}),
  });
  if (started.status !== 200) throw new Error(`start: ${started.status} ${started.text}`);
  world.idp.signInAs(person);
  const jar: CookieJar = new Map();
  const idpUrl = await identityProviderUrl(world.app, started.body.authorizationUrl, jar);
  const answer: SamlAnswer = await world.idp.answer(idpUrl);
  const action = options.acsBase ? `${options.acsBase}${new URL(answer.action).pathname}` : answer.action;
  const posted = await postToAcs(action, { SAMLResponse: answer.SAMLResponse, RelayState: answer.RelayState }, jar);
  return {
    ...posted,
    verifier: pkce.verifier,
    answer,
    jar,
    idpUrl,
    authorizationUrl: started.body.authorizationUrl as string,
  };
}

export const personOf = (user: { email: string; name?: string }, nameId = user.email): SamlPerson => ({
  nameId,
  email: user.email,
  name: user.name ?? 'Someone',
});

/** The connection's last error, as the owner sees it. */
export async function lastError(world: SamlWorld) {
  return (await api(world.app.url, world.tenant.owner.token).get('/v1/sso/connection')).body.connection.lastError as {
    category: string;
    message: string;
  } | null;
}
