import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { api } from '../support/http.ts';
import { checkTenantRouting } from '../db/tenant-routing.ts';
import { accountOf, appRedirectUri, signInAtIdp, startOidcWorld, type OidcWorld } from './oidc-support.ts';

describe('OIDC sign-in: happy paths (oidc-provider on loopback)', () => {
  const tenantRouting = checkTenantRouting();
  let world: OidcWorld;
  before(async () => {
    world = await startOidcWorld();
  });
  after(async () => {
    await world?.close();
  });

  it('an existing member signs in: start, the IdP, a one-time code at the redirect URI, a session for the organization', async () => {
    const { member, orgId } = world.tenant;
    const flow = await signInAtIdp(world, member.email, accountOf(member));
    assert.ok(flow.location?.startsWith(`${appRedirectUri}?code=`), flow.text);
    assert.ok(!flow.location!.includes('ops_'), 'no session token in the URL');
    const exchanged = await api(world.app.url).post('/v1/auth/sso/token', {
      code: flow.code,
      codeVerifier: flow.verifier,
    });
    assert.equal(exchanged.status, 200, exchanged.text);
    assert.equal(exchanged.body.user.id, member.userId);
    assert.equal(exchanged.body.organizationId, orgId);
    const me = await api(world.app.url, exchanged.body.sessionToken).get('/v1/me');
    assert.equal(me.status, 200);
    assert.equal(me.body.session.authMethod, 'sso');
    assert.equal(me.body.activeOrganizationId, orgId);
    const connection = await api(world.app.url, world.tenant.owner.token).get('/v1/sso/connection');
    assert.ok(connection.body.connection.lastSignInAt);
    assert.equal(connection.body.connection.ssoReady, true);
  });

  it("start answers orgplane's link, which sends the browser to the IdP's URL with PKCE (S256), state, nonce and the callback; a step-up adds prompt=login", async () => {
    const flow = await signInAtIdp(world, world.tenant.admin.email, accountOf(world.tenant.admin));
    const link = new URL(flow.authorizationUrl);
    assert.equal(`${link.origin}${link.pathname}`, `${world.app.config.publicUrl}/v1/auth/sso/authorize`);
    assert.match(link.searchParams.get('request') ?? '', /^[A-Za-z0-9_-]{43}$/);
    assert.deepEqual([...link.searchParams.keys()], ['request'], "the link carries nothing of the IdP's URL");
    const url = new URL(flow.idpUrl);
    assert.equal(url.searchParams.get('code_challenge_method'), 'S256');
    for (const name of ['state', 'nonce', 'code_challenge']) assert.ok(url.searchParams.get(name));
    assert.equal(url.searchParams.get('redirect_uri'), `${world.app.config.publicUrl}/v1/auth/sso/oidc/callback`);
    assert.equal(url.searchParams.get('prompt'), null);
    const stepUp = await signInAtIdp(world, world.tenant.admin.email, accountOf(world.tenant.admin), {
      reauthenticate: true,
    });
    assert.equal(new URL(stepUp.idpUrl).searchParams.get('prompt'), 'login');
  });

  it('the IdP subject is linked: after an e-mail change at the IdP the same account signs in', async () => {
    const { member } = world.tenant;
    const account = accountOf(member, 'stable-subject-1');
    const first = await signInAtIdp(world, member.email, account);
    assert.equal(
      (await api(world.app.url).post('/v1/auth/sso/token', { code: first.code, codeVerifier: first.verifier })).body
        .user.id,
      member.userId,
    );
    const renamed = await signInAtIdp(world, member.email, { ...account, email: 'renamed.person@example.test' });
    const second = await api(world.app.url).post('/v1/auth/sso/token', {
      code: renamed.code,
      codeVerifier: renamed.verifier,
    });
    assert.equal(second.status, 200, second.text);
    assert.equal(second.body.user.id, member.userId);
  });

  it('step-up through SSO refreshes the calling session of the same person', async () => {
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
    const flow = await signInAtIdp(world, admin.email, accountOf(admin), { reauthenticate: true });
    const refreshed = await api(world.app.url, session).post('/v1/auth/sso/token', {
      code: flow.code,
      codeVerifier: flow.verifier,
    });
    assert.equal(refreshed.status, 200, refreshed.text);
    assert.ok(refreshed.body.authenticatedAt);
    assert.equal(refreshed.body.sessionToken, undefined);
    const me = await api(world.app.url, session).get('/v1/me');
    assert.equal(me.body.session.authMethod, 'sso');
    assert.equal(
      (await api(world.app.url, session).post(`/v1/orgs/${orgId}/api-keys`, { name: 'x', role: 'member' })).status,
      201,
    );
  });

  it('just-in-time provisioning, when enabled, adds an unknown person of the domain with the default role and teams', async () => {
    const { owner, orgId } = world.tenant;
    const team = await api(world.app.url, owner.token).post(`/v1/orgs/${orgId}/teams`, { name: 'Newcomers' });
    assert.equal(team.status, 201, team.text);
    const current = (await api(world.app.url, owner.token).get('/v1/sso/connection')).body.connection;
    const put = await api(world.app.url, owner.token).put('/v1/sso/connection', {
      domain: current.domain,
      issuer: current.issuer,
      clientId: current.clientId,
      jitProvisioning: { enabled: true, defaultRole: 'admin', defaultTeamIds: [team.body.team.id] },
    });
    assert.equal(put.status, 200, put.text);
    assert.deepEqual(put.body.connection.jitProvisioning, {
      enabled: true,
      defaultRole: 'admin',
      defaultTeamIds: [team.body.team.id],
    });
    const email = `fresh.${Date.now()}@example.test`;
    const flow = await signInAtIdp(world, email, {
      sub: `new-${Date.now()}`,
      email,
      email_verified: true,
      name: 'Fresh Person',
    });
    const exchanged = await api(world.app.url).post('/v1/auth/sso/token', {
      code: flow.code,
      codeVerifier: flow.verifier,
    });
    assert.equal(exchanged.status, 200, exchanged.text);
    assert.equal(exchanged.body.user.email, email);
    const org = await api(world.app.url, exchanged.body.sessionToken).get('/v1/org');
    assert.equal(org.body.currentMember.role, 'admin');
    assert.deepEqual(
      org.body.currentMemberTeams.map((t: { id: string }) => t.id),
      [team.body.team.id],
    );
  });

  // These flows' statements stay on one tenant (test/db/tenant-routing.ts): on a database distributed
  // by tenant, each runs on one node.
  it('their statements stay on one tenant', async () => {
    await tenantRouting.assertStatementsStayOnOneTenant(world.app.db, 20);
  });
});
