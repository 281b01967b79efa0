// SSO sign-in and the directory: a member SCIM suspended or removed is refused, even with just-in-time
// provisioning on (it must not re-create someone the directory took out), and so is one an administrator
// removed; someone who was never a member is still provisioned, and SCIM provisioning them again lets
// them back in. Against oidc-provider on loopback.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { api } from '../support/http.ts';
import { patchOp, rotateScimToken, scim, userBody } from '../scim/helpers.ts';
import { accountOf, signInAtIdp, startOidcWorld, type OidcWorld } from './oidc-support.ts';

describe('OIDC sign-in: people SCIM or an administrator removed', () => {
  let world: OidcWorld;
  let directory: ReturnType<typeof scim>;
  before(async () => {
    world = await startOidcWorld();
    const { owner } = world.tenant;
    const current = (await api(world.app.url, owner.token).get('/v1/sso/connection')).body.connection;
    const jit = await api(world.app.url, owner.token).put('/v1/sso/connection', {
      domain: current.domain,
      issuer: current.issuer,
      clientId: current.clientId,
      jitProvisioning: { enabled: true },
    });
    assert.equal(jit.status, 200, jit.text);
    directory = scim(world.app, await rotateScimToken(world.app, owner.token));
  });
  after(async () => {
    await world?.close();
  });

  const fresh = (label: string) => `${label}.${randomBytes(4).toString('hex')}@example.test`;
  const membersWithEmail = async (email: string) =>
    (
      await world.app.db.query(
        'SELECT m.status FROM members m JOIN users u ON u.id = m.user_id WHERE m.organization_id = $1 AND u.email = $2',
        [world.tenant.orgId, email],
      )
    ).rows;
  const lastError = async () =>
    (await api(world.app.url, world.tenant.owner.token).get('/v1/sso/connection')).body.connection.lastError;

  async function signsIn(email: string, sub: string): Promise<boolean> {
    const flow = await signInAtIdp(world, email, { sub, email, email_verified: true, name: 'Pat' });
    if (!flow.code) return false;
    const exchanged = await api(world.app.url).post('/v1/auth/sso/token', {
      code: flow.code,
      codeVerifier: flow.verifier,
    });
    assert.equal(exchanged.status, 200, exchanged.text);
    return true;
  }

  it('a person SCIM provisioned signs in; once SCIM deactivates them they are refused (member_suspended), and nothing changes', async () => {
    const email = fresh('deactivated');
    const created = await directory.post('/Users', userBody(email));
    assert.equal(created.status, 201, created.text);
    assert.equal(await signsIn(email, `sub-${email}`), true);
    assert.equal(
      (await directory.patch(`/Users/${created.body.id}`, patchOp({ op: 'replace', value: { active: false } }))).status,
      200,
    );
    const flow = await signInAtIdp(world, email, { sub: `sub-${email}`, email, email_verified: true });
    assert.equal(flow.status, 403);
    assert.match(flow.text, /suspended/);
    assert.equal((await lastError()).category, 'member_suspended');
    assert.deepEqual(await membersWithEmail(email), [{ status: 'suspended' }]);
  });

  it('a person SCIM deleted is refused with just-in-time provisioning on (member_removed), by subject and by e-mail, and no membership is re-created', async () => {
    const email = fresh('deleted');
    const created = await directory.post('/Users', userBody(email));
    assert.equal(await signsIn(email, `sub-${email}`), true);
    assert.equal((await directory.delete(`/Users/${created.body.id}`)).status, 204);
    assert.deepEqual(await membersWithEmail(email), []);
    // The subject linked at the first sign-in, and a new subject that only the verified e-mail ties to the account.
    for (const sub of [`sub-${email}`, `other-sub-${email}`]) {
      const flow = await signInAtIdp(world, email, { sub, email, email_verified: true });
      assert.equal(flow.status, 403, sub);
      assert.match(flow.text, /removed from this organization by your organization.{1,6}s directory \(SCIM\)/);
      assert.equal(flow.code, undefined);
      assert.equal((await lastError()).category, 'member_removed');
      assert.deepEqual(await membersWithEmail(email), [], 'no membership re-created');
    }
  });

  it('SCIM provisioning the person again lifts the removal: they sign in', async () => {
    const email = fresh('returning');
    const created = await directory.post('/Users', userBody(email));
    assert.equal((await directory.delete(`/Users/${created.body.id}`)).status, 204);
    assert.equal(await signsIn(email, `sub-${email}`), false);
    assert.equal((await directory.post('/Users', userBody(email))).status, 201);
    assert.equal(await signsIn(email, `sub-${email}`), true);
    assert.deepEqual(await membersWithEmail(email), [{ status: 'active' }]);
  });

  it('someone never a member is provisioned just in time; removed by an administrator, they are refused; having left on their own, they may come back', async () => {
    const { owner, orgId } = world.tenant;
    const email = fresh('jit');
    assert.equal(await signsIn(email, `sub-${email}`), true);
    const [row] = (
      await world.app.db.query(
        'SELECT m.id FROM members m JOIN users u ON u.id = m.user_id WHERE m.organization_id = $1 AND u.email = $2',
        [orgId, email],
      )
    ).rows;
    const removed = await api(world.app.url, owner.token).delete(`/v1/orgs/${orgId}/members/${row.id}`);
    assert.equal(removed.status, 204, removed.text);
    const refused = await signInAtIdp(world, email, { sub: `sub-${email}`, email, email_verified: true });
    assert.equal(refused.status, 403);
    assert.match(refused.text, /by an administrator/);
    assert.deepEqual(await membersWithEmail(email), []);

    const leaver = fresh('leaver');
    const flow = await signInAtIdp(world, leaver, { sub: `sub-${leaver}`, email: leaver, email_verified: true });
    const session = (
      await api(world.app.url).post('/v1/auth/sso/token', { code: flow.code, codeVerifier: flow.verifier })
    ).body.sessionToken;
    const me = await api(world.app.url, session).get('/v1/org');
    assert.equal(
      (await api(world.app.url, session).delete(`/v1/orgs/${orgId}/members/${me.body.currentMember.id}`)).status,
      204,
    );
    assert.equal(await signsIn(leaver, `sub-${leaver}`), true);
  });

  it('a member an administrator removed and then invited again signs in', async () => {
    const { owner, orgId, member } = world.tenant;
    const removed = await api(world.app.url, owner.token).delete(`/v1/orgs/${orgId}/members/${member.memberId}`);
    assert.equal(removed.status, 204, removed.text);
    assert.equal((await signInAtIdp(world, member.email, accountOf(member))).status, 403);
    const invitation = await api(world.app.url, owner.token).post(`/v1/orgs/${orgId}/invitations`, {
      email: member.email,
      role: 'member',
    });
    assert.equal(invitation.status, 201, invitation.text);
    assert.equal(
      (await api(world.app.url, member.token).post(`/v1/invitations/${invitation.body.token}/accept`)).status,
      200,
    );
    const flow = await signInAtIdp(world, member.email, accountOf(member));
    assert.equal(
      (await api(world.app.url).post('/v1/auth/sso/token', { code: flow.code, codeVerifier: flow.verifier })).status,
      200,
    );
  });
});
