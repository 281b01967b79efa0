import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { api } from '../support/http.ts';
import { checkTenantRouting } from '../db/tenant-routing.ts';
import { generateSamlKey } from '../support/saml-idp.ts';
import { appRedirectUri, personOf, samlSignIn, startSamlWorld, type SamlWorld } from './saml-support.ts';

describe('SAML sign-in: happy paths (a samlify IdP on loopback)', () => {
  const tenantRouting = checkTenantRouting();
  let world: SamlWorld;
  before(async () => {
    world = await startSamlWorld();
  });
  after(async () => {
    await world?.close();
  });
  const owner = () => api(world.app.url, world.tenant.owner.token);

  it('the connection shows what to give the IdP (SP entity id, ACS URL, metadata URL) and when its certificate expires', async () => {
    const connection = (await owner().get('/v1/sso/connection')).body.connection;
    const base = world.app.config.publicUrl;
    assert.equal(connection.protocol, 'saml');
    assert.equal(connection.issuer, world.idp.entityId);
    assert.equal(connection.clientId, null);
    assert.equal(connection.redirectUri, null);
    assert.equal(connection.spEntityId, `${base}/v1/sso/saml/${connection.id}/metadata`);
    assert.equal(connection.spMetadataUrl, connection.spEntityId);
    assert.equal(connection.acsUrl, `${base}/v1/auth/sso/saml/acs`);
    assert.equal(connection.idpSsoUrl, world.idp.ssoUrl);
    assert.equal(
      connection.certificateExpiresAt,
      new Date(new X509Certificate(world.idp.key.certificate).validTo).toISOString(),
    );
  });

  it('the SP metadata is public XML naming the entity id and the ACS (HTTP-POST), and asking for signed assertions', async () => {
    const connection = (await owner().get('/v1/sso/connection')).body.connection;
    const response = await fetch(connection.spMetadataUrl);
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /application\/samlmetadata\+xml/);
    const xml = await response.text();
    assert.ok(xml.includes(`entityID="${connection.spEntityId}"`), xml);
    assert.match(xml, /AssertionConsumerService[^>]*Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST"/);
    assert.ok(xml.includes(`Location="${connection.acsUrl}"`));
    assert.match(xml, /WantAssertionsSigned="true"/);
  });

  it('an existing member signs in: start, the IdP, the ACS, a one-time code at the redirect URI, a session for the organization', async () => {
    const { member, orgId } = world.tenant;
    const flow = await samlSignIn(world, member.email, personOf(member));
    assert.equal(flow.status, 303, flow.text);
    assert.ok(flow.location?.startsWith(`${appRedirectUri}?code=`), flow.location);
    assert.ok(!flow.location!.includes('ops_'), 'no session token in the URL');
    assert.equal(flow.answer.request.forceAuthn, false);
    const exchanged = await api(world.app.url).post('/v1/auth/sso/token', {
      code: flow.code,
      codeVerifier: flow.verifier,
    });
    assert.equal(exchanged.status, 200, exchanged.text);
    assert.equal(exchanged.body.user.id, member.userId);
    assert.equal(exchanged.body.organizationId, orgId);
    const me = await api(world.app.url, exchanged.body.sessionToken).get('/v1/me');
    assert.equal(me.body.session.authMethod, 'sso');
    assert.equal(me.body.activeOrganizationId, orgId);
    const connection = (await owner().get('/v1/sso/connection')).body.connection;
    assert.ok(connection.lastSignInAt);
    assert.equal(connection.ssoReady, true);
  });

  it('the NameID is the linked subject: after an e-mail change at the IdP the same account signs in', async () => {
    const { admin } = world.tenant;
    const first = await samlSignIn(world, admin.email, personOf(admin, 'employee-4711'));
    assert.equal(
      (await api(world.app.url).post('/v1/auth/sso/token', { code: first.code, codeVerifier: first.verifier })).body
        .user.id,
      admin.userId,
    );
    const renamed = await samlSignIn(world, admin.email, {
      nameId: 'employee-4711',
      nameIdFormat: 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent',
      email: 'renamed.admin@example.test',
    });
    assert.equal(renamed.status, 303, renamed.text);
    const second = await api(world.app.url).post('/v1/auth/sso/token', {
      code: renamed.code,
      codeVerifier: renamed.verifier,
    });
    assert.equal(second.status, 200, second.text);
    assert.equal(second.body.user.id, admin.userId);
  });

  it('certificate rotation: with two certificates configured, assertions signed with either key are accepted', async () => {
    const next = await generateSamlKey({ notAfter: new Date(Date.now() + 30 * 24 * 3600_000) });
    const current = (await owner().get('/v1/sso/connection')).body.connection;
    const put = await owner().put('/v1/sso/connection', {
      domain: current.domain,
      protocol: 'saml',
      idpEntityId: world.idp.entityId,
      idpSsoUrl: world.idp.ssoUrl,
      idpCertificates: [world.idp.key.certificate, next.certificate],
    });
    assert.equal(put.status, 200, put.text);
    // The earliest of the two expiries, and a new certificate leaves the connection ready.
    assert.equal(
      put.body.connection.certificateExpiresAt,
      new Date(new X509Certificate(next.certificate).validTo).toISOString(),
    );
    assert.equal(put.body.connection.ssoReady, true);
    const { member } = world.tenant;
    const withOld = await samlSignIn(world, member.email, personOf(member));
    assert.equal(withOld.status, 303, withOld.text);
    world.idp.useKey(next);
    try {
      const withNew = await samlSignIn(world, member.email, personOf(member));
      assert.equal(withNew.status, 303, withNew.text);
      assert.equal(
        (await api(world.app.url).post('/v1/auth/sso/token', { code: withNew.code, codeVerifier: withNew.verifier }))
          .body.user.id,
        member.userId,
      );
    } finally {
      world.idp.reset();
    }
  });

  it('step-up: reauthenticate sends ForceAuthn and the code refreshes the calling session', async () => {
    const { admin, orgId } = world.tenant;
    // The admin's first SSO sign-in (above) ended the sessions they had; their password opens one again.
    const signedIn = await api(world.app.url).post('/v1/auth/sign-in', {
      email: admin.email,
      password: admin.password,
    });
    assert.equal(signedIn.status, 200, signedIn.text);
    const session = signedIn.body.sessionToken as string;
    await world.app.db.query(`UPDATE sessions SET authenticated_at = now() - interval '1 hour' WHERE user_id = $1`, [
      admin.userId,
    ]);
    assert.equal(
      (await api(world.app.url, session).post(`/v1/orgs/${orgId}/api-keys`, { name: 'x', role: 'member' })).body.error,
      'reauth',
    );
    const flow = await samlSignIn(
      world,
      admin.email,
      { nameId: 'employee-4711', email: admin.email },
      { reauthenticate: true },
    );
    assert.equal(flow.answer.request.forceAuthn, true);
    assert.equal(flow.status, 303, flow.text);
    const refreshed = await api(world.app.url, session).post('/v1/auth/sso/token', {
      code: flow.code,
      codeVerifier: flow.verifier,
    });
    assert.equal(refreshed.status, 200, refreshed.text);
    assert.ok(refreshed.body.authenticatedAt);
    assert.equal(
      (await api(world.app.url, session).post(`/v1/orgs/${orgId}/api-keys`, { name: 'x', role: 'member' })).status,
      201,
    );
  });

  it('just-in-time provisioning adds an unknown person of the domain with the default role and teams', async () => {
    const { orgId } = world.tenant;
    const team = await owner().post(`/v1/orgs/${orgId}/teams`, { name: 'SAML newcomers' });
    assert.equal(team.status, 201, team.text);
    const current = (await owner().get('/v1/sso/connection')).body.connection;
    const put = await owner().put('/v1/sso/connection', {
      domain: current.domain,
      protocol: 'saml',
      idpMetadataXml: world.idp.metadataXml,
      jitProvisioning: { enabled: true, defaultRole: 'member', defaultTeamIds: [team.body.team.id] },
    });
    assert.equal(put.status, 200, put.text);
    const email = `fresh.saml.${Date.now()}@example.test`;
    const flow = await samlSignIn(world, email, { nameId: email, email, name: 'Fresh Saml' });
    assert.equal(flow.status, 303, flow.text);
    const exchanged = await api(world.app.url).post('/v1/auth/sso/token', {
      code: flow.code,
      codeVerifier: flow.verifier,
    });
    assert.equal(exchanged.status, 200, exchanged.text);
    assert.equal(exchanged.body.user.email, email);
    assert.equal(exchanged.body.user.name, 'Fresh Saml');
    const org = await api(world.app.url, exchanged.body.sessionToken).get('/v1/org');
    assert.equal(org.body.currentMember.role, 'member');
    assert.deepEqual(
      org.body.currentMemberTeams.map((t: { id: string }) => t.id),
      [team.body.team.id],
    );
  });

  it('the IdP can be given by its metadata URL (fetched through the guarded client) and the e-mail can be the NameID alone', async () => {
    const current = (await owner().get('/v1/sso/connection')).body.connection;
    const put = await owner().put('/v1/sso/connection', {
      domain: current.domain,
      protocol: 'saml',
      idpMetadataUrl: world.idp.metadataUrl,
    });
    assert.equal(put.status, 200, put.text);
    assert.equal(put.body.connection.idpMetadataUrl, world.idp.metadataUrl);
    assert.equal(put.body.connection.issuer, world.idp.entityId);
    const { member } = world.tenant;
    const flow = await samlSignIn(world, member.email, { nameId: member.email });
    assert.equal(flow.status, 303, flow.text);
  });

  // These flows' statements stay on one tenant (test/db/tenant-routing.ts): on a database distributed
  // by tenant, each runs on one node.
  it('their statements stay on one tenant', async () => {
    await tenantRouting.assertStatementsStayOnOneTenant(world.app.db, 20);
  });
});
