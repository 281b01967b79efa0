// SAML sign-in in the audit log, against a samlify IdP on loopback: the ACS's refusals are
// sso.sign_in_failed events in the connection's organization with the reason's category (as OIDC's
// callback's are, test/sso/oidc-sign-in.audit.test.ts), and a sign-in is user.signed_in (method sso)
// at the code exchange. Never the assertion in the event.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { freshRequestId, eventsOfRequest } from '../audit/helpers.ts';
import { api } from '../support/http.ts';
import { personOf, postToAcs, samlSignIn, startInBrowser, startSamlWorld, type SamlWorld } from './saml-support.ts';

describe('SAML sign-in: audit events', () => {
  let world: SamlWorld;
  before(async () => {
    world = await startSamlWorld();
  });
  after(async () => {
    await world?.close();
  });

  const failures = async (reason: string) =>
    (
      await world.app.db.query(
        `SELECT * FROM audit_events WHERE action = 'sso.sign_in_failed' AND changes->>'reason' = $1 ORDER BY seq`,
        [reason],
      )
    ).rows;

  it('a sign-in through the ACS and the exchange writes user.signed_in (method sso), the person as actor', async () => {
    const { member, orgId } = world.tenant;
    const flow = await samlSignIn(world, member.email, personOf(member));
    assert.equal(flow.status, 303, flow.text);
    const requestId = freshRequestId();
    const exchanged = await api(world.app.url).post(
      '/v1/auth/sso/token',
      { code: flow.code, codeVerifier: flow.verifier },
      { headers: { 'x-request-id': requestId } },
    );
    assert.equal(exchanged.status, 200, exchanged.text);
    const events = await eventsOfRequest(world.app, requestId);
    assert.deepEqual(
      events.map((e) => [e.action, e.outcome, e.organization_id, e.actor_id]),
      [['user.signed_in', 'success', orgId, member.userId]],
    );
    assert.equal(events[0].changes.method, 'sso');
  });

  it('an answer that fails the checks writes sso.sign_in_failed (failure, protocol saml), without the assertion', async () => {
    const { member, orgId } = world.tenant;
    const browser = await startInBrowser(world, member.email);
    world.idp.signInAs(personOf(member));
    const answer = await world.idp.answer(browser.idpUrl);
    const forged = Buffer.from(
      '<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol">not signed</samlp:Response>',
    ).toString('base64');
    const before = (await failures('assertion_rejected')).length;
    const refused = await postToAcs(
      answer.action,
      { SAMLResponse: forged, RelayState: answer.RelayState },
      browser.jar,
    );
    assert.equal(refused.status, 403, refused.text.slice(0, 300));
    const events = await failures('assertion_rejected');
    assert.equal(events.length, before + 1);
    const event = events.at(-1);
    assert.equal(event.outcome, 'failure');
    assert.equal(event.organization_id, orgId);
    assert.equal(event.target_id, world.connectionId);
    assert.equal(event.changes.protocol, 'saml');
    assert.ok(!JSON.stringify(event).includes(forged) && !JSON.stringify(event).includes(answer.SAMLResponse));
  });

  it('a person outside the domain is denied: sso.sign_in_failed (denied) with the e-mail', async () => {
    const flow = await samlSignIn(world, world.tenant.member.email, {
      nameId: 'outside',
      email: 'someone@other.example',
      name: 'Outside',
    });
    assert.equal(flow.status, 403, flow.text.slice(0, 300));
    const event = (await failures('email_outside_domain')).at(-1);
    assert.equal(event.outcome, 'denied');
    assert.equal(event.organization_id, world.tenant.orgId);
    assert.equal(event.changes.email, 'someone@other.example');
  });
});
