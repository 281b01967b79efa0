// What goes wrong with the person's claims and the connection's emailTrust, each a clear answer: a bad
// or misplaced emailTrust (400), changing it while SSO is required (409), a provider that sends no address
// anywhere (email_missing), and a UserInfo answer that is not one (token_rejected).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTenant } from '../support/fixtures.ts';
import { api } from '../support/http.ts';
import { setPlanAsOperator } from '../support/identity.ts';
import { startSamlIdp, type TestSamlIdp } from '../support/saml-idp.ts';
import {
  assertRefused,
  connectShape,
  connectionOf,
  signInThrough,
  startClaimsApp,
  type ClaimsApp,
  type ShapeWorld,
} from './oidc-claims-support.ts';
import { certifiedDefault, entra, type ProviderShape } from './provider-shapes.ts';

describe('OIDC claims and emailTrust: refusals and bad input', () => {
  let base: ClaimsApp;
  let samlIdp: TestSamlIdp;
  const worlds: ShapeWorld[] = [];
  before(async () => {
    base = await startClaimsApp();
    samlIdp = await startSamlIdp();
  });
  after(async () => {
    for (const world of worlds) await world.close();
    await samlIdp?.close();
    await base?.close();
  });
  const connect = async (shape: ProviderShape, domain: string, options?: Parameters<typeof connectShape>[3]) => {
    const world = await connectShape(base, shape, domain, options);
    worlds.push(world);
    return world;
  };

  it('PUT: an emailTrust that is not verified_claim or verified_domain is 400 naming the field', async () => {
    const world = await connect(certifiedDefault(), 'bad-trust.test');
    const current = await connectionOf(world);
    for (const emailTrust of ['sometimes', '', 'VERIFIED_DOMAIN', true, null]) {
      const response = await api(base.app.url, world.tenant.owner.token).put('/v1/sso/connection', {
        domain: current.domain,
        issuer: current.issuer,
        clientId: current.clientId,
        emailTrust,
      });
      assert.equal(response.status, 400, JSON.stringify(emailTrust));
      assert.equal(response.body.error, 'invalid_request');
      assert.deepEqual(response.body.details[0].path, ['emailTrust'], JSON.stringify(emailTrust));
    }
    assert.equal((await connectionOf(world)).emailTrust, 'verified_claim', 'unchanged');
  });

  it('PUT: emailTrust on a SAML connection is 400 (an OIDC setting); a SAML connection reads emailTrust null', async () => {
    const tenant = await createTenant(base.app.url);
    await setPlanAsOperator(base.app, tenant.orgId, 'enterprise');
    const owner = api(base.app.url, tenant.owner.token);
    const refused = await owner.put('/v1/sso/connection', {
      domain: 'saml-trust.test',
      protocol: 'saml',
      idpMetadataXml: samlIdp.metadataXml,
      emailTrust: 'verified_domain',
    });
    assert.equal(refused.status, 400, refused.text);
    assert.deepEqual(refused.body.details[0].path, ['emailTrust']);
    assert.match(refused.body.details[0].message, /Only for protocol "oidc"/);
    const saml = await owner.put('/v1/sso/connection', {
      domain: 'saml-trust.test',
      protocol: 'saml',
      idpMetadataXml: samlIdp.metadataXml,
    });
    assert.equal(saml.status, 200, saml.text);
    assert.equal(saml.body.connection.emailTrust, null);
  });

  it('PUT: emailTrust cannot change while SSO is required (409 sso_not_ready): turn the requirement off first', async () => {
    const world = await connect(entra({ upn: true }), 'required-trust.test', {
      connection: { emailTrust: 'verified_domain' },
    });
    const { email, account } = world.person('ada');
    assert.ok((await signInThrough(world, email, account)).user);
    const owner = api(base.app.url, world.tenant.owner.token);
    const current = await connectionOf(world);
    const identity = { domain: current.domain, issuer: current.issuer, clientId: current.clientId };
    assert.equal((await owner.put('/v1/sso/connection', { ...identity, ssoRequired: true })).status, 200);
    const changed = await owner.put('/v1/sso/connection', { ...identity, emailTrust: 'verified_claim' });
    assert.equal(changed.status, 409, changed.text);
    assert.equal(changed.body.error, 'sso_not_ready');
    const after = await connectionOf(world);
    assert.equal(after.emailTrust, 'verified_domain');
    assert.equal(after.ssoRequired, true);
  });

  it('a provider with no UserInfo endpoint and no e-mail in its ID token: email_missing', async () => {
    const world = await connect(certifiedDefault(), 'no-userinfo.test', {
      idp: {
        alter: (route, body) =>
          route === 'discovery'
            ? Object.fromEntries(Object.entries(body).filter(([name]) => name !== 'userinfo_endpoint'))
            : body,
      },
    });
    const { email, account } = world.person('ada');
    const result = await signInThrough(world, email, account);
    await assertRefused(world, result, 'email_missing');
    assert.match(result.flow.text, /sent no e-mail address/);
  });

  it('verified_domain: an Entra account whose only username is not an address (a phone number) is email_missing', async () => {
    const world = await connect(entra(), 'phone.test', { connection: { emailTrust: 'verified_domain' } });
    const { email, account } = world.person('ada');
    const result = await signInThrough(world, email, { ...account, preferred_username: '+1 555 0100' });
    await assertRefused(world, result, 'email_missing');
    assert.match(result.flow.text, /email, upn or preferred_username/);
  });

  it('a UserInfo answer without a sub is refused (token_rejected), not trusted', async () => {
    const world = await connect(certifiedDefault(), 'no-sub.test', {
      idp: {
        alter: (route, body) =>
          route === 'userinfo' ? Object.fromEntries(Object.entries(body).filter(([name]) => name !== 'sub')) : body,
      },
    });
    const { email, account } = world.person('ada');
    await assertRefused(world, await signInThrough(world, email, account), 'token_rejected');
  });
});
