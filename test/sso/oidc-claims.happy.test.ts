// Signing in through real OpenID Providers shaped like the ones organizations connect (provider-shapes.ts):
// oidc-provider as it ships (the e-mail at UserInfo only), Microsoft Entra ID (no email_verified; the
// address in email, upn or preferred_username; emailTrust verified_domain), Okta (UserInfo), Google and
// Keycloak (the ID token), and the connection's emailTrust as the API shows and changes it.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { checkTenantRouting } from '../db/tenant-routing.ts';
import { api } from '../support/http.ts';
import {
  connectShape,
  connectionOf,
  signInThrough,
  startClaimsApp,
  type ClaimsApp,
  type ShapeWorld,
} from './oidc-claims-support.ts';
import { certifiedDefault, entra, google, keycloak, okta, type ProviderShape } from './provider-shapes.ts';

describe('OIDC sign-in through providers as they send their claims', () => {
  const tenantRouting = checkTenantRouting();
  let base: ClaimsApp;
  const worlds: ShapeWorld[] = [];
  before(async () => {
    base = await startClaimsApp();
  });
  after(async () => {
    for (const world of worlds) await world.close();
    await base?.close();
  });
  const connect = async (shape: ProviderShape, domain: string, connection?: Record<string, unknown>) => {
    const world = await connectShape(base, shape, domain, connection ? { connection } : {});
    worlds.push(world);
    return world;
  };
  /** Signs the person in and asserts they got a session as `email`, in the world's organization; how many UserInfo requests it took. */
  async function signsInAs(
    world: ShapeWorld,
    startEmail: string,
    account: Parameters<typeof signInThrough>[2],
    email = startEmail,
  ) {
    const before = world.idp.userInfoRequests();
    const result = await signInThrough(world, startEmail, account);
    assert.ok(
      result.user,
      `refused: ${result.flow.status} ${result.flow.text.match(/<p id="reason">(.*?)<\/p>/)?.[1] ?? result.flow.text.slice(0, 300)}`,
    );
    assert.equal(result.user.email, email);
    assert.equal(result.organizationId, world.tenant.orgId);
    return { user: result.user, userInfoRequests: world.idp.userInfoRequests() - before };
  }

  it('oidc-provider as it ships: the ID token carries no e-mail, so orgplane reads email, email_verified and name from UserInfo', async () => {
    const world = await connect(certifiedDefault(), 'certified.test');
    const { email, account } = world.person('ada', 'Ada Lovelace');
    const { user, userInfoRequests } = await signsInAs(world, email, account);
    assert.equal(userInfoRequests, 1);
    assert.equal(user.name, 'Ada Lovelace');
    assert.equal((await connectionOf(world)).emailTrust, 'verified_claim', 'the default');
  });

  it('Microsoft Entra ID with emailTrust verified_domain: no email_verified; the address from email, else upn, else preferred_username', async () => {
    const world = await connect(entra({ email: true, upn: true }), 'entra.test', { emailTrust: 'verified_domain' });
    assert.equal((await connectionOf(world)).emailTrust, 'verified_domain');
    const { account } = world.person('grace', 'Grace Hopper');
    const withMail = {
      ...account,
      email: 'grace.hopper@entra.test',
      upn: 'ghopper@entra.test',
      preferred_username: 'grace@entra.test',
    };
    assert.equal(
      (await signsInAs(world, 'grace.hopper@entra.test', withMail)).userInfoRequests,
      0,
      'the ID token was enough',
    );
    const upnOnly = world.person('alan', 'Alan Turing');
    const { email: _none, ...withoutMail } = {
      ...upnOnly.account,
      upn: 'aturing@entra.test',
      preferred_username: 'alan@entra.test',
    };
    await signsInAs(world, 'aturing@entra.test', withoutMail, 'aturing@entra.test');
    // Entra's defaults: no mail attribute, no upn optional claim; the profile scope's preferred_username (the UPN) only.
    const plain = world.person('katherine', 'Katherine Johnson');
    const { email: _mail, upn: _upn, ...preferredOnly } = plain.account;
    const { user } = await signsInAs(world, plain.email, preferredOnly);
    assert.equal(user.name, 'Katherine Johnson');
  });

  it('Okta: the ID token carries the base claims only; email and email_verified come from /userinfo', async () => {
    const world = await connect(okta(), 'okta.test');
    const { email, account } = world.person('barbara', 'Barbara Liskov');
    assert.equal((await signsInAs(world, email, account)).userInfoRequests, 1);
  });

  it('Google: email, email_verified and hd in the ID token; no UserInfo request', async () => {
    const world = await connect(google(), 'google.test');
    const { email, account } = world.person('margaret', 'Margaret Hamilton');
    const { user, userInfoRequests } = await signsInAs(world, email, account);
    assert.equal(userInfoRequests, 0);
    assert.equal(user.name, 'Margaret Hamilton');
  });

  it('Keycloak: its default mappers put the e-mail in the ID token; with "Add to ID token" off, orgplane reads it from UserInfo', async () => {
    const inToken = await connect(keycloak(), 'keycloak.test');
    const first = inToken.person('frances', 'Frances Allen');
    assert.equal((await signsInAs(inToken, first.email, first.account)).userInfoRequests, 0);
    const atUserInfo = await connect(keycloak({ emailInIdToken: false }), 'keycloak-userinfo.test');
    const second = atUserInfo.person('radia', 'Radia Perlman');
    assert.equal((await signsInAs(atUserInfo, second.email, second.account)).userInfoRequests, 1);
  });

  it('emailTrust is kept when a PUT omits it; changing it makes the connection untested (ssoReady false) until a sign-in succeeds again', async () => {
    const world = await connect(entra({ upn: true }), 'entra-change.test', { emailTrust: 'verified_domain' });
    const { email, account } = world.person('hedy', 'Hedy Lamarr');
    await signsInAs(world, email, account);
    const owner = api(base.app.url, world.tenant.owner.token);
    const current = await connectionOf(world);
    assert.equal(current.ssoReady, true);
    const kept = await owner.put('/v1/sso/connection', {
      domain: current.domain,
      issuer: current.issuer,
      clientId: current.clientId,
    });
    assert.equal(kept.status, 200, kept.text);
    assert.equal(kept.body.connection.emailTrust, 'verified_domain');
    assert.equal(kept.body.connection.ssoReady, true, 'nothing changed');
    const changed = await owner.put('/v1/sso/connection', {
      domain: current.domain,
      issuer: current.issuer,
      clientId: current.clientId,
      emailTrust: 'verified_claim',
    });
    assert.equal(changed.status, 200, changed.text);
    assert.equal(changed.body.connection.emailTrust, 'verified_claim');
    assert.equal(changed.body.connection.ssoReady, false);
    assert.equal(changed.body.connection.lastSignInAt, null);
    const events = await owner.get(`/v1/orgs/${world.tenant.orgId}/audit-events?action=sso_connection.updated`);
    assert.equal(events.status, 200, events.text);
    assert.equal(events.body.events[0].changes.emailTrust, 'verified_claim', 'the audit event records the setting');
  });

  // These flows' statements stay on one tenant (test/db/tenant-routing.ts): on a database distributed
  // by tenant, each runs on one node.
  it('their statements stay on one tenant', async () => {
    await tenantRouting.assertStatementsStayOnOneTenant(base.app.db, 20);
  });
});
