// Instance administration as an administrator uses it: the overview, searching and paging people and
// organizations, changing a plan, adding and removing administrators, and the instance's audit log.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { checkTenantRouting } from '../db/tenant-routing.ts';
import { signUp } from '../support/fixtures.ts';
import { allPages, useAdminApp } from './support.ts';

describe('instance administration', () => {
  const t = useAdminApp();
  const asOperator = () => t.as(t.operator.token);
  const tenantRouting = checkTenantRouting();

  test('the overview counts people, organizations and who signed in lately, and says what needs attention', async () => {
    const { rows } = await t.app.db.query<{ people: number; organizations: number }>(
      '/* test */ SELECT (SELECT count(*) FROM users)::int AS people, (SELECT count(*) FROM organizations)::int AS organizations',
    );
    const response = await asOperator().get('/v1/admin/overview');
    assert.equal(response.status, 200, response.text);
    const overview = response.body;
    assert.equal(overview.people, rows[0]!.people);
    assert.equal(overview.organizations, rows[0]!.organizations);
    // Everyone here signed up (authenticated) within the minute.
    assert.deepEqual(overview.activePeople, { d1: rows[0]!.people, d7: rows[0]!.people, d30: rows[0]!.people });
    assert.equal(overview.workersRunning, 0);
    assert.equal(overview.llmSpendUsd30d, 0);
    assert.deepEqual(
      overview.attention.map((item: { code: string }) => item.code),
      ['single_administrator'],
    );
    assert.ok(Math.abs(Date.parse(overview.generatedAt) - Date.now()) < 60_000);
  });

  test('a person who authenticated long ago is not active', async () => {
    const idle = await signUp(t.app.url, 'idle');
    await t.app.db.query(
      "/* test */ UPDATE sessions SET authenticated_at = now() - interval '10 days' WHERE user_id = $1",
      [idle.userId],
    );
    const overview = (await asOperator().get('/v1/admin/overview')).body;
    assert.equal(overview.activePeople.d7, overview.people - 1);
    assert.equal(overview.activePeople.d30, overview.people);
  });

  test('people: every account once, in id order, page by page; search by the start of the e-mail or name', async () => {
    const { rows } = await t.app.db.query<{ id: string }>('/* test */ SELECT id FROM users ORDER BY id');
    const people = await allPages(t, t.operator.token, '/v1/admin/people?limit=2', 'people');
    assert.deepEqual(
      people.map((person) => person.id),
      rows.map((row) => row.id),
    );
    const owner = people.find((person) => person.id === t.tenant.owner.userId);
    assert.equal(owner.email, t.tenant.owner.email);
    assert.equal(owner.organizations, 1);
    assert.equal(owner.isInstanceAdmin, false);
    assert.ok(owner.lastAuthenticatedAt);
    assert.equal(people.find((person) => person.id === t.operator.userId).isInstanceAdmin, true);

    const byEmail = await asOperator().get(
      `/v1/admin/people?search=${encodeURIComponent(t.tenant.member.email.slice(0, 12).toUpperCase())}`,
    );
    assert.equal(byEmail.status, 200, byEmail.text);
    assert.deepEqual(
      byEmail.body.people.map((person: { id: string }) => person.id),
      [t.tenant.member.userId],
    );
    const byName = await allPages(t, t.operator.token, '/v1/admin/people?search=owner%20pers&limit=1', 'people');
    assert.deepEqual(
      byName.map((person) => person.id),
      [t.tenant.owner.userId],
    );
    // % and _ are letters here, not wildcards.
    const wildcard = await asOperator().get('/v1/admin/people?search=%25');
    assert.deepEqual(wildcard.body.people, []);
  });

  test('organizations: every one once, with plan and member count; search by the start of the name or the id', async () => {
    const { rows } = await t.app.db.query<{ id: string }>('/* test */ SELECT id FROM organizations ORDER BY id');
    const organizations = await allPages(t, t.operator.token, '/v1/admin/organizations?limit=1', 'organizations');
    assert.deepEqual(
      organizations.map((organization) => organization.id),
      rows.map((row) => row.id),
    );
    const acme = await asOperator().get('/v1/admin/organizations?search=ACM');
    assert.equal(acme.status, 200, acme.text);
    assert.equal(acme.body.organizations.length, 1);
    assert.deepEqual(
      { ...acme.body.organizations[0], createdAt: undefined },
      { id: t.tenant.orgId, name: 'Acme', plan: 'free', members: 3, createdAt: undefined },
    );
    const byId = await asOperator().get(`/v1/admin/organizations?search=${t.tenant.otherOrgId}`);
    assert.deepEqual(
      byId.body.organizations.map((organization: { name: string }) => organization.name),
      ['Globex'],
    );
  });

  test('a plan change is answered, read back, and written to the instance log and the organization log', async () => {
    const changed = await asOperator().patch(
      `/v1/admin/organizations/${t.tenant.otherOrgId}`,
      { plan: 'enterprise' },
      { headers: { 'x-request-id': 'admin-plan-1' } },
    );
    assert.equal(changed.status, 200, changed.text);
    assert.equal(changed.body.organization.plan, 'enterprise');
    assert.equal(changed.body.organization.members, 1);
    // The organization may now turn SSO on: the plan is the one the rest of orgplane reads.
    const org = await t.as(t.tenant.otherAdmin.token).get('/v1/org');
    assert.equal(org.body.organization.plan, 'enterprise');

    const instance = await asOperator().get('/v1/admin/audit-events?action=organization.plan_changed');
    const event = instance.body.events.find((item: { requestId: string }) => item.requestId === 'admin-plan-1');
    assert.ok(event, instance.text);
    assert.equal(event.organizationId, null);
    assert.deepEqual(event.actor, {
      type: 'user',
      id: t.operator.userId,
      name: t.operator.name,
      email: t.operator.email,
    });
    assert.deepEqual(event.target, { type: 'organization', id: t.tenant.otherOrgId, name: 'Globex' });
    assert.deepEqual(event.changes, { plan: { from: 'free', to: 'enterprise' } });
    const own = await t
      .as(t.tenant.otherAdmin.token)
      .get(`/v1/orgs/${t.tenant.otherOrgId}/audit-events?action=organization.plan_changed`);
    assert.equal(own.status, 200, own.text);
    assert.equal(own.body.events[0].requestId, 'admin-plan-1');

    // The same plan again, or nothing to change: answered, nothing written.
    for (const body of [{ plan: 'enterprise' }, {}]) {
      const again = await asOperator().patch(`/v1/admin/organizations/${t.tenant.otherOrgId}`, body, {
        headers: { 'x-request-id': 'admin-plan-2' },
      });
      assert.equal(again.status, 200, again.text);
      assert.equal(again.body.organization.plan, 'enterprise');
    }
    const { rows } = await t.app.db.query("/* test */ SELECT 1 FROM audit_events WHERE request_id = 'admin-plan-2'");
    assert.equal(rows.length, 0);
  });

  test('the plan route that came first still works, and is in the instance log too', async () => {
    const set = await asOperator().put(
      `/v1/admin/orgs/${t.tenant.otherOrgId}/plan`,
      { plan: 'team' },
      { headers: { 'x-request-id': 'admin-plan-put' } },
    );
    assert.equal(set.status, 200, set.text);
    const { rows } = await t.app.db.query<{ chain_id: string }>(
      "/* test */ SELECT chain_id FROM audit_events WHERE request_id = 'admin-plan-put' ORDER BY chain_id",
    );
    assert.deepEqual(rows.map((row) => row.chain_id).sort(), ['instance', t.tenant.otherOrgId].sort());
  });

  test('administrators: add by e-mail, list, remove; never the last one; a removed one is refused at once', async () => {
    const listed = await asOperator().get('/v1/admin/admins');
    assert.equal(listed.status, 200, listed.text);
    assert.deepEqual(
      listed.body.admins.map((admin: { userId: string }) => admin.userId),
      [t.operator.userId],
    );
    const added = await asOperator().post('/v1/admin/admins', { email: t.tenant.admin.email.toUpperCase() });
    assert.equal(added.status, 201, added.text);
    assert.equal(added.body.admin.userId, t.tenant.admin.userId);
    const again = await asOperator().post('/v1/admin/admins', { email: t.tenant.admin.email });
    assert.equal(again.status, 200, again.text);
    // The new administrator uses the area at once (their session authenticated recently).
    const theirs = await t.as(t.tenant.admin.token).get('/v1/admin/admins');
    assert.equal(theirs.status, 200, theirs.text);
    assert.equal(theirs.body.admins.length, 2);
    const overview = await t.as(t.tenant.admin.token).get('/v1/admin/overview');
    assert.deepEqual(overview.body.attention, []);

    const removed = await t.as(t.tenant.admin.token).delete(`/v1/admin/admins/${t.operator.userId}`);
    assert.equal(removed.status, 204, removed.text);
    const refused = await asOperator().get('/v1/admin/overview');
    assert.equal(refused.status, 403, refused.text);
    const last = await t.as(t.tenant.admin.token).delete(`/v1/admin/admins/${t.tenant.admin.userId}`);
    assert.equal(last.status, 409, last.text);
    assert.equal(last.body.error, 'last_admin');

    // Put back as it was, by the remaining administrator.
    assert.equal((await t.as(t.tenant.admin.token).post('/v1/admin/admins', { email: t.operator.email })).status, 201);
    assert.equal((await asOperator().delete(`/v1/admin/admins/${t.tenant.admin.userId}`)).status, 204);

    const events = await asOperator().get('/v1/admin/audit-events?action=instance_admin.');
    assert.deepEqual(
      events.body.events.map(
        (event: { action: string; target: { id: string } }) => `${event.action} ${event.target.id}`,
      ),
      [
        `instance_admin.removed ${t.tenant.admin.userId}`,
        `instance_admin.added ${t.operator.userId}`,
        `instance_admin.removed ${t.operator.userId}`,
        `instance_admin.added ${t.tenant.admin.userId}`,
      ],
    );
  });

  test("the instance's audit log verifies, exports and pages like an organization's", async () => {
    const verified = await asOperator().get('/v1/admin/audit-events/verify');
    assert.equal(verified.status, 200, verified.text);
    assert.equal(verified.body.ok, true);
    const all: any[] = [];
    let cursor: string | null = null;
    do {
      const page: any = await asOperator().get(`/v1/admin/audit-events?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      assert.equal(page.status, 200, page.text);
      all.push(...page.body.events);
      cursor = page.body.nextCursor;
    } while (cursor);
    assert.equal(all.length, verified.body.checked);
    assert.ok(all.every((event) => event.organizationId === null));

    const exported = await asOperator().get('/v1/admin/audit-events/export');
    assert.equal(exported.status, 200, exported.text);
    assert.match(exported.headers.get('content-type') ?? '', /^application\/x-ndjson/);
    const lines = exported.text
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    assert.deepEqual(
      lines.map((event) => event.id),
      all.map((event) => event.id).reverse(),
    );
    const csv = await asOperator().get('/v1/admin/audit-events/export?format=csv');
    assert.equal(csv.status, 200, csv.text);
    assert.equal(csv.text.trimEnd().split('\r\n').length, all.length + 1);

    // A changed event breaks the chain, and verify says where.
    const victim = all[all.length - 1];
    await t.app.db.query("/* test */ UPDATE audit_events SET target_name = 'forged' WHERE id = $1", [victim.id]);
    const broken = await asOperator().get('/v1/admin/audit-events/verify');
    assert.equal(broken.body.ok, false);
    assert.equal(broken.body.brokenAt, victim.id);
    await t.app.db.query('/* test */ UPDATE audit_events SET target_name = $2 WHERE id = $1', [
      victim.id,
      victim.target.name,
    ]);
  });

  test("every statement stays on one tenant, or is one of the instance's deliberate reads of every tenant", async () => {
    await tenantRouting.assertStatementsStayOnOneTenant(t.app.db, 10);
  });
});
