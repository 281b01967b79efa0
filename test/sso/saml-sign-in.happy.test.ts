import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { api } from '../support/http.ts';
import { generateSamlKey, startSamlIdp } from '../support/saml-idp.ts';
import { appRedirectUri, personOf, samlSignIn, startSamlWorld, type SamlWorld } from './saml-support.ts';

describe('SAML sign-in: happy paths (a samlify IdP on loopback)', () => {
  let world: SamlWorld;
  before(async () => { world = await startSamlWorld(); });
  after(async () => { await world?.close(); });

  it('an existing member signs in: start, the IdP, the ACS, a one-time code at the redirect URI, a session for the organization', async () => {
    const { member, orgId } = world.tenant;
    const flow = await samlSignIn(world, member.email, personOf(member));
    assert.equal(flow.status, 303, flow.text);
    assert.ok(flow.location?.startsWith(`${appRedirectUri}?code=`), flow.location);
    const exchanged = await api(world.app.url).post('/v1/auth/sso/token', { code: flow.code, codeVerifier: flow.verifier });
    assert.equal(exchanged.status, 200, exchanged.text);
    assert.equal(exchanged.body.user.id, member.userId);
    assert.equal(exchanged.body.organizationId, orgId);
    const me = await api(world.app.url, exchanged.body.sessionToken).get('/v1/me');
    assert.equal(me.body.session.authMethod, 'sso');
    const connection = (await api(world.app.url, world.tenant.owner.token).get('/v1/sso/connection')).body.connection;
    assert.ok(connection.lastSignInAt);
    assert.equal(connection.ssoReady, true);
  });
});
