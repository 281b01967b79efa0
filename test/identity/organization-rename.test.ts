// PATCH /v1/orgs/{organizationId}: renaming an organization, by its owners and admins, with a recent
// authentication; happy paths, errors and who is refused.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { useTenantApp } from '../support/harness.ts';
import { eventsOfRequest, freshRequestId } from '../audit/helpers.ts';
import { ageSession, reauthBody } from './reauth-support.ts';
import { signUp } from '../support/fixtures.ts';

describe('renaming an organization', () => {
  const t = useTenantApp();
  const path = () => `/v1/orgs/${t.tenant.orgId}`;
  const nameOf = async (token: string) => (await t.as(token).get('/v1/org')).body.organization.name as string;

  it('the owner and an admin rename it; the name is trimmed, the event names both names', async () => {
    const before = await nameOf(t.tenant.owner.token);
    const requestId = freshRequestId();
    const renamed = await t
      .as(t.tenant.owner.token)
      .patch(path(), { name: '  Acme Renamed  ' }, { headers: { 'x-request-id': requestId } });
    assert.equal(renamed.status, 200, renamed.text);
    assert.equal(renamed.body.organization.name, 'Acme Renamed');
    assert.equal(renamed.body.organization.id, t.tenant.orgId);
    assert.equal(await nameOf(t.tenant.member.token), 'Acme Renamed', 'every member sees the new name');
    const me = await t.as(t.tenant.member.token).get('/v1/me');
    assert.equal(me.body.organizations.find((o: { id: string }) => o.id === t.tenant.orgId).name, 'Acme Renamed');
    const events = await eventsOfRequest(t.app, requestId);
    assert.equal(events.length, 1);
    assert.equal(events[0].action, 'organization.renamed');
    assert.equal(events[0].outcome, 'success');
    assert.deepEqual(events[0].changes, { name: { from: before, to: 'Acme Renamed' } });

    const byAdmin = await t.as(t.tenant.admin.token).patch(path(), { name: 'Acme by admin' });
    assert.equal(byAdmin.status, 200, byAdmin.text);
    assert.equal(await nameOf(t.tenant.owner.token), 'Acme by admin');
  });

  it('the same name again changes nothing and writes no event', async () => {
    const current = await nameOf(t.tenant.owner.token);
    const requestId = freshRequestId();
    const same = await t
      .as(t.tenant.owner.token)
      .patch(path(), { name: current }, { headers: { 'x-request-id': requestId } });
    assert.equal(same.status, 200, same.text);
    assert.equal(same.body.organization.name, current);
    assert.deepEqual(await eventsOfRequest(t.app, requestId), []);
  });

  it('a blank, missing, over-long or non-string name is 400 with the field named', async () => {
    const before = await nameOf(t.tenant.owner.token);
    for (const body of [{ name: '   ' }, {}, { name: 'x'.repeat(201) }, { name: 42 }]) {
      const refused = await t.as(t.tenant.owner.token).patch(path(), body);
      assert.equal(refused.status, 400, `${JSON.stringify(body)}: ${refused.text}`);
      assert.equal(refused.body.error, 'invalid_request');
      assert.ok(
        refused.body.details.some((d: { path: string[] }) => d.path.join('.') === 'name'),
        refused.text,
      );
    }
    assert.equal(await nameOf(t.tenant.owner.token), before);
  });

  it('refuses a member (403), anonymous and garbage tokens (401), another organization and made-up ids (404)', async () => {
    const before = await nameOf(t.tenant.owner.token);
    const member = await t.as(t.tenant.member.token).patch(path(), { name: 'Taken over' });
    assert.equal(member.status, 403, member.text);
    assert.equal(member.body.error, 'forbidden');
    for (const token of [undefined, 'garbage', 'ops_not-a-real-token']) {
      const refused = await t.as(token).patch(path(), { name: 'Taken over' });
      assert.equal(refused.status, 401, refused.text);
    }
    const otherAdmin = await t.as(t.tenant.otherAdmin.token).patch(path(), { name: 'Taken over' });
    assert.equal(otherAdmin.status, 404, otherAdmin.text);
    assert.equal(otherAdmin.body.error, 'organization_not_found');
    const outsider = await t.as(t.tenant.outsider.token).patch(path(), { name: 'Taken over' });
    assert.equal(outsider.status, 404, outsider.text);
    // An owner of one organization cannot rename another by its id, nor by a tampered one.
    const other = await t.as(t.tenant.owner.token).patch(`/v1/orgs/${t.tenant.otherOrgId}`, { name: 'Taken over' });
    assert.equal(other.status, 404, other.text);
    const tampered = await t.as(t.tenant.owner.token).patch(`${path()}x`, { name: 'Taken over' });
    assert.ok([400, 404].includes(tampered.status), tampered.text);
    const otherName = (await t.as(t.tenant.otherAdmin.token).get('/v1/org')).body.organization.name;
    assert.equal(otherName, 'Globex');
    assert.equal(await nameOf(t.tenant.owner.token), before, 'nothing was renamed');
  });

  it('an API key cannot rename (sessions only)', async () => {
    const key = await t
      .as(t.tenant.owner.token)
      .post(`/v1/orgs/${t.tenant.orgId}/api-keys`, { name: 'ci', role: 'admin' });
    assert.equal(key.status, 201, key.text);
    const refused = await t.as().patch(path(), { name: 'By key' }, { headers: { 'x-api-key': key.body.key } });
    assert.equal(refused.status, 401, refused.text);
  });

  it('needs a recent authentication: an old session gets 403 reauth and nothing changes; a member hears forbidden first', async () => {
    const before = await nameOf(t.tenant.owner.token);
    const stale = await signInAgain(t.tenant.admin.email, t.tenant.admin.password);
    await ageSession(t.app, stale);
    const refused = await t.as(stale).patch(path(), { name: 'Too old' });
    assert.equal(refused.status, 403, refused.text);
    assert.equal(refused.body.error, reauthBody.error);
    assert.equal(refused.body.reason, reauthBody.reason);
    assert.equal(await nameOf(t.tenant.owner.token), before);
    const staleMember = await signInAgain(t.tenant.member.email, t.tenant.member.password);
    await ageSession(t.app, staleMember);
    const member = await t.as(staleMember).patch(path(), { name: 'Too old' });
    assert.equal(member.status, 403, member.text);
    assert.equal(member.body.error, 'forbidden');
  });

  it('an admin demoted meanwhile is refused', async () => {
    const admin = await signUp(t.app.url, 'demoted');
    const invited = await t
      .as(t.tenant.owner.token)
      .post(`/v1/orgs/${t.tenant.orgId}/invitations`, { email: admin.email, role: 'admin' });
    assert.equal(invited.status, 201, invited.text);
    const joined = await t.as(admin.token).post(`/v1/invitations/${invited.body.token}/accept`);
    assert.equal(joined.status, 200, joined.text);
    const demoted = await t
      .as(t.tenant.owner.token)
      .patch(`/v1/orgs/${t.tenant.orgId}/members/${joined.body.member.id}`, { role: 'member' });
    assert.equal(demoted.status, 200, demoted.text);
    const refused = await t.as(admin.token).patch(path(), { name: 'Demoted' });
    assert.equal(refused.status, 403, refused.text);
  });

  async function signInAgain(email: string, password: string): Promise<string> {
    const answer = await t.as().post('/v1/auth/sign-in', { email, password });
    assert.equal(answer.status, 200, answer.text);
    return answer.body.sessionToken;
  }
});
