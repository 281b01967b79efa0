// Who may use /v1/admin: an instance administrator who authenticated recently, and nobody else (an
// organization's owner included); an API key never. A refused call changes nothing. And an
// administrator, being no member, reads no organization's content through the organization routes.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { ageSession, reauthBody } from '../identity/reauth-support.ts';
import { signUp, type TestUser } from '../support/fixtures.ts';
import { useAdminApp } from './support.ts';

describe('instance administration: security', () => {
  const t = useAdminApp();
  let apiKey = '';
  let stale: TestUser;

  const routes = () => [
    { method: 'GET', path: '/v1/admin/overview' },
    { method: 'GET', path: '/v1/admin/people' },
    { method: 'GET', path: '/v1/admin/organizations' },
    { method: 'PATCH', path: `/v1/admin/organizations/${t.tenant.orgId}`, body: { plan: 'enterprise' } },
    { method: 'GET', path: '/v1/admin/admins' },
    { method: 'POST', path: '/v1/admin/admins', body: { email: t.tenant.owner.email } },
    { method: 'DELETE', path: `/v1/admin/admins/${t.operator.userId}` },
    { method: 'GET', path: '/v1/admin/audit-events' },
    { method: 'GET', path: '/v1/admin/audit-events/export' },
    { method: 'GET', path: '/v1/admin/audit-events/verify' },
  ];

  before(async () => {
    await t.ready;
    const key = await t
      .as(t.tenant.owner.token)
      .post(`/v1/orgs/${t.tenant.orgId}/api-keys`, { name: 'ops', role: 'admin' });
    assert.equal(key.status, 201, key.text);
    apiKey = key.body.key;
    stale = await signUp(t.app.url, 'staleadmin');
    await t.app.db.query('/* test */ UPDATE users SET is_instance_admin = true WHERE id = $1', [stale.userId]);
    await ageSession(t.app, stale.token);
  });

  async function unchanged() {
    const { rows } = await t.app.db.query<{ plan: string; admins: string[] }>(
      `/* test */ SELECT (SELECT plan FROM organizations WHERE id = $1) AS plan,
              (SELECT array_agg(id ORDER BY id) FROM users WHERE is_instance_admin) AS admins`,
      [t.tenant.orgId],
    );
    assert.equal(rows[0]!.plan, 'free');
    assert.deepEqual(rows[0]!.admins, [t.operator.userId, stale.userId].sort());
  }

  test('anonymous, a garbage token and an API key get 401', async () => {
    for (const route of routes()) {
      for (const headers of [{}, { authorization: 'Bearer nonsense' }, { 'x-api-key': apiKey }] as Record<
        string,
        string
      >[]) {
        const answer = await t.as().send<any>(route.method, route.path, route.body, { headers });
        assert.equal(answer.status, 401, `${route.method} ${route.path} ${JSON.stringify(headers)}: ${answer.text}`);
        assert.equal(answer.body.error, 'unauthorized');
      }
    }
    await unchanged();
  });

  test("a member, an organization's admin and owner, another organization's owner, and a person of no organization get 403", async () => {
    const people = {
      member: t.tenant.member,
      admin: t.tenant.admin,
      owner: t.tenant.owner,
      other: t.tenant.otherAdmin,
      outsider: t.tenant.outsider,
    };
    for (const route of routes()) {
      for (const [who, person] of Object.entries(people)) {
        const answer = await t.as(person.token).send<any>(route.method, route.path, route.body);
        assert.equal(answer.status, 403, `${who} ${route.method} ${route.path}: ${answer.text}`);
        assert.equal(answer.body.error, 'forbidden');
        assert.match(answer.body.message, /instance administrators/);
      }
    }
    await unchanged();
  });

  test('an administrator whose authentication is old gets 403 reauth everywhere, and in after re-authenticating', async () => {
    for (const route of routes()) {
      const answer = await t.as(stale.token).send<any>(route.method, route.path, route.body);
      assert.equal(answer.status, 403, `${route.method} ${route.path}: ${answer.text}`);
      assert.equal(answer.body.error, reauthBody.error);
      assert.equal(answer.body.reason, reauthBody.reason);
    }
    await unchanged();
    const again = await t.as(stale.token).post('/v1/auth/reauthenticate', { password: stale.password });
    assert.equal(again.status, 200, again.text);
    assert.equal((await t.as(stale.token).get('/v1/admin/overview')).status, 200);
    await ageSession(t.app, stale.token);
  });

  test("the refusals are in the refused caller's organization log, and nothing else is written", async () => {
    const events = await t
      .as(t.tenant.owner.token)
      .get(
        `/v1/orgs/${t.tenant.orgId}/audit-events?action=request.denied&target=PATCH%20%2Fv1%2Fadmin%2Forganizations%2F%3AorganizationId`,
      );
    assert.equal(events.status, 200, events.text);
    assert.ok(events.body.events.length >= 1);
    const instance = await t.as(t.operator.token).get('/v1/admin/audit-events?action=organization.');
    assert.deepEqual(instance.body.events, []);
  });

  test("an administrator is no member: an organization's audit log, connections, keys and members stay closed", async () => {
    for (const path of ['audit-events', 'api-keys', 'members', 'teams', 'invitations']) {
      const answer = await t.as(t.operator.token).get(`/v1/orgs/${t.tenant.orgId}/${path}`);
      assert.equal(answer.status, 404, `${path}: ${answer.text}`);
      assert.equal(answer.body.error, 'organization_not_found');
    }
    // MCP connections are the active organization's, and the administrator has none.
    const connections = await t.as(t.operator.token).get('/v1/mcp-connections');
    assert.equal(connections.status, 403, connections.text);
    // Memories are each person's own: the administrator's search finds none of a member's.
    const written = await t.as(t.tenant.member.token).post('/v1/memory', { content: 'zanzibar quarterly secret plan' });
    assert.equal(written.status, 201, written.text);
    const search = await t.as(t.operator.token).get('/v1/memory/search?q=zanzibar');
    assert.equal(search.text.includes('zanzibar'), false, search.text);
    const listed = await t.as(t.operator.token).get('/v1/memory');
    assert.equal(listed.text.includes('zanzibar'), false, listed.text);
    for (const path of ['/v1/admin/people', '/v1/admin/organizations', '/v1/admin/overview']) {
      const answer = await t
        .as(t.operator.token)
        .get(`${path}?search=zanzibar`.replace('/overview?search=zanzibar', '/overview'));
      assert.equal(answer.text.includes('zanzibar'), false, path);
    }
  });

  test('the lists give no secret: no password hash, token or key in any answer', async () => {
    const { rows } = await t.app.db.query<{ password_hash: string }>(
      '/* test */ SELECT password_hash FROM users WHERE password_hash IS NOT NULL LIMIT 1',
    );
    for (const path of [
      '/v1/admin/people',
      '/v1/admin/organizations',
      '/v1/admin/admins',
      '/v1/admin/overview',
      '/v1/admin/audit-events',
    ]) {
      const answer = await t.as(t.operator.token).get(path);
      assert.equal(answer.status, 200, answer.text);
      for (const secret of [rows[0]!.password_hash, apiKey, t.tenant.owner.token, t.tenant.owner.password])
        assert.equal(answer.text.includes(secret), false, `${path} shows a secret`);
    }
  });
});
