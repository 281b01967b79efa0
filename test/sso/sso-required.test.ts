// Requiring SSO, against oidc-provider on loopback: once a sign-in has succeeded on the
// connection it can be turned on; then the members whose e-mail is in the verified domain are refused
// password sign-in and password re-authentication (403 sso_required) and lose their password sessions,
// while the owner's break-glass password sign-in works and is flagged in the audit log.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { api } from '../support/http.ts';
import { accountOf, signInAtIdp, startOidcWorld, type OidcWorld } from './oidc-support.ts';

describe('requiring SSO', () => {
  let world: OidcWorld;
  let memberSsoSession: string;
  let connection: { domain: string; issuer: string; clientId: string };
  before(async () => {
    world = await startOidcWorld();
    const { member } = world.tenant;
    const flow = await signInAtIdp(world, member.email, accountOf(member));
    const exchanged = await api(world.app.url).post('/v1/auth/sso/token', {
      code: flow.code,
      codeVerifier: flow.verifier,
    });
    assert.equal(exchanged.status, 200, exchanged.text);
    memberSsoSession = exchanged.body.sessionToken;
    // That first SSO sign-in ended the member's earlier sessions (a first link does). Until SSO is
    // required their password still opens one: the password session that requiring SSO must end.
    const again = await api(world.app.url).post('/v1/auth/sign-in', { email: member.email, password: member.password });
    assert.equal(again.status, 200, again.text);
    member.token = again.body.sessionToken;
    connection = (await api(world.app.url, world.tenant.owner.token).get('/v1/sso/connection')).body.connection;
  });
  after(async () => {
    await world?.close();
  });

  const signIn = (email: string, password: string) => api(world.app.url).post('/v1/auth/sign-in', { email, password });
  const setRequired = (token: string, ssoRequired: boolean, changes: Record<string, unknown> = {}) =>
    api(world.app.url, token).put('/v1/sso/connection', {
      domain: connection.domain,
      issuer: connection.issuer,
      clientId: connection.clientId,
      ssoRequired,
      ...changes,
    });
  const events = async (action: string, targetName: string) =>
    (
      await world.app.db.query(
        'SELECT organization_id, outcome, changes FROM audit_events WHERE action = $1 AND target_name = $2 ORDER BY occurred_at, seq',
        [action, targetName],
      )
    ).rows;

  it("a member cannot turn it on (403), and an owner can once ssoReady: the password sessions of the domain's members end at once, their SSO sessions and the owner's stay", async () => {
    const { owner, admin, member, orgId } = world.tenant;
    assert.equal((await setRequired(member.token, true)).status, 403);
    assert.equal((await api(world.app.url, member.token).get('/v1/me')).status, 200, 'refused, nothing changed');
    const turnedOn = await setRequired(owner.token, true);
    assert.equal(turnedOn.status, 200, turnedOn.text);
    assert.equal(turnedOn.body.connection.ssoRequired, true);
    assert.equal(
      (await api(world.app.url, member.token).get('/v1/me')).status,
      401,
      "the member's password session ended",
    );
    assert.equal(
      (await api(world.app.url, admin.token).get('/v1/me')).status,
      401,
      "the admin's password session ended",
    );
    assert.equal((await api(world.app.url, memberSsoSession).get('/v1/me')).status, 200, 'an SSO session stays');
    assert.equal(
      (await api(world.app.url, owner.token).get('/v1/me')).status,
      200,
      "the owner's password session stays",
    );
    const [updated] = (
      await world.app.db.query(
        `SELECT changes FROM audit_events WHERE organization_id = $1 AND action = 'sso_connection.updated' ORDER BY seq DESC LIMIT 1`,
        [orgId],
      )
    ).rows;
    assert.equal(updated.changes.ssoRequired, true);
    assert.equal(updated.changes.passwordSessionsRevoked, 2);
  });

  it('a member of the domain is refused password sign-in with 403 sso_required that says to use SSO, recorded as denied; a wrong password is still 401', async () => {
    const { member, admin, orgId } = world.tenant;
    for (const person of [member, admin]) {
      const refused = await signIn(person.email, person.password);
      assert.equal(refused.status, 403, refused.text);
      assert.equal(refused.body.error, 'sso_required');
      assert.match(refused.body.message, /SSO/);
      assert.equal(refused.body.sessionToken, undefined);
    }
    const wrong = await signIn(member.email, 'not-the-password');
    assert.equal(wrong.status, 401);
    assert.equal(wrong.body.error, 'invalid_credentials');
    const denied = (await events('user.sign_in_failed', member.email)).filter((e) => e.outcome === 'denied');
    assert.equal(denied.length, 1);
    assert.equal(denied[0].organization_id, orgId);
    assert.deepEqual(denied[0].changes, { method: 'password', reason: 'sso_required' });
  });

  it("password re-authentication of a member's SSO session is refused (sso_required); SSO step-up still works", async () => {
    const { member } = world.tenant;
    const refused = await api(world.app.url, memberSsoSession).post('/v1/auth/reauthenticate', {
      password: member.password,
    });
    assert.equal(refused.status, 403, refused.text);
    assert.equal(refused.body.error, 'sso_required');
    assert.equal(
      (await api(world.app.url, memberSsoSession).get('/v1/me')).body.session.authMethod,
      'sso',
      'still an SSO session',
    );
    const flow = await signInAtIdp(world, member.email, accountOf(member), { reauthenticate: true });
    assert.equal(
      (
        await api(world.app.url, memberSsoSession).post('/v1/auth/sso/token', {
          code: flow.code,
          codeVerifier: flow.verifier,
        })
      ).status,
      200,
    );
  });

  it("the owner's break-glass password sign-in is allowed and flagged in the organization's log", async () => {
    const { owner, orgId } = world.tenant;
    const signedIn = await signIn(owner.email, owner.password);
    assert.equal(signedIn.status, 200, signedIn.text);
    const flagged = (await events('user.signed_in', owner.email)).filter((e) => e.organization_id === orgId).at(-1);
    assert.deepEqual(flagged.changes, { method: 'password', breakGlass: true });
    const reauthenticated = await api(world.app.url, signedIn.body.sessionToken).post('/v1/auth/reauthenticate', {
      password: owner.password,
    });
    assert.equal(reauthenticated.status, 200, reauthenticated.text);
  });

  it("people of the domain who are not members (an outsider, another organization's owner) and other domains still sign in with passwords", async () => {
    const { outsider, otherAdmin } = world.tenant;
    for (const person of [outsider, otherAdmin])
      assert.equal((await signIn(person.email, person.password)).status, 200, person.email);
    const [unflagged] = (await events('user.signed_in', otherAdmin.email)).slice(-1);
    assert.deepEqual(unflagged.changes, { method: 'password' });
    const elsewhere = { email: `elsewhere.${Date.now()}@other.example`, password: 'a-long-enough-password-1' };
    assert.equal((await api(world.app.url).post('/v1/auth/sign-up', { ...elsewhere, name: 'Elsewhere' })).status, 201);
    assert.equal((await signIn(elsewhere.email, elsewhere.password)).status, 200);
  });

  it('while required, the issuer cannot change (409 sso_not_ready); turned off, members sign in with passwords again', async () => {
    const { owner, member } = world.tenant;
    const moved = await setRequired(owner.token, true, { issuer: 'https://other-idp.example.test' });
    assert.equal(moved.status, 409, moved.text);
    assert.equal(moved.body.error, 'sso_not_ready');
    assert.equal((await setRequired(owner.token, false)).status, 200);
    assert.equal((await signIn(member.email, member.password)).status, 200);
  });
});
