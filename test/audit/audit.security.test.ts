// Who may read the audit log: owners and admins of the organization; members 403; another
// organization's caller 404 (as for a missing organization) and never an event of this one.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { useTenantApp } from '../support/harness.ts';

const t = useTenantApp();
const routes = ['', '/export', '/verify'];

test('anonymous and garbage tokens: 401 on every audit route', async () => {
  await t.ready;
  for (const suffix of routes) {
    assert.equal((await t.as().get(`/v1/orgs/${t.tenant.orgId}/audit-events${suffix}`)).status, 401);
    assert.equal((await t.as('ops_garbage').get(`/v1/orgs/${t.tenant.orgId}/audit-events${suffix}`)).status, 401);
  }
});

test("a member gets 403 (and that refusal is itself an event); an outsider and another organization's admin 404", async () => {
  await t.ready;
  const { member, outsider, otherAdmin, orgId } = t.tenant;
  for (const suffix of routes) {
    const path = `/v1/orgs/${orgId}/audit-events${suffix}`;
    const refused = await t.as(member.token).get(path);
    assert.equal(refused.status, 403, path);
    assert.equal(refused.body.error, 'forbidden');
    assert.equal((await t.as(outsider.token).get(path)).status, 404, path);
    const other = await t.as(otherAdmin.token).get(path);
    assert.equal(other.status, 404, path);
    assert.equal(other.body.error, 'organization_not_found');
  }
  const denied = await t
    .as(t.tenant.owner.token)
    .get(`/v1/orgs/${orgId}/audit-events?outcome=denied&actor=${member.userId}`);
  assert.ok(denied.body.events.some((event: any) => event.target.id === 'GET /v1/orgs/:organizationId/audit-events'));
});

test("another organization's events never appear, whatever the filters; a tampered organization id is 400 or 404", async () => {
  await t.ready;
  const { owner, otherAdmin, orgId, otherOrgId } = t.tenant;
  // Organization B has events of its own (its creation, a team).
  assert.equal(
    (await t.as(otherAdmin.token).post(`/v1/orgs/${otherOrgId}/teams`, { name: 'Secret B team' })).status,
    201,
  );
  const theirs = await t.as(otherAdmin.token).get(`/v1/orgs/${otherOrgId}/audit-events`);
  assert.equal(theirs.status, 200);
  const theirTeam = theirs.body.events.find((event: any) => event.action === 'team.created');
  assert.ok(theirTeam);
  for (const query of [
    '',
    `?target=${theirTeam.target.id}`,
    `?actor=${otherAdmin.userId}`,
    `?actor=${encodeURIComponent(otherAdmin.email)}`,
  ]) {
    const mine = await t.as(owner.token).get(`/v1/orgs/${orgId}/audit-events${query}`);
    assert.equal(mine.status, 200);
    assert.ok(!mine.text.includes(otherOrgId) && !mine.text.includes('Secret B team'), `no event of B with ${query}`);
  }
  const exported = await t.as(owner.token).get(`/v1/orgs/${orgId}/audit-events/export`);
  assert.ok(!exported.text.includes(otherOrgId) && !exported.text.includes('Secret B team'));
  // A cursor of B's listing does not open B's log either: it is a position, read within the path's organization.
  assert.equal((await t.as(owner.token).get(`/v1/orgs/${otherOrgId}/audit-events`)).status, 404);
  assert.equal((await t.as(owner.token).get('/v1/orgs/org_tampered/audit-events')).status, 400);
  // Its last character changed (to one it is not: a random id may end in 0 already).
  const tampered = `${orgId.slice(0, -1)}${orgId.endsWith('0') ? '1' : '0'}`;
  assert.equal((await t.as(owner.token).get(`/v1/orgs/${tampered}/audit-events`)).status, 404);
});

test('an API key does not open the audit log (sessions only)', async () => {
  await t.ready;
  const { owner, orgId } = t.tenant;
  const key = await t.as(owner.token).post(`/v1/orgs/${orgId}/api-keys`, { name: 'reader', role: 'admin' });
  const response = await fetch(`${t.app.url}/v1/orgs/${orgId}/audit-events`, {
    headers: { 'x-api-key': key.body.key },
  });
  assert.equal(response.status, 401);
});
