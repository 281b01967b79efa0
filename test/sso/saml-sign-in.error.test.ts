// Bad input to the SAML routes and the refusals of the sign-in itself: clear 4xx (JSON for API calls, a
// page for a person's browser at the ACS), nothing stored, never a 500.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { api } from '../support/http.ts';
import { generateSamlKey } from '../support/saml-idp.ts';
import {
  lastError,
  personOf,
  postToAcs,
  samlSignIn,
  startInBrowser,
  startSamlWorld,
  type SamlWorld,
} from './saml-support.ts';

describe('SAML: bad connection settings, bad ACS input, refused people', () => {
  let world: SamlWorld;
  let missing: Server;
  before(async () => {
    world = await startSamlWorld();
    missing = createServer((_req, res) => res.writeHead(404).end('no metadata here'));
    await new Promise<void>((resolve) => missing.listen(0, '127.0.0.1', resolve));
  });
  after(async () => {
    await new Promise((resolve) => missing?.close(resolve));
    await world?.close();
  });
  const owner = () => api(world.app.url, world.tenant.owner.token);

  it('PUT: each wrong SAML setting is a 400 whose details name the field, and nothing changes', async () => {
    const before = (await owner().get('/v1/sso/connection')).body.connection;
    const expired = await generateSamlKey({
      notBefore: new Date(Date.now() - 10 * 24 * 3600_000),
      notAfter: new Date(Date.now() - 24 * 3600_000),
    });
    const { entityId, ssoUrl, key } = world.idp;
    const manual = {
      domain: 'example.test',
      protocol: 'saml',
      idpEntityId: entityId,
      idpSsoUrl: ssoUrl,
      idpCertificates: [key.certificate],
    };
    const cases: [string, Record<string, unknown>, (string | number)[], RegExp?][] = [
      ['no IdP at all', { domain: 'example.test', protocol: 'saml' }, []],
      ['two ways at once', { ...manual, idpMetadataXml: world.idp.metadataXml }, []],
      [
        'an unreadable certificate',
        { ...manual, idpCertificates: ['-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydA==\n-----END CERTIFICATE-----'] },
        ['idpCertificates', 0],
      ],
      ['not base64 at all', { ...manual, idpCertificates: [key.certificate, 'hello <world>'] }, ['idpCertificates', 1]],
      [
        'an expired certificate',
        { ...manual, idpCertificates: [expired.certificate] },
        ['idpCertificates', 0],
        /expired/,
      ],
      [
        'three certificates',
        { ...manual, idpCertificates: [key.certificate, key.certificate, key.certificate] },
        ['idpCertificates'],
      ],
      [
        'a plain-http SSO URL off this machine',
        { ...manual, idpSsoUrl: 'http://idp.example.com/sso' },
        ['idpSsoUrl'],
        /https/,
      ],
      ['an SSO URL that is no URL', { ...manual, idpSsoUrl: 'not a url' }, ['idpSsoUrl']],
      ['no entity id', { ...manual, idpEntityId: undefined }, ['idpEntityId']],
      ['no certificates', { ...manual, idpCertificates: undefined }, ['idpCertificates']],
      [
        'metadata that is not XML',
        { domain: 'example.test', protocol: 'saml', idpMetadataXml: 'not xml <' },
        ['idpMetadataXml'],
      ],
      [
        'metadata with a DOCTYPE (entities)',
        {
          domain: 'example.test',
          protocol: 'saml',
          idpMetadataXml: `<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]>${world.idp.metadataXml}`,
        },
        ['idpMetadataXml'],
      ],
      [
        'metadata without a signing certificate',
        {
          domain: 'example.test',
          protocol: 'saml',
          idpMetadataXml: world.idp.metadataXml.replace(/<KeyDescriptor[\s\S]*?<\/KeyDescriptor>/g, ''),
        },
        ['idpMetadataXml'],
      ],
      [
        'metadata of a service provider',
        {
          domain: 'example.test',
          protocol: 'saml',
          idpMetadataXml:
            '<EntityDescriptor xmlns="urn:oasis:names:tc:SAML:2.0:metadata" entityID="x"><SPSSODescriptor/></EntityDescriptor>',
        },
        ['idpMetadataXml'],
      ],
      [
        'a metadata URL answering 404',
        {
          domain: 'example.test',
          protocol: 'saml',
          idpMetadataUrl: `http://127.0.0.1:${(missing.address() as AddressInfo).port}/metadata`,
        },
        ['idpMetadataUrl'],
        /404/,
      ],
      [
        'a metadata URL at a private address',
        { domain: 'example.test', protocol: 'saml', idpMetadataUrl: 'https://10.1.2.3/metadata' },
        ['idpMetadataUrl'],
      ],
      [
        'a metadata URL that is not https',
        { domain: 'example.test', protocol: 'saml', idpMetadataUrl: 'http://idp.example.com/metadata' },
        ['idpMetadataUrl'],
      ],
      ['an OIDC issuer on a SAML connection', { ...manual, issuer: 'https://idp.example.test' }, ['issuer']],
      [
        'a SAML setting on an OIDC connection',
        { domain: 'example.test', issuer: 'https://idp.example.test', clientId: 'c', idpSsoUrl: ssoUrl },
        ['idpSsoUrl'],
      ],
      ['an OIDC connection without its issuer', { domain: 'example.test', clientId: 'c' }, ['issuer']],
    ];
    for (const [label, body, path, message] of cases) {
      const response = await owner().put('/v1/sso/connection', body);
      assert.equal(response.status, 400, `${label}: ${response.text}`);
      assert.equal(response.body.error, 'invalid_request', label);
      assert.deepEqual(response.body.details[0].path, path, `${label}: ${response.text}`);
      if (message) assert.match(response.body.details[0].message, message, label);
    }
    const after = (await owner().get('/v1/sso/connection')).body.connection;
    assert.deepEqual(after, before);
  });

  it('SP metadata: an unknown id is a 404 in the error shape, an overlong one a 400', async () => {
    const unknown = await api(world.app.url).get('/v1/sso/saml/sso_00000000000000000000000000/metadata');
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.error, 'sso_connection_not_found');
    const long = await api(world.app.url).get(`/v1/sso/saml/${'x'.repeat(300)}/metadata`);
    assert.ok(long.status === 400 || long.status === 414, long.text);
  });

  it('ACS: no form, a JSON body, another content type, a body too large, an unreadable SAMLResponse: a page, never JSON or a 500', async () => {
    const acs = `${world.app.url}/v1/auth/sso/saml/acs`;
    const bodies: [string, RequestInit][] = [
      ['nothing', {}],
      ['json', { headers: { 'content-type': 'application/json' }, body: '{"SAMLResponse":"x","RelayState":"y"}' }],
      ['broken json', { headers: { 'content-type': 'application/json' }, body: '{' }],
      ['text', { headers: { 'content-type': 'text/plain' }, body: 'SAMLResponse=x' }],
      [
        'too large',
        {
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: `SAMLResponse=${'A'.repeat(600 * 1024)}`,
        },
      ],
    ];
    for (const [label, init] of bodies) {
      const response = await fetch(acs, { method: 'POST', redirect: 'manual', ...init });
      assert.ok(response.status >= 400 && response.status < 500, `${label}: ${response.status}`);
      assert.match(response.headers.get('content-type') ?? '', /text\/html/, label);
      assert.match(await response.text(), /Sign-in refused/, label);
    }
    const browser = await startInBrowser(world, world.tenant.member.email);
    const relayState = new URL(browser.idpUrl).searchParams.get('RelayState')!;
    const garbage = await postToAcs(
      acs,
      { SAMLResponse: Buffer.from('<not-saml/>').toString('base64'), RelayState: relayState },
      browser.jar,
    );
    assert.equal(garbage.status, 403);
    assert.match(garbage.contentType ?? '', /text\/html/);
    assert.equal((await lastError(world))?.category, 'assertion_rejected');
  });

  it('someone unknown while just-in-time provisioning is off is refused, and nothing is created', async () => {
    const email = `stranger.${Date.now()}@example.test`;
    const flow = await samlSignIn(world, email, { nameId: email, email });
    assert.equal(flow.status, 403);
    assert.match(flow.text, /not a member/);
    assert.equal((await lastError(world))?.category, 'not_a_member');
    const { rows } = await world.app.db.query('SELECT 1 FROM users WHERE email = $1', [email]);
    assert.equal(rows.length, 0);
  });

  it('an e-mail outside the verified domain, or none at all, is refused', async () => {
    const outside = await samlSignIn(world, world.tenant.member.email, { nameId: 'someone@elsewhere.example' });
    assert.equal(outside.status, 403);
    assert.equal((await lastError(world))?.category, 'email_outside_domain');
    const none = await samlSignIn(world, world.tenant.member.email, {
      nameId: 'opaque-subject-1',
      nameIdFormat: 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent',
    });
    assert.equal(none.status, 403);
    assert.equal((await lastError(world))?.category, 'email_missing');
  });

  it("the IdP's own refusal (a status other than Success, no assertion) is a page and recorded as idp_error", async () => {
    world.idp.afterSigning((xml) =>
      xml
        .replace(/<saml:Assertion[\s\S]*<\/saml:Assertion>/, '')
        .replace(
          'status:Success"/>',
          'status:Responder"/><samlp:StatusMessage>Access denied by policy</samlp:StatusMessage>',
        ),
    );
    try {
      const flow = await samlSignIn(world, world.tenant.member.email, personOf(world.tenant.member));
      assert.equal(flow.status, 403, flow.text);
      assert.match(flow.contentType ?? '', /text\/html/);
      const error = await lastError(world);
      assert.equal(error?.category, 'idp_error');
      assert.match(error!.message, /refused the sign-in/);
    } finally {
      world.idp.reset();
    }
  });

  it('a step-up whose IdP did not authenticate the person again (an old AuthnInstant) is refused', async () => {
    world.idp.tamper(() => ({ authnInstant: new Date(Date.now() - 3600_000).toISOString() }));
    try {
      const flow = await samlSignIn(world, world.tenant.admin.email, personOf(world.tenant.admin), {
        reauthenticate: true,
      });
      assert.equal(flow.status, 403, flow.text);
      assert.equal((await lastError(world))?.category, 'reauthentication_required');
    } finally {
      world.idp.reset();
    }
  });
});
