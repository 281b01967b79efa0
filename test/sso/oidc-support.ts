// An app, a tenant on the enterprise plan whose SSO connection points at a real OpenID Provider on
// loopback (test/support/oidc-idp.ts) with example.test verified through the test's DNS server, and the
// steps of a sign-in as an app would take them.
import { createHash, randomBytes } from 'node:crypto';
import type { Config } from '../../src/config.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { startDnsServer, type TestDnsServer } from '../support/dns-server.ts';
import { createTenant, type Tenant } from '../support/fixtures.ts';
import { api } from '../support/http.ts';
import { setPlanAsOperator } from '../support/identity.ts';
import {
  cookieHeader,
  followRedirects,
  keepCookies,
  startTestIdp,
  type CookieJar,
  type IdpAccount,
  type TestIdp,
  type TestIdpOptions,
} from '../support/oidc-idp.ts';

export const appRedirectUri = 'http://127.0.0.1:9/sso-done';

export interface OidcWorld {
  app: TestApp;
  dns: TestDnsServer;
  idp: TestIdp;
  tenant: Tenant;
  close(): Promise<void>;
}

export interface OidcConnectionOptions {
  /** The connection's domain, verified through the test's DNS server: example.test unless given. */
  domain?: string;
  /** How the IdP is shaped (test/sso/provider-shapes.ts); oidc-provider as it ships unless given. */
  idp?: Omit<TestIdpOptions, 'redirectUri'>;
  /** More of PUT /v1/sso/connection's body (emailTrust, jitProvisioning...). */
  connection?: Record<string, unknown>;
}

/** A real OpenID Provider for `tenant`'s organization, and its SSO connection to it with a verified domain. */
export async function connectOidc(
  app: TestApp,
  dns: TestDnsServer,
  tenant: Tenant,
  options: OidcConnectionOptions = {},
): Promise<TestIdp> {
  const idp = await startTestIdp({ redirectUri: `${app.config.publicUrl}/v1/auth/sso/oidc/callback`, ...options.idp });
  const put = await api(app.url, tenant.owner.token).put('/v1/sso/connection', {
    domain: options.domain ?? 'example.test',
    issuer: idp.issuer,
    clientId: idp.clientId,
    clientSecret: idp.clientSecret,
    ...options.connection,
  });
  if (put.status !== 200) throw new Error(`PUT /v1/sso/connection: ${put.status} ${put.text}`);
  dns.setTxt(put.body.connection.verification.recordName, [put.body.connection.verification.recordValue]);
  const verified = await api(app.url, tenant.owner.token).post('/v1/sso/verify-domain');
  if (verified.status !== 200) throw new Error(`verify-domain: ${verified.status} ${verified.text}`);
  return idp;
}

export async function startOidcWorld(
  options: { interactive?: boolean; app?: Partial<Config> } & OidcConnectionOptions = {},
): Promise<OidcWorld> {
  const dns = await startDnsServer();
  const app = await startTestApp({
    dnsServers: [dns.address],
    allowedPrivateNetworks: ['127.0.0.1/32'],
    ...options.app,
  });
  const tenant = await createTenant(app.url);
  await setPlanAsOperator(app, tenant.orgId, 'enterprise');
  const idp = await connectOidc(app, dns, tenant, {
    ...options,
    idp: { ...options.idp, ...(options.interactive ? { interactive: true } : {}) },
  });
  return {
    app,
    dns,
    idp,
    tenant,
    async close() {
      await idp.close();
      await app.close();
      await dns.close();
    },
  };
}

export function pkcePair() {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/**
 * Starts a sign-in for `email` and opens its link in a browser of its own, as far as the identity
 * provider: that browser (`jar`), the link (`authorizationUrl`), the provider's URL, and the PKCE verifier.
 */
export async function startInBrowser(
  world: { app: TestApp },
  email: string,
  options: { reauthenticate?: boolean; redirectUri?: string } = {},
) {
  const pkce = pkcePair();
  const started = await api(world.app.url).post('/v1/auth/sso/start', {
    email,
    redirectUri: options.redirectUri ?? appRedirectUri,
    codeChallenge: pkce.challenge,
    codeChallengeMethod: 'S256',
    ...(options.reauthenticate ? { reauthenticate: true } : {}),
  });
  if (started.status !== 200) throw new Error(`start: ${started.status} ${started.text}`);
  const jar: CookieJar = new Map();
  const idpUrl = await identityProviderUrl(world.app, started.body.authorizationUrl, jar);
  return { jar, idpUrl, verifier: pkce.verifier, authorizationUrl: started.body.authorizationUrl as string };
}

/** A request as the browser whose cookies are `jar`, its redirect not followed. */
export function browserFetch(jar: CookieJar, url: string | URL, init: RequestInit = {}): Promise<Response> {
  return fetch(url, {
    redirect: 'manual',
    ...init,
    headers: { ...(init.headers as Record<string, string> | undefined), cookie: cookieHeader(jar) },
  });
}

/**
 * Starts a sign-in for `email` in a browser of its own and lets the IdP log `account` in; where
 * orgplane's callback sent that browser, or the page it showed.
 */
export async function signInAtIdp(
  world: OidcWorld,
  email: string,
  account: IdpAccount,
  options: { reauthenticate?: boolean } = {},
) {
  const browser = await startInBrowser(world, email, options);
  world.idp.signInAs(account);
  const result = await followRedirects(browser.idpUrl, appRedirectUri, browser.jar);
  const code = result.location ? (new URL(result.location).searchParams.get('code') ?? undefined) : undefined;
  return { ...result, ...browser, code };
}

export const accountOf = (
  user: { email: string; name?: string },
  sub = `sub-${randomBytes(4).toString('hex')}`,
): IdpAccount => ({ sub, email: user.email, email_verified: true, name: user.name ?? 'Someone' });

/**
 * Opens a started sign-in's authorization URL in the browser whose cookies are `jar`, as far as the
 * identity provider: the provider's URL (what the browser is sent to once it leaves orgplane).
 */
export async function identityProviderUrl(app: TestApp, authorizationUrl: string, jar: CookieJar): Promise<string> {
  let next = authorizationUrl;
  for (let hop = 0; new URL(next).origin === new URL(app.url).origin; hop++) {
    if (hop >= 5) throw new Error('orgplane kept the browser');
    const response = await fetch(next, { redirect: 'manual', headers: { cookie: cookieHeader(jar) } });
    keepCookies(jar, response);
    const location = response.headers.get('location');
    if (!location) throw new Error(`orgplane did not send the browser on: ${response.status} ${await response.text()}`);
    next = new URL(location, next).href;
  }
  return next;
}
