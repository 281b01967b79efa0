// Attacks on where an SSO sign-in takes the person's e-mail from and why it trusts it, each against real
// identity providers (oidc-provider shaped as the provider in question, samlify) on loopback: a UserInfo
// answer about someone else, one fetched from an address the outbound guard refuses, an e-mail and a
// "verified" flag taken from two different answers, a connection moved to a domain nobody verified while
// a sign-in is under way, an e-mail outside the verified domain, and e-mails the provider says it has not verified.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createTenant } from '../support/fixtures.ts';
import { api } from '../support/http.ts';
import { setPlanAsOperator } from '../support/identity.ts';
import { followRedirects, type CookieJar, type IdpAccount } from '../support/oidc-idp.ts';
import { startSamlIdp } from '../support/saml-idp.ts';
import {
  assertRefused,
  connectShape,
  connectionOf,
  signInThrough,
  startClaimsApp,
  type ClaimsApp,
  type ShapeWorld,
} from './oidc-claims-support.ts';
import { appRedirectUri, identityProviderUrl, pkcePair } from './oidc-support.ts';
import { certifiedDefault, entra, keycloak, okta, type ProviderShape } from './provider-shapes.ts';
import { postToAcs } from './saml-support.ts';

describe('SSO sign-in: attacks on the e-mail a provider asserts', () => {
  let base: ClaimsApp;
  const worlds: ShapeWorld[] = [];
  before(async () => {
    base = await startClaimsApp();
  });
  after(async () => {
    for (const world of worlds) await world.close();
    await base?.close();
  });
  const connect = async (shape: ProviderShape, domain: string, options?: Parameters<typeof connectShape>[3]) => {
    const world = await connectShape(base, shape, domain, options);
    worlds.push(world);
    return world;
  };
  const signUp = async (email: string) => {
    const response = await api(base.app.url).post('/v1/auth/sign-up', {
      email,
      password: 'a-long-password-1234',
      name: 'Victim Person',
    });
    assert.equal(response.status, 201, response.text);
    return response.body.user.id as string;
  };
  const membershipsIn = async (organizationId: string, userId: string) =>
    (
      await base.app.db.query('SELECT 1 FROM members WHERE organization_id = $1 AND user_id = $2', [
        organizationId,
        userId,
      ])
    ).rows.length;
  const usersWithEmail = async (email: string) =>
    (await base.app.db.query('SELECT 1 FROM users WHERE email = $1', [email])).rows.length;

  it("a UserInfo answer about another subject than the ID token's is refused (userinfo_subject_mismatch), and nobody is provisioned", async () => {
    const victimEmail = 'victim@mismatch.test';
    const world = await connect(certifiedDefault(), 'mismatch.test', {
      idp: {
        alter: (route, body) =>
          route === 'userinfo'
            ? { ...body, sub: 'the-victims-subject', email: victimEmail, email_verified: true }
            : body,
      },
    });
    const { email, account } = world.person('attacker');
    const result = await signInThrough(world, email, account);
    await assertRefused(world, result, 'userinfo_subject_mismatch');
    assert.match(result.flow.text, /UserInfo/);
    assert.equal(await usersWithEmail(victimEmail), 0, 'no account was provisioned for the UserInfo answer');
  });

  it('UserInfo is fetched through the outbound guard: an endpoint at an address it refuses is never reached (provider_unavailable, 502)', async () => {
    let reached = 0;
    const internal = createServer((_request, response) => {
      reached += 1;
      response.end('{}');
    });
    await new Promise<void>((resolve) => internal.listen(0, '127.0.0.2', resolve));
    try {
      const internalUrl = `http://127.0.0.2:${(internal.address() as AddressInfo).port}/me`;
      const world = await connect(certifiedDefault(), 'guarded.test', {
        idp: { alter: (route, body) => (route === 'discovery' ? { ...body, userinfo_endpoint: internalUrl } : body) },
      });
      const { email, account } = world.person('someone');
      const result = await signInThrough(world, email, account);
      await assertRefused(world, result, 'provider_unavailable', 502);
      assert.equal(reached, 0, 'the refused address was not contacted');
    } finally {
      internal.closeAllConnections();
      await new Promise((resolve) => internal.close(resolve));
    }
  });

  it('the e-mail and its "verified" flag come from the same answer: an unverified ID-token e-mail never borrows UserInfo\'s flag', async () => {
    // The ID token names the victim without saying the address is verified; UserInfo names another address, verified.
    const victimEmail = 'ceo@pairing.test';
    const victimId = await signUp(victimEmail);
    const world = await connect(certifiedDefault(), 'pairing.test', {
      idp: {
        conformIdTokenClaims: false,
        claimsFor: (account, use) => (use === 'id_token' ? { sub: account.sub, email: victimEmail } : { ...account }),
      },
    });
    const { email, account } = world.person('intern');
    const result = await signInThrough(world, email, account);
    assert.ok(result.user, result.flow.text.slice(0, 300));
    assert.equal(result.user.email, email, "signed in as UserInfo's verified address");
    assert.notEqual(result.user.id, victimId);
    assert.equal(await membershipsIn(world.tenant.orgId, victimId), 0);
  });

  /** Starts a sign-in for a person of the connection's domain, then the owner moves the connection to `domain` before the IdP answers as `account`. */
  async function signInAcrossDomainMove(
    world: ShapeWorld,
    domain: string,
    account: IdpAccount,
    connection: Record<string, unknown> = {},
  ) {
    const pkce = pkcePair();
    const started = await api(base.app.url).post('/v1/auth/sso/start', {
      email: `someone@${world.domain}`,
      redirectUri: appRedirectUri,
      codeChallenge: pkce.challenge,
      codeChallengeMethod: 'S256',
    });
    assert.equal(started.status, 200, started.text);
    const current = await connectionOf(world);
    const moved = await api(base.app.url, world.tenant.owner.token).put('/v1/sso/connection', {
      domain,
      issuer: current.issuer,
      clientId: current.clientId,
      ...connection,
    });
    assert.equal(moved.status, 200, moved.text);
    assert.equal(moved.body.connection.domainVerified, false);
    world.idp.signInAs(account);
    const flow = await followRedirects(started.body.authorizationUrl, appRedirectUri);
    const code = flow.location ? (new URL(flow.location).searchParams.get('code') ?? undefined) : undefined;
    if (code) {
      const exchanged = await api(base.app.url).post('/v1/auth/sso/token', { code, codeVerifier: pkce.verifier });
      assert.fail(`the sign-in went through: ${exchanged.status} ${exchanged.body?.user?.email ?? exchanged.text}`);
    }
    return flow;
  }

  it('verified_claim: an owner who moves the connection to a domain nobody verified, mid-sign-in, cannot take over an account there', async () => {
    const victimId = await signUp('ceo@victim-one.test');
    // The owner's own Keycloak, which puts the e-mail and its flag in the ID token.
    const world = await connect(keycloak(), 'moving-one.test');
    const { account } = world.person('someone');
    const flow = await signInAcrossDomainMove(world, 'victim-one.test', {
      ...account,
      email: 'ceo@victim-one.test',
      email_verified: true,
      name: 'Not the CEO',
    });
    await assertRefused(world, { flow, user: undefined }, 'domain_not_verified');
    assert.equal(await membershipsIn(world.tenant.orgId, victimId), 0, 'the victim was not made a member');
  });

  it('verified_domain (Entra): the same move is refused: only a verified domain vouches for an address', async () => {
    const victimId = await signUp('ceo@victim-two.test');
    const world = await connect(entra({ upn: true }), 'moving-two.test', {
      connection: { emailTrust: 'verified_domain' },
    });
    const { account } = world.person('someone');
    const flow = await signInAcrossDomainMove(world, 'victim-two.test', {
      ...account,
      upn: 'ceo@victim-two.test',
      preferred_username: 'ceo@victim-two.test',
    });
    await assertRefused(world, { flow, user: undefined }, 'domain_not_verified');
    assert.equal(await membershipsIn(world.tenant.orgId, victimId), 0);
  });

  it('SAML: the same move is refused', async () => {
    const victimId = await signUp('ceo@victim-three.test');
    const tenant = await createTenant(base.app.url);
    await setPlanAsOperator(base.app, tenant.orgId, 'enterprise');
    const samlIdp = await startSamlIdp();
    try {
      const owner = api(base.app.url, tenant.owner.token);
      const put = await owner.put('/v1/sso/connection', {
        domain: 'moving-three.test',
        protocol: 'saml',
        idpMetadataXml: samlIdp.metadataXml,
        jitProvisioning: { enabled: true },
      });
      assert.equal(put.status, 200, put.text);
      base.dns.setTxt(put.body.connection.verification.recordName, [put.body.connection.verification.recordValue]);
      assert.equal((await owner.post('/v1/sso/verify-domain')).status, 200);
      const started = await api(base.app.url).post('/v1/auth/sso/start', {
        email: 'someone@moving-three.test',
        redirectUri: appRedirectUri,
        codeChallenge: pkcePair().challenge,
        codeChallengeMethod: 'S256',
      });
      assert.equal(started.status, 200, started.text);
      assert.equal(
        (
          await owner.put('/v1/sso/connection', {
            domain: 'victim-three.test',
            protocol: 'saml',
            idpMetadataXml: samlIdp.metadataXml,
          })
        ).status,
        200,
      );
      samlIdp.signInAs({ nameId: 'made-up', email: 'ceo@victim-three.test', name: 'Not the CEO' });
      const browser: CookieJar = new Map();
      const answer = await samlIdp.answer(await identityProviderUrl(base.app, started.body.authorizationUrl, browser));
      const posted = await postToAcs(
        answer.action,
        { SAMLResponse: answer.SAMLResponse, RelayState: answer.RelayState },
        browser,
      );
      assert.equal(posted.status, 403, posted.location ?? posted.text.slice(0, 300));
      assert.equal(posted.code, undefined);
      assert.equal((await owner.get('/v1/sso/connection')).body.connection.lastError?.category, 'domain_not_verified');
      assert.equal(await membershipsIn(tenant.orgId, victimId), 0);
    } finally {
      await samlIdp.close();
    }
  });

  it("verified_domain (Entra): an address outside the verified domain, or an Entra guest's, is refused (email_outside_domain)", async () => {
    const world = await connect(entra({ upn: true }), 'entra-own.test', {
      connection: { emailTrust: 'verified_domain' },
    });
    const { email, account } = world.person('alice');
    const foreign = await signInThrough(world, email, {
      ...account,
      upn: 'alice@foreign.example',
      preferred_username: 'alice@foreign.example',
    });
    await assertRefused(world, foreign, 'email_outside_domain');
    // A guest: the UPN is made in the tenant's onmicrosoft.com domain, the e-mail is the guest's own.
    const guest = await signInThrough(world, email, {
      ...account,
      upn: 'bob_elsewhere.example#EXT#@contoso.onmicrosoft.com',
      preferred_username: 'bob@elsewhere.example',
      email: 'bob@elsewhere.example',
    });
    await assertRefused(world, guest, 'email_outside_domain');
    assert.equal(await usersWithEmail('alice@foreign.example'), 0);
  });

  it('verified_domain does not override a provider that says the address is NOT verified (Keycloak, email_verified false)', async () => {
    const world = await connect(keycloak({ emailVerified: false }), 'keycloak-unverified.test', {
      connection: { emailTrust: 'verified_domain' },
    });
    const { email, account } = world.person('mallory');
    const result = await signInThrough(world, email, account);
    await assertRefused(world, result, 'email_not_verified');
    assert.equal(await usersWithEmail(email), 0);
  });

  it('verified_claim: email_verified false at UserInfo (Okta) is refused, and so is an Entra token that never says', async () => {
    const oktaWorld = await connect(okta({ emailVerified: false }), 'okta-unverified.test');
    const unverified = oktaWorld.person('mallory');
    await assertRefused(
      oktaWorld,
      await signInThrough(oktaWorld, unverified.email, unverified.account),
      'email_not_verified',
    );
    const entraWorld = await connect(entra({ email: true }), 'entra-claim.test');
    const silent = entraWorld.person('alice');
    const refused = await signInThrough(entraWorld, silent.email, silent.account);
    await assertRefused(entraWorld, refused, 'email_not_verified');
    assert.match((await connectionOf(entraWorld)).lastError.message, /email_verified/);
  });

  it("only an owner or admin of the organization sets emailTrust: anonymous is 401, a member or another organization's admin 403, and nothing changes", async () => {
    const world = await connect(certifiedDefault(), 'trust-owners.test');
    const current = await connectionOf(world);
    const body = {
      domain: current.domain,
      issuer: current.issuer,
      clientId: current.clientId,
      emailTrust: 'verified_domain',
    };
    assert.equal((await api(base.app.url).put('/v1/sso/connection', body)).status, 401);
    assert.equal((await api(base.app.url, world.tenant.member.token).put('/v1/sso/connection', body)).status, 403);
    // Another organization's admin changes their own organization's connection (it has none on the enterprise plan): never this one.
    assert.equal((await api(base.app.url, world.tenant.otherAdmin.token).put('/v1/sso/connection', body)).status, 403);
    assert.equal((await connectionOf(world)).emailTrust, 'verified_claim');
  });
});
