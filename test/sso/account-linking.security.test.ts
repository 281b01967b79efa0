// SSO and an account someone else made with the person's e-mail, against real identity providers on
// loopback (oidc-provider, a samlify IdP): password sign-up proves nothing about the address, so when the
// person later signs in through their organization's SSO (just-in-time provisioning on), the earlier
// account must not become theirs. Before the linking rule, it did: the attacker's earlier session became a
// member of the organization (its member list, the person's memories), and their password kept working.
// Also: a sign-up racing the person's first sign-in, and an account's first link ending the sessions
// opened before it.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { testBackend } from '../support/app.ts';
import { holdLocks } from '../support/held-locks.ts';
import { api } from '../support/http.ts';
import { signInAtIdp, startOidcWorld, type OidcWorld } from './oidc-support.ts';
import { samlSignIn, startSamlWorld, type SamlWorld } from './saml-support.ts';
import { enableJit, freshEmail, liveSessions, membersStatus, signUpAs, traces } from './account-linking-support.ts';

interface Protocol {
  name: string;
  start(): Promise<OidcWorld | SamlWorld>;
  /** The person with `email` signs in at the identity provider (as `subject`); where orgplane sent the browser. */
  signIn(
    world: OidcWorld | SamlWorld,
    email: string,
    options?: { subject?: string; reauthenticate?: boolean },
  ): Promise<{ status: number; text: string; code: string | undefined; verifier: string }>;
}

const protocols: Protocol[] = [
  {
    name: 'OIDC',
    start: () => startOidcWorld(),
    signIn: (world, email, options = {}) =>
      signInAtIdp(
        world as OidcWorld,
        email,
        { sub: options.subject ?? `sub-${email}`, email, email_verified: true, name: 'The Person' },
        { reauthenticate: options.reauthenticate ?? false },
      ),
  },
  {
    name: 'SAML',
    start: () => startSamlWorld(),
    signIn: (world, email, options = {}) =>
      samlSignIn(
        world as SamlWorld,
        email,
        { nameId: options.subject ?? email, email, name: 'The Person' },
        { reauthenticate: options.reauthenticate ?? false },
      ),
  },
];

for (const protocol of protocols) {
  describe(`SSO account linking (${protocol.name}): an account someone signed up for with the person's e-mail`, () => {
    let world: OidcWorld | SamlWorld;
    before(async () => {
      world = await protocol.start();
      await enableJit(world);
    });
    after(async () => {
      await world?.close();
    });

    it("the attacker's earlier session does not become a member when the person signs in through SSO", async () => {
      const email = freshEmail('person');
      const attacker = await signUpAs(world.app, email);
      const flow = await protocol.signIn(world, email);
      assert.equal(
        await membersStatus(world.app, attacker.token, world.tenant.orgId),
        404,
        "the attacker's earlier session sees the organization's members",
      );
      assert.equal(flow.status, 403, flow.text);
      assert.equal(flow.code, undefined);
      assert.deepEqual(await traces(world.app, world.tenant.orgId, attacker.userId), { members: 0, links: 0 });
    });

    it("the attacker's password does not sign in to the organization afterwards", async () => {
      const email = freshEmail('person');
      const attacker = await signUpAs(world.app, email);
      await protocol.signIn(world, email);
      const signedIn = await api(world.app.url).post('/v1/auth/sign-in', { email, password: attacker.password });
      // Their own account still opens with their password; it is simply not the organization's.
      assert.equal(signedIn.status, 200, signedIn.text);
      assert.equal(
        await membersStatus(world.app, signedIn.body.sessionToken, world.tenant.orgId),
        404,
        "the attacker's password still signs in to the organization",
      );
      const me = await api(world.app.url, signedIn.body.sessionToken).get('/v1/me');
      assert.deepEqual(me.body.organizations, []);
    });

    it('the attacker does not read what the person keeps in their memory', async () => {
      const email = freshEmail('person');
      const attacker = await signUpAs(world.app, email);
      const flow = await protocol.signIn(world, email);
      if (flow.code) {
        // The sign-in went through: whatever account it opened, the person uses it as theirs.
        const exchanged = await api(world.app.url).post('/v1/auth/sso/token', {
          code: flow.code,
          codeVerifier: flow.verifier,
        });
        assert.equal(exchanged.status, 200, exchanged.text);
        const kept = await api(world.app.url, exchanged.body.sessionToken).post('/v1/memory', {
          content: 'My salary review with Dana is on Friday',
        });
        assert.equal(kept.status, 201, kept.text);
        await api(world.app.url, attacker.token).put('/v1/session/active-organization', {
          organizationId: world.tenant.orgId,
        });
        const read = await api(world.app.url, attacker.token).get('/v1/memory');
        assert.ok(!JSON.stringify(read.body ?? {}).includes('salary review'), "the attacker reads the person's memory");
      }
      assert.equal(flow.status, 403, flow.text);
    });

    it('a step-up the attacker started and the person completed at the identity provider makes them no member either', async () => {
      const email = freshEmail('person');
      const attacker = await signUpAs(world.app, email);
      const flow = await protocol.signIn(world, email, { reauthenticate: true });
      assert.equal(
        await membersStatus(world.app, attacker.token, world.tenant.orgId),
        404,
        "the attacker's session became a member through a step-up",
      );
      if (flow.code) {
        const exchanged = await api(world.app.url, attacker.token).post('/v1/auth/sso/token', {
          code: flow.code,
          codeVerifier: flow.verifier,
        });
        assert.notEqual(exchanged.status, 200, "the attacker's session was stepped up by the person's sign-in");
      }
      assert.equal(flow.status, 403, flow.text);
      assert.deepEqual(await traces(world.app, world.tenant.orgId, attacker.userId), { members: 0, links: 0 });
    });

    it('an invitation to the address, sent from an organization the attacker controls and accepted, makes the address no more theirs', async () => {
      const email = freshEmail('person');
      const attacker = await signUpAs(world.app, email);
      // Anyone may make an organization and invite any address: an accepted invitation proves no mailbox.
      const accomplice = await signUpAs(world.app, freshEmail('accomplice'));
      const created = await api(world.app.url, accomplice.token).post('/v1/orgs', { name: 'Attacker Inc' });
      assert.equal(created.status, 201, created.text);
      const invitation = await api(world.app.url, accomplice.token).post(
        `/v1/orgs/${created.body.organization.id}/invitations`,
        { email, role: 'member' },
      );
      assert.equal(invitation.status, 201, invitation.text);
      assert.equal(
        (await api(world.app.url, attacker.token).post(`/v1/invitations/${invitation.body.token}/accept`)).status,
        200,
      );
      const flow = await protocol.signIn(world, email);
      assert.equal(
        await membersStatus(world.app, attacker.token, world.tenant.orgId),
        404,
        "the attacker's earlier session sees the organization's members",
      );
      assert.equal(flow.status, 403, flow.text);
    });

    it("a sign-up that commits while the person's first sign-in is provisioning them is not taken either", {
      skip: testBackend !== 'postgres' && 'needs PostgreSQL: a second connection holds the sign-up open',
    }, async () => {
      const email = freshEmail('raced');
      const attackerId = `usr_raced${randomBytes(6).toString('hex')}`;
      // The row sign-up writes, held uncommitted: the sign-in looked the address up before and found none.
      const signUp = await holdLocks(
        world.app,
        `INSERT INTO users (id, email, name, password_hash) VALUES ($1, $2, 'Not The Person', 'x')`,
        [attackerId, email],
      );
      const flow = protocol.signIn(world, email);
      await signUp.waitForBlocked(1);
      await signUp.release();
      const result = await flow;
      assert.deepEqual(
        await traces(world.app, world.tenant.orgId, attackerId),
        { members: 0, links: 0 },
        "the account signed up during the sign-in became the person's",
      );
      assert.equal(result.status, 403, result.text);
      assert.match(result.text, /was made while you were signing in/);
    });

    it("a member account's sessions opened before its first link to the identity provider end with it", async () => {
      const { owner, orgId } = world.tenant;
      const email = freshEmail('member');
      const earlier = await signUpAs(world.app, email);
      const invitation = await api(world.app.url, owner.token).post(`/v1/orgs/${orgId}/invitations`, {
        email,
        role: 'member',
      });
      assert.equal(
        (await api(world.app.url, earlier.token).post(`/v1/invitations/${invitation.body.token}/accept`)).status,
        200,
      );
      assert.equal(await membersStatus(world.app, earlier.token, orgId), 200);
      const flow = await protocol.signIn(world, email);
      assert.ok(flow.code, flow.text);
      assert.equal(
        (await api(world.app.url, earlier.token).get('/v1/me')).status,
        401,
        'a session opened before the first link outlives it',
      );
      assert.equal(await liveSessions(world.app, earlier.userId), 0);
    });
  });
}
