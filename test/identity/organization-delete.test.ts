// DELETE /v1/orgs/{organizationId}: deleting an organization, by its owner only, typing its name, with a
// recent authentication; the answers, who is refused and what stays. What the deletion erases, table by
// table, is organization-delete.erasure.test.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { useTenantApp } from '../support/harness.ts';
import { addMember, signUp, type TestUser } from '../support/fixtures.ts';
import { eventsOfRequest, freshRequestId } from '../audit/helpers.ts';
import { ageSession, reauthBody } from './reauth-support.ts';
import { organizationErasers } from '../../src/composition.ts';
import { createOrganizationService } from '../../src/modules/organizations/index.ts';
import { systemContext } from '../../src/platform/write-context.ts';
import { membershipOf } from '../support/identity.ts';

describe('deleting an organization', () => {
  const t = useTenantApp();

  /** A new organization owned by tenant's owner, with tenant's admin and member in it (their sessions back on the tenant). */
  async function doomed(label: string): Promise<{ id: string; name: string }> {
    const name = `${label} ${Math.random().toString(36).slice(2, 8)}`;
    const created = await t.as(t.tenant.owner.token).post('/v1/orgs', { name });
    assert.equal(created.status, 201, created.text);
    const id: string = created.body.organization.id;
    await addMember(t.app.url, t.tenant.owner, id, { ...t.tenant.admin }, 'admin');
    await addMember(t.app.url, t.tenant.owner, id, { ...t.tenant.member }, 'member');
    for (const user of [t.tenant.owner, t.tenant.admin, t.tenant.member])
      await t.as(user.token).put('/v1/session/active-organization', { organizationId: t.tenant.orgId });
    return { id, name };
  }
  const remove = (token: string | undefined, id: string, body: unknown, headers: Record<string, string> = {}) =>
    t.as(token).send<any>('DELETE', `/v1/orgs/${id}`, body, { headers });
  const exists = async (id: string) =>
    (await t.app.db.query('/* test */ SELECT 1 FROM organizations WHERE id = $1', [id])).rows.length === 1;

  it('the owner deletes it by typing its name (spaces around it aside): 204, and it is gone for everyone', async () => {
    const org = await doomed('Doomed');
    // The active organization of the owner's session is the doomed one: it loses it and keeps working.
    assert.equal(
      (await t.as(t.tenant.owner.token).put('/v1/session/active-organization', { organizationId: org.id })).status,
      200,
    );
    const requestId = freshRequestId();
    const deleted = await remove(
      t.tenant.owner.token,
      org.id,
      { confirm: `  ${org.name} ` },
      { 'x-request-id': requestId },
    );
    assert.equal(deleted.status, 204, deleted.text);
    assert.equal(deleted.text, '');
    assert.equal(await exists(org.id), false);
    const active = await t.as(t.tenant.owner.token).get('/v1/org');
    assert.equal(active.status, 404, active.text);
    assert.equal(active.body.error, 'organization_not_found');
    const me = await t.as(t.tenant.owner.token).get('/v1/me');
    assert.equal(me.status, 200, me.text);
    assert.ok(!me.body.organizations.some((o: { id: string }) => o.id === org.id));
    assert.ok(
      me.body.organizations.some((o: { id: string }) => o.id === t.tenant.orgId),
      'the other one is kept',
    );
    for (const user of [t.tenant.admin, t.tenant.member]) {
      const members = await t.as(user.token).get(`/v1/orgs/${org.id}/members`);
      assert.equal(members.status, 404, members.text);
    }
    const [event] = await eventsOfRequest(t.app, requestId);
    assert.equal(event.action, 'organization.deleted');
    assert.equal(event.chain_id, 'instance');
    assert.equal(event.target_name, org.name);
    assert.deepEqual(event.changes, { name: org.name });
    // The tenant is untouched.
    assert.equal((await t.as(t.tenant.member.token).get(`/v1/orgs/${t.tenant.orgId}/members`)).status, 200);
  });

  it('a confirmation that is not the name is 400 confirmation_mismatch, and nothing is deleted', async () => {
    const org = await doomed('Careful');
    for (const confirm of ['', 'careful', org.name.toUpperCase(), `${org.name}!`, org.id, 'Acme']) {
      const refused = await remove(t.tenant.owner.token, org.id, { confirm });
      assert.equal(refused.status, 400, `${confirm}: ${refused.text}`);
      assert.equal(refused.body.error, 'confirmation_mismatch');
      assert.match(refused.body.message, /name/);
    }
    for (const body of [{}, { confirm: 42 }, { confirm: null }, undefined, { confirm: 'x'.repeat(1001) }]) {
      const refused = await remove(t.tenant.owner.token, org.id, body);
      assert.equal(refused.status, 400, `${JSON.stringify(body)}: ${refused.text}`);
      assert.equal(refused.body.error, 'invalid_request');
    }
    assert.equal(await exists(org.id), true);
    // After a rename, the old name no longer confirms.
    assert.equal((await t.as(t.tenant.owner.token).patch(`/v1/orgs/${org.id}`, { name: 'Renamed first' })).status, 200);
    assert.equal((await remove(t.tenant.owner.token, org.id, { confirm: org.name })).status, 400);
    assert.equal((await remove(t.tenant.owner.token, org.id, { confirm: 'Renamed first' })).status, 204);
  });

  it('refuses an admin and a member (403), anonymous and garbage tokens (401), others and made-up ids (404)', async () => {
    const org = await doomed('Guarded');
    for (const user of [t.tenant.admin, t.tenant.member]) {
      const refused = await remove(user.token, org.id, { confirm: org.name });
      assert.equal(refused.status, 403, refused.text);
      assert.equal(refused.body.error, 'forbidden');
    }
    for (const token of [undefined, 'garbage', 'ops_not-a-real-token']) {
      const refused = await remove(token, org.id, { confirm: org.name });
      assert.equal(refused.status, 401, refused.text);
    }
    for (const user of [t.tenant.otherAdmin, t.tenant.outsider]) {
      const refused = await remove(user.token, org.id, { confirm: org.name });
      assert.equal(refused.status, 404, refused.text);
      assert.equal(refused.body.error, 'organization_not_found');
    }
    // The owner of one organization cannot delete another by its id (Globex), nor by a tampered or made-up one.
    const other = await remove(t.tenant.owner.token, t.tenant.otherOrgId, { confirm: 'Globex' });
    assert.equal(other.status, 404, other.text);
    const tampered = await remove(t.tenant.owner.token, `${org.id}x`, { confirm: org.name });
    assert.ok([400, 404].includes(tampered.status), tampered.text);
    const madeUp = await remove(t.tenant.owner.token, 'org_00000000000000000000000000', { confirm: org.name });
    assert.equal(madeUp.status, 404, madeUp.text);
    assert.equal(await exists(org.id), true);
    assert.equal(await exists(t.tenant.otherOrgId), true);
  });

  it('an API key cannot delete (sessions only), not even an admin key of the organization', async () => {
    const org = await doomed('Keyed');
    const key = await t.as(t.tenant.owner.token).post(`/v1/orgs/${org.id}/api-keys`, { name: 'ci', role: 'admin' });
    assert.equal(key.status, 201, key.text);
    const refused = await t
      .as()
      .send('DELETE', `/v1/orgs/${org.id}`, { confirm: org.name }, { headers: { 'x-api-key': key.body.key } });
    assert.equal(refused.status, 401, refused.text);
    assert.equal(await exists(org.id), true);
  });

  it('needs a recent authentication: an old session of the owner gets 403 reauth; an admin hears forbidden first', async () => {
    const org = await doomed('Stale');
    const stale = await signInAgain(t.tenant.owner);
    await ageSession(t.app, stale);
    const refused = await remove(stale, org.id, { confirm: org.name });
    assert.equal(refused.status, 403, refused.text);
    assert.equal(refused.body.error, reauthBody.error);
    assert.equal(refused.body.reason, reauthBody.reason);
    assert.equal(await exists(org.id), true);
    const staleAdmin = await signInAgain(t.tenant.admin);
    await ageSession(t.app, staleAdmin);
    const admin = await remove(staleAdmin, org.id, { confirm: org.name });
    assert.equal(admin.status, 403, admin.text);
    assert.equal(admin.body.error, 'forbidden');
  });

  it('an owner who handed ownership over is refused; the new owner may delete', async () => {
    const org = await doomed('Handed');
    const newOwner = await signUp(t.app.url, 'heir');
    await addMember(t.app.url, t.tenant.owner, org.id, newOwner, 'admin');
    const handed = await t
      .as(t.tenant.owner.token)
      .post(`/v1/orgs/${org.id}/transfer-ownership`, { memberId: newOwner.memberId });
    assert.equal(handed.status, 200, handed.text);
    const refused = await remove(t.tenant.owner.token, org.id, { confirm: org.name });
    assert.equal(refused.status, 403, refused.text);
    assert.equal((await remove(newOwner.token, org.id, { confirm: org.name })).status, 204);
    assert.equal(await exists(org.id), false);
  });

  it('the erasure is a service other modules call (an operator, say): it needs no member, and says whether there was one', async () => {
    const org = await doomed('Operated');
    const organizations = createOrganizationService({
      db: t.app.db,
      membership: membershipOf(t.app),
      erasers: organizationErasers,
    });
    const requestId = freshRequestId();
    const context = { ...systemContext('cli'), requestId };
    assert.equal(await organizations.eraseOrganization(context, org.id), true);
    assert.equal(await exists(org.id), false);
    const [event] = await eventsOfRequest(t.app, requestId);
    assert.equal(event.action, 'organization.deleted');
    assert.equal(event.actor_type, 'system');
    assert.equal(event.target_name, org.name);
    assert.equal(await organizations.eraseOrganization(systemContext('cli'), org.id), false, 'gone already');
    assert.equal(await organizations.eraseOrganization(systemContext('cli'), 'org_00000000000000000000000000'), false);
    assert.equal((await t.as(t.tenant.admin.token).get(`/v1/orgs/${org.id}/members`)).status, 404);
  });

  async function signInAgain(user: TestUser): Promise<string> {
    const answer = await t.as().post('/v1/auth/sign-in', { email: user.email, password: user.password });
    assert.equal(answer.status, 200, answer.text);
    return answer.body.sessionToken;
  }
});
