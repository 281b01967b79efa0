// One app with several organizations, each with its own SSO domain and its own real OpenID Provider
// shaped like one identity provider (provider-shapes.ts), for the tests of where orgplane reads a
// person's claims (the ID token, else UserInfo) and how it trusts their e-mail (the connection's emailTrust).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startTestApp, type TestApp } from '../support/app.ts';
import { startDnsServer, type TestDnsServer } from '../support/dns-server.ts';
import { createTenant } from '../support/fixtures.ts';
import { api } from '../support/http.ts';
import { setPlanAsOperator } from '../support/identity.ts';
import type { IdpAccount, TestIdpOptions } from '../support/oidc-idp.ts';
import { connectOidc, signInAtIdp, type OidcWorld } from './oidc-support.ts';
import type { ProviderShape } from './provider-shapes.ts';

export interface ClaimsApp {
  app: TestApp;
  dns: TestDnsServer;
  close(): Promise<void>;
}

export async function startClaimsApp(): Promise<ClaimsApp> {
  const dns = await startDnsServer();
  // No background workers: sign-in needs none, and the audit retention job (a minute after start) would
  // run its deliberate scan of every chain while a file's flows are being checked for staying on one tenant.
  const app = await startTestApp({
    dnsServers: [dns.address],
    allowedPrivateNetworks: ['127.0.0.1/32'],
    runWorkers: false,
  });
  return {
    app,
    dns,
    async close() {
      await app.close();
      await dns.close();
    },
  };
}

export interface ShapeWorld extends OidcWorld {
  domain: string;
  /** A person of the domain as the provider holds them, and the address orgplane should sign them in as. */
  person(localPart: string, name?: string): { email: string; account: IdpAccount };
}

/**
 * A new enterprise organization whose SSO connection for `domain` (verified) points at a new provider of
 * `shape`, with just-in-time provisioning on (people of the domain become members at their first sign-in).
 */
export async function connectShape(
  base: ClaimsApp,
  shape: ProviderShape,
  domain: string,
  options: { connection?: Record<string, unknown>; idp?: Omit<TestIdpOptions, 'redirectUri'> } = {},
): Promise<ShapeWorld> {
  const tenant = await createTenant(base.app.url);
  await setPlanAsOperator(base.app, tenant.orgId, 'enterprise');
  const idp = await connectOidc(base.app, base.dns, tenant, {
    domain,
    idp: { ...shape.idp, ...options.idp },
    connection: { jitProvisioning: { enabled: true }, ...options.connection },
  });
  return {
    app: base.app,
    dns: base.dns,
    idp,
    tenant,
    domain,
    person(localPart, name = 'Alex Example') {
      return { email: `${localPart}@${domain}`, account: shape.account({ localPart, domain, name, id: randomUUID() }) };
    },
    close: () => idp.close(),
  };
}

/** Signs `email` in at the IdP as `account`; the session's user when orgplane let them in, else the refusal page. */
export async function signInThrough(world: OidcWorld, email: string, account: IdpAccount) {
  const flow = await signInAtIdp(world, email, account);
  if (!flow.code) return { flow, user: undefined };
  const exchanged = await api(world.app.url).post('/v1/auth/sso/token', {
    code: flow.code,
    codeVerifier: flow.verifier,
  });
  assert.equal(exchanged.status, 200, exchanged.text);
  return {
    flow,
    user: exchanged.body.user as { id: string; email: string; name: string },
    organizationId: exchanged.body.organizationId as string,
  };
}

/** The connection as its owner reads it. */
export async function connectionOf(world: OidcWorld) {
  const response = await api(world.app.url, world.tenant.owner.token).get('/v1/sso/connection');
  assert.equal(response.status, 200, response.text);
  return response.body.connection;
}

/** Asserts a refused sign-in: a readable page with `status`, no code, and `category` as the connection's last error. */
export async function assertRefused(
  world: OidcWorld,
  result: { flow: { status: number; text: string; contentType: string | null }; user?: { email: string } | undefined },
  category: string,
  status = 403,
) {
  assert.equal(result.user, undefined, `signed in as ${result.user?.email}`);
  assert.equal(result.flow.status, status, result.flow.text.slice(0, 500));
  assert.match(result.flow.contentType ?? '', /text\/html/);
  assert.equal((await connectionOf(world)).lastError?.category, category);
}
