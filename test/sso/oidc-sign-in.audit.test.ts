// SSO sign-in in the audit log, against oidc-provider on loopback: a sign-in is a
// user.signed_in event with method sso in the connection's organization, a step-up a user.reauthenticated,
// just-in-time provisioning a member.provisioned; every refusal an sso.sign_in_failed with the reason's
// category (denied for the person, failure for the IdP), and never a token.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { api } from '../support/http.ts';
import { eventsOfRequest, freshRequestId } from '../audit/helpers.ts';
import {
  accountOf,
  appRedirectUri,
  browserFetch,
  pkcePair,
  signInAtIdp,
  startInBrowser,
  startOidcWorld,
  type OidcWorld,
} from './oidc-support.ts';

describe('OIDC sign-in: audit events', () => {
  let world: OidcWorld;
  before(async () => {
    world = await startOidcWorld();
  });
  after(async () => {
    await world?.close();
  });

  const failures = async (reason: string) =>
    (
      await world.app.db.query(
        `SELECT * FROM audit_events WHERE action = 'sso.sign_in_failed' AND changes->>'reason' = $1 ORDER BY occurred_at, seq`,
        [reason],
      )
    ).rows;
  const connectionId = async () =>
    (await api(world.app.url, world.tenant.owner.token).get('/v1/sso/connection')).body.connection.id as string;
  const exchange = (body: unknown, token?: string, requestId = freshRequestId()) =>
    api(world.app.url, token).post('/v1/auth/sso/token', body, { headers: { 'x-request-id': requestId } });

  it("a sign-in writes user.signed_in (method sso) in the connection's organization, the person as actor, in the exchange's request; no token in it", async () => {
    const { member, orgId } = world.tenant;
    const flow = await signInAtIdp(world, member.email, accountOf(member));
    const requestId = freshRequestId();
    const exchanged = await exchange({ code: flow.code, codeVerifier: flow.verifier }, undefined, requestId);
    assert.equal(exchanged.status, 200, exchanged.text);
    const events = await eventsOfRequest(world.app, requestId);
    assert.deepEqual(
      events.map((e) => [e.action, e.outcome, e.organization_id, e.actor_type, e.actor_id, e.target_id]),
      [['user.signed_in', 'success', orgId, 'user', member.userId, member.userId]],
    );
    assert.deepEqual(events[0].changes, { method: 'sso', connectionId: await connectionId() });
    const stored = JSON.stringify(events);
    assert.ok(
      !stored.includes(exchanged.body.sessionToken) && !stored.includes(flow.code!) && !stored.includes(flow.verifier),
    );
  });

  it('a step-up through SSO writes user.reauthenticated with authMethod sso', async () => {
    const { admin, orgId } = world.tenant;
    const flow = await signInAtIdp(world, admin.email, accountOf(admin), { reauthenticate: true });
    const requestId = freshRequestId();
    assert.equal(
      (await exchange({ code: flow.code, codeVerifier: flow.verifier }, admin.token, requestId)).status,
      200,
    );
    const events = await eventsOfRequest(world.app, requestId);
    assert.deepEqual(
      events.map((e) => [e.action, e.outcome, e.organization_id, e.actor_id]),
      [['user.reauthenticated', 'success', orgId, admin.userId]],
    );
    assert.equal(events[0].changes.authMethod, 'sso');
  });

  it("refusals at the callback write sso.sign_in_failed with the category: the person's as denied (with the e-mail), the IdP's as failure", async () => {
    const { orgId } = world.tenant;
    const outside = await signInAtIdp(world, world.tenant.member.email, {
      sub: 'outside-sub',
      email: 'someone@other.example',
      email_verified: true,
    });
    assert.equal(outside.status, 403);
    const [denied] = await failures('email_outside_domain');
    assert.equal(denied.outcome, 'denied');
    assert.equal(denied.organization_id, orgId);
    assert.equal(denied.target_type, 'sso_connection');
    assert.equal(denied.changes.email, 'someone@other.example');
    assert.equal(denied.changes.method, 'sso');

    const stranger = 'stranger@example.test';
    assert.equal(
      (await signInAtIdp(world, stranger, { sub: 'stranger-sub', email: stranger, email_verified: true })).status,
      403,
    );
    assert.equal((await failures('not_a_member')).at(-1).changes.email, stranger);

    // The IdP answers with an error instead of a code.
    const browser = await startInBrowser(world, world.tenant.member.email);
    const state = new URL(browser.idpUrl).searchParams.get('state')!;
    const refused = await browserFetch(
      browser.jar,
      `${world.app.url}/v1/auth/sso/oidc/callback?state=${encodeURIComponent(state)}&error=access_denied`,
    );
    assert.equal(refused.status, 403);
    const [idpError] = await failures('idp_error');
    assert.equal(idpError.outcome, 'failure');
    assert.equal(idpError.organization_id, orgId);
    assert.ok(!JSON.stringify(idpError).includes(state), 'no state in the event');
  });

  it('a removed member refused at the callback is named as the actor of the failure', async () => {
    const { owner, orgId, member } = world.tenant;
    assert.equal(
      (await api(world.app.url, owner.token).delete(`/v1/orgs/${orgId}/members/${member.memberId}`)).status,
      204,
    );
    assert.equal((await signInAtIdp(world, member.email, accountOf(member))).status, 403);
    const [removed] = await failures('member_removed');
    assert.equal(removed.actor_id, member.userId);
    assert.equal(removed.outcome, 'denied');
  });

  it('just-in-time provisioning writes member.provisioned with the role and teams', async () => {
    const { owner, orgId } = world.tenant;
    const current = (await api(world.app.url, owner.token).get('/v1/sso/connection')).body.connection;
    assert.equal(
      (
        await api(world.app.url, owner.token).put('/v1/sso/connection', {
          domain: current.domain,
          issuer: current.issuer,
          clientId: current.clientId,
          jitProvisioning: { enabled: true },
        })
      ).status,
      200,
    );
    const email = `jit.${Date.now()}@example.test`;
    const flow = await signInAtIdp(world, email, { sub: `sub-${email}`, email, email_verified: true });
    assert.ok(flow.code);
    const { rows } = await world.app.db.query(
      `SELECT * FROM audit_events WHERE action = 'member.provisioned' AND target_name = $1`,
      [email],
    );
    assert.equal(rows.length, 1);
    assert.equal(rows[0].organization_id, orgId);
    assert.deepEqual(rows[0].changes, { via: 'sso_just_in_time', protocol: 'oidc', role: 'member', teamIds: [] });
  });

  it("the exchange: a wrong verifier and another person's step-up write sso.sign_in_failed; an unknown code names no organization and writes nothing", async () => {
    const { admin, orgId } = world.tenant;
    const email = `exchange.${Date.now()}@example.test`;
    const flow = await signInAtIdp(world, email, { sub: `sub-${email}`, email, email_verified: true });
    const wrong = await exchange({ code: flow.code, codeVerifier: pkcePair().verifier });
    assert.equal(wrong.status, 400);
    const [mismatch] = await failures('code_verifier_mismatch');
    assert.equal(mismatch.organization_id, orgId);
    assert.equal(mismatch.outcome, 'denied');

    const stepUp = await signInAtIdp(
      world,
      email,
      { sub: `sub-${email}`, email, email_verified: true },
      { reauthenticate: true },
    );
    assert.equal((await exchange({ code: stepUp.code, codeVerifier: stepUp.verifier }, admin.token)).status, 401);
    assert.equal((await failures('reauthentication_session_mismatch')).length, 1);

    const requestId = freshRequestId();
    assert.equal(
      (await exchange({ code: 'never-issued-code', codeVerifier: pkcePair().verifier }, undefined, requestId)).status,
      400,
    );
    assert.deepEqual(await eventsOfRequest(world.app, requestId), []);
  });

  it("a start that cannot read the IdP's configuration writes sso.sign_in_failed (discovery_failed) and the connection's last error", async () => {
    const { owner, orgId } = world.tenant;
    const current = (await api(world.app.url, owner.token).get('/v1/sso/connection')).body.connection;
    // Nothing listens on the discard port.
    assert.equal(
      (
        await api(world.app.url, owner.token).put('/v1/sso/connection', {
          domain: current.domain,
          issuer: 'http://127.0.0.1:9/',
          clientId: current.clientId,
        })
      ).status,
      200,
    );
    const started = await api(world.app.url).post('/v1/auth/sso/start', {
      email: `x@${current.domain}`,
      redirectUri: appRedirectUri,
      codeChallenge: pkcePair().challenge,
      codeChallengeMethod: 'S256',
    });
    assert.equal(started.status, 502, started.text);
    const [failed] = await failures('discovery_failed');
    assert.equal(failed.organization_id, orgId);
    assert.equal(failed.outcome, 'failure');
    assert.equal(
      (await api(world.app.url, owner.token).get('/v1/sso/connection')).body.connection.lastError.category,
      'discovery_failed',
    );
  });
});
