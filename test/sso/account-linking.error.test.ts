// The refusal of an account the organization has no tie to (403 account_not_linkable), against real
// identity providers on loopback: what the person reads, what the organization's log and the connection's
// health say, and that nothing was linked, provisioned, created or ended, with just-in-time provisioning
// on or off.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { api } from '../support/http.ts';
import { signInAtIdp, startOidcWorld, type OidcWorld } from './oidc-support.ts';
import { lastError, samlSignIn, startSamlWorld, type SamlWorld } from './saml-support.ts';
import { enableJit, freshEmail, liveSessions, signUpAs, traces } from './account-linking-support.ts';

const failuresFor = async (world: OidcWorld | SamlWorld, email: string) =>
  (
    await world.app.db.query(
      `/* test */ SELECT * FROM audit_events WHERE action = 'sso.sign_in_failed' AND changes->>'email' = $1 ORDER BY seq`,
      [email],
    )
  ).rows;

describe('SSO account linking (OIDC): an account the organization has no tie to', () => {
  let world: OidcWorld;
  before(async () => {
    world = await startOidcWorld();
  });
  after(async () => {
    await world?.close();
  });

  const connection = async () =>
    (await api(world.app.url, world.tenant.owner.token).get('/v1/sso/connection')).body.connection;
  const person = (email: string) => ({ sub: `sub-${email}`, email, email_verified: true, name: 'The Person' });

  it('is refused with a readable 403 page that says what to do, recorded as denied with the e-mail, and nothing changes (just-in-time provisioning off)', async () => {
    const email = freshEmail('person');
    const account = await signUpAs(world.app, email);
    const flow = await signInAtIdp(world, email, person(email));
    assert.equal(flow.status, 403);
    assert.equal(flow.code, undefined);
    assert.match(flow.text, /<h1 id="refused">Sign-in refused<\/h1>/);
    assert.ok(flow.text.includes(`An orgplane account with the e-mail address ${email} already exists`), flow.text);
    assert.match(flow.text, /sign in with its password and ask an administrator to invite you/);
    const current = await connection();
    assert.equal(current.lastError.category, 'account_not_linkable');
    const [failure] = await failuresFor(world, email);
    assert.equal(failure.outcome, 'denied');
    assert.equal(failure.organization_id, world.tenant.orgId);
    assert.equal(failure.changes.reason, 'account_not_linkable');
    assert.equal(failure.actor_id, 'anonymous', 'whoever holds that account is not the one signing in');
    assert.deepEqual(await traces(world.app, world.tenant.orgId, account.userId), { members: 0, links: 0 });
    assert.equal(await liveSessions(world.app, account.userId), 1, "the account's own session is left as it was");
  });

  it('is refused the same with just-in-time provisioning on, and no account or membership is made', async () => {
    await enableJit(world);
    const email = freshEmail('person');
    const account = await signUpAs(world.app, email);
    const flow = await signInAtIdp(world, email, person(email));
    assert.equal(flow.status, 403);
    assert.ok(flow.text.includes('already exists'), flow.text);
    assert.equal((await connection()).lastError.category, 'account_not_linkable');
    assert.deepEqual(await traces(world.app, world.tenant.orgId, account.userId), { members: 0, links: 0 });
    const { rows } = await world.app.db.query('/* test */ SELECT id FROM users WHERE lower(email) = lower($1)', [
      email,
    ]);
    assert.deepEqual(
      rows.map((row) => row.id),
      [account.userId],
      'no second account',
    );
    const provisioned = await world.app.db.query(
      `/* test */ SELECT 1 FROM audit_events WHERE action IN ('member.provisioned', 'sso.account_linked') AND target_name = $1`,
      [email],
    );
    assert.equal(provisioned.rows.length, 0);
  });

  it('an account that is a member of another organization only is refused here as well', async () => {
    const email = freshEmail('elsewhere');
    const account = await signUpAs(world.app, email);
    const other = await api(world.app.url, world.tenant.otherAdmin.token).post(
      `/v1/orgs/${world.tenant.otherOrgId}/invitations`,
      { email, role: 'member' },
    );
    assert.equal(
      (await api(world.app.url, account.token).post(`/v1/invitations/${other.body.token}/accept`)).status,
      200,
    );
    const flow = await signInAtIdp(world, email, person(email));
    assert.equal(flow.status, 403);
    assert.equal((await connection()).lastError.category, 'account_not_linkable');
    assert.deepEqual(await traces(world.app, world.tenant.orgId, account.userId), { members: 0, links: 0 });
  });

  it('a step-up is refused the same, and the calling session is not stepped up', async () => {
    const email = freshEmail('person');
    const account = await signUpAs(world.app, email);
    const flow = await signInAtIdp(world, email, person(email), { reauthenticate: true });
    assert.equal(flow.status, 403);
    assert.equal(flow.code, undefined);
    assert.equal((await connection()).lastError.category, 'account_not_linkable');
    assert.equal((await api(world.app.url, account.token).get('/v1/me')).body.session.authMethod, 'password');
  });
});

describe('SSO account linking (SAML): an account the organization has no tie to', () => {
  let world: SamlWorld;
  before(async () => {
    world = await startSamlWorld();
    await enableJit(world);
  });
  after(async () => {
    await world?.close();
  });

  it("is refused at the ACS with a readable 403 page, recorded as the connection's last error, and nothing changes", async () => {
    const email = freshEmail('person');
    const account = await signUpAs(world.app, email);
    const flow = await samlSignIn(world, email, { nameId: email, email, name: 'The Person' });
    assert.equal(flow.status, 403, flow.text.slice(0, 300));
    assert.match(flow.contentType ?? '', /text\/html/);
    assert.ok(flow.text.includes(`An orgplane account with the e-mail address ${email} already exists`), flow.text);
    assert.equal((await lastError(world))?.category, 'account_not_linkable');
    const [failure] = await failuresFor(world, email);
    assert.equal(failure.outcome, 'denied');
    assert.equal(failure.changes.protocol, 'saml');
    assert.deepEqual(await traces(world.app, world.tenant.orgId, account.userId), { members: 0, links: 0 });
  });
});
