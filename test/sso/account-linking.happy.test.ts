// Which existing accounts an SSO sign-in takes, against real identity providers on loopback: a member of
// the organization, one its directory (SCIM) provisioned, one its SSO linked before, one whose e-mail
// orgplane verified, and a new one made just in time. A first link ends the account's earlier sessions and
// is recorded as sso.account_linked; a later sign-in with another subject, or a step-up, links or ends
// nothing.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { api } from '../support/http.ts';
import { membershipOf } from '../support/identity.ts';
import { checkTenantRouting } from '../db/tenant-routing.ts';
import { rotateScimToken, scim, userBody } from '../scim/helpers.ts';
import { signInAtIdp, startOidcWorld, type OidcWorld } from './oidc-support.ts';
import { personOf, samlSignIn, startSamlWorld, type SamlWorld } from './saml-support.ts';
import { enableJit, freshEmail, liveSessions, signUpAs, traces } from './account-linking-support.ts';

const linkedEvents = async (world: OidcWorld | SamlWorld, userId: string) =>
  (
    await world.app.db.query(
      `/* test */ SELECT * FROM audit_events WHERE action = 'sso.account_linked' AND target_id = $1 ORDER BY seq`,
      [userId],
    )
  ).rows;

describe('SSO account linking (OIDC): the accounts a sign-in takes', () => {
  const tenantRouting = checkTenantRouting();
  let world: OidcWorld;
  before(async () => {
    world = await startOidcWorld();
    await enableJit(world);
  });
  after(async () => {
    await world?.close();
  });

  const person = (email: string, sub = `sub-${email}`) => ({ sub, email, email_verified: true, name: 'The Person' });
  const exchange = async (flow: { code?: string | undefined; verifier: string; text: string }, token?: string) => {
    assert.ok(flow.code, flow.text);
    const exchanged = await api(world.app.url, token).post('/v1/auth/sso/token', {
      code: flow.code,
      codeVerifier: flow.verifier,
    });
    assert.equal(exchanged.status, 200, exchanged.text);
    return exchanged.body;
  };
  const signIn = (email: string, password: string) => api(world.app.url).post('/v1/auth/sign-in', { email, password });

  it("a member's account is linked at its first SSO sign-in: its earlier sessions end, sso.account_linked says why; the password still opens new ones", async () => {
    const { owner, orgId } = world.tenant;
    const email = freshEmail('invited');
    const account = await signUpAs(world.app, email);
    const invitation = await api(world.app.url, owner.token).post(`/v1/orgs/${orgId}/invitations`, {
      email,
      role: 'member',
    });
    assert.equal(
      (await api(world.app.url, account.token).post(`/v1/invitations/${invitation.body.token}/accept`)).status,
      200,
    );
    const second = await signIn(email, account.password);
    assert.equal(second.status, 200, second.text);

    const signedIn = await exchange(await signInAtIdp(world, email, person(email)));
    assert.equal(signedIn.user.id, account.userId);
    assert.equal((await api(world.app.url, account.token).get('/v1/me')).status, 401, 'the sign-up session ended');
    assert.equal(
      (await api(world.app.url, second.body.sessionToken).get('/v1/me')).status,
      401,
      'the later password session ended',
    );
    assert.equal(
      (await api(world.app.url, signedIn.sessionToken).get('/v1/me')).status,
      200,
      'the SSO session, issued after the link, is valid',
    );
    const [linked] = await linkedEvents(world, account.userId);
    assert.equal(linked.organization_id, orgId);
    assert.equal(linked.actor_id, account.userId);
    assert.equal(linked.outcome, 'success');
    const connectionId = (await api(world.app.url, owner.token).get('/v1/sso/connection')).body.connection.id;
    assert.deepEqual(linked.changes, {
      connectionId,
      protocol: 'oidc',
      subject: `sub-${email}`,
      ground: 'member',
      revokedSessions: 2,
    });
    // Requiring SSO is the organization's choice, not the link's: until then the password works.
    const again = await signIn(email, account.password);
    assert.equal(again.status, 200, again.text);
    assert.equal((await api(world.app.url, again.body.sessionToken).get(`/v1/orgs/${orgId}/members`)).status, 200);
  });

  it('a later sign-in of the linked account, with its subject or another one the e-mail ties to it, links it again without ending any session', async () => {
    const { member } = world.tenant;
    const first = await exchange(await signInAtIdp(world, member.email, person(member.email, 'member-subject-1')));
    const afterLink = await signIn(member.email, member.password);
    assert.equal(afterLink.status, 200, afterLink.text);
    for (const sub of ['member-subject-1', 'member-subject-2']) {
      const again = await exchange(await signInAtIdp(world, member.email, person(member.email, sub)));
      assert.equal(again.user.id, member.userId, sub);
    }
    assert.equal(
      (await api(world.app.url, first.sessionToken).get('/v1/me')).status,
      200,
      'the first SSO session stays',
    );
    assert.equal(
      (await api(world.app.url, afterLink.body.sessionToken).get('/v1/me')).status,
      200,
      'a password session opened after the link stays',
    );
    assert.equal((await linkedEvents(world, member.userId)).length, 1, 'one first link');
    assert.equal((await traces(world.app, world.tenant.orgId, member.userId)).links, 2);
  });

  it("an account the organization's directory (SCIM) provisioned is taken even when its membership ended without a removal", async () => {
    const { owner, orgId } = world.tenant;
    const directory = scim(world.app, await rotateScimToken(world.app, owner.token));
    const email = freshEmail('provisioned');
    const created = await directory.post('/Users', userBody(email));
    assert.equal(created.status, 201, created.text);
    const {
      rows: [row],
    } = await world.app.db.query(
      '/* test */ SELECT m.id, m.user_id FROM members m JOIN users u ON u.id = m.user_id WHERE m.organization_id = $1 AND u.email = $2',
      [orgId, email],
    );
    // As when a member leaves on their own: no removal stands against just-in-time provisioning.
    await membershipOf(world.app).deleteMember(world.app.db, orgId, row.id);
    assert.deepEqual(await traces(world.app, orgId, row.user_id), { members: 0, links: 0 });

    const signedIn = await exchange(await signInAtIdp(world, email, person(email)));
    assert.equal(signedIn.user.id, row.user_id);
    assert.equal((await traces(world.app, orgId, row.user_id)).members, 1, 'a member again, just in time');
    assert.equal((await linkedEvents(world, row.user_id))[0].changes.ground, 'scim_provisioned');
  });

  it("an account the organization's SSO linked before is taken by a new subject after its holder left", async () => {
    const { orgId } = world.tenant;
    const email = freshEmail('returning');
    const first = await exchange(await signInAtIdp(world, email, person(email, 'returning-old-subject')));
    const org = await api(world.app.url, first.sessionToken).get('/v1/org');
    assert.equal(
      (await api(world.app.url, first.sessionToken).delete(`/v1/orgs/${orgId}/members/${org.body.currentMember.id}`))
        .status,
      204,
      'left on their own',
    );
    const back = await exchange(await signInAtIdp(world, email, person(email, 'returning-new-subject')));
    assert.equal(back.user.id, first.user.id);
    assert.equal(
      (await api(world.app.url, first.sessionToken).get('/v1/me')).status,
      200,
      'not a first link: no session ended',
    );
    assert.deepEqual(
      (await linkedEvents(world, first.user.id)).map((event) => event.changes.ground),
      ['just_in_time'],
    );
  });

  it('an account whose e-mail orgplane verified is taken, and its earlier sessions end', async () => {
    const { orgId } = world.tenant;
    const email = freshEmail('verified');
    const account = await signUpAs(world.app, email);
    // What a verification of the address by orgplane records (none exists yet: orgplane sends no mail).
    await world.app.db.query('UPDATE users SET email_verified_at = now() WHERE id = $1', [account.userId]);
    const signedIn = await exchange(await signInAtIdp(world, email, person(email)));
    assert.equal(signedIn.user.id, account.userId);
    assert.equal((await api(world.app.url, account.token).get('/v1/me')).status, 401);
    assert.equal((await traces(world.app, orgId, account.userId)).members, 1);
    const [linked] = await linkedEvents(world, account.userId);
    assert.equal(linked.changes.ground, 'email_verified');
    assert.equal(linked.changes.revokedSessions, 1);
  });

  it('just-in-time provisioning of a new address makes the account and links it (sso.account_linked, ground just_in_time, no session to end)', async () => {
    const email = freshEmail('newcomer');
    const signedIn = await exchange(await signInAtIdp(world, email, person(email)));
    const [linked] = await linkedEvents(world, signedIn.user.id);
    assert.equal(linked.changes.ground, 'just_in_time');
    assert.equal(linked.changes.revokedSessions, 0);
    assert.equal(await liveSessions(world.app, signedIn.user.id), 1);
  });

  it('a step-up of a member not linked yet links nothing and ends no session; the next sign-in links', async () => {
    const { admin } = world.tenant;
    const flow = await signInAtIdp(world, admin.email, person(admin.email, 'admin-subject'), { reauthenticate: true });
    const refreshed = await exchange(flow, admin.token);
    assert.ok(refreshed.authenticatedAt);
    assert.equal(
      (await api(world.app.url, admin.token).get('/v1/me')).body.session.authMethod,
      'sso',
      'the same session, stepped up',
    );
    assert.deepEqual(await traces(world.app, world.tenant.orgId, admin.userId), { members: 1, links: 0 });
    assert.equal((await linkedEvents(world, admin.userId)).length, 0);

    await exchange(await signInAtIdp(world, admin.email, person(admin.email, 'admin-subject')));
    assert.equal((await api(world.app.url, admin.token).get('/v1/me')).status, 401, 'the first link ends it');
    assert.equal((await linkedEvents(world, admin.userId)).length, 1);
  });

  it('a step-up of a linked account links nothing and ends no session', async () => {
    const email = freshEmail('stepper');
    const first = await exchange(await signInAtIdp(world, email, person(email)));
    const before = await traces(world.app, world.tenant.orgId, first.user.id);
    const refreshed = await exchange(
      await signInAtIdp(world, email, person(email), { reauthenticate: true }),
      first.sessionToken,
    );
    assert.ok(refreshed.authenticatedAt);
    assert.deepEqual(await traces(world.app, world.tenant.orgId, first.user.id), before);
    assert.equal(await liveSessions(world.app, first.user.id), 1);
    assert.equal((await linkedEvents(world, first.user.id)).length, 1);
  });

  // These flows' statements stay on one tenant (test/db/tenant-routing.ts): on a database distributed
  // by tenant, each runs on one node.
  it('their statements stay on one tenant', async () => {
    await tenantRouting.assertStatementsStayOnOneTenant(world.app.db, 20);
  });
});

describe("SSO account linking (SAML): a member's first sign-in", () => {
  let world: SamlWorld;
  before(async () => {
    world = await startSamlWorld();
  });
  after(async () => {
    await world?.close();
  });

  it("links the NameID to the member's account, ends its earlier sessions and records sso.account_linked", async () => {
    const { member, orgId } = world.tenant;
    const flow = await samlSignIn(world, member.email, personOf(member, 'saml-member-4711'));
    assert.equal(flow.status, 303, flow.text);
    const exchanged = await api(world.app.url).post('/v1/auth/sso/token', {
      code: flow.code,
      codeVerifier: flow.verifier,
    });
    assert.equal(exchanged.status, 200, exchanged.text);
    assert.equal(exchanged.body.user.id, member.userId);
    assert.equal((await api(world.app.url, member.token).get('/v1/me')).status, 401);
    const [linked] = await linkedEvents(world, member.userId);
    assert.equal(linked.organization_id, orgId);
    assert.equal(linked.changes.protocol, 'saml');
    assert.equal(linked.changes.subject, 'saml-member-4711');
    assert.equal(linked.changes.ground, 'member');
  });
});
