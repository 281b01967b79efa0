// Every documented error of instance administration, as a clear 4xx in the error shape, never a 500.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { useAdminApp } from './support.ts';

describe('instance administration: errors', () => {
  const t = useAdminApp();
  const asOperator = () => t.as(t.operator.token);
  const expect = async (
    response: Promise<{ status: number; body: any; text: string }>,
    status: number,
    error: string,
  ) => {
    const answer = await response;
    assert.equal(answer.status, status, answer.text);
    assert.equal(answer.body.error, error, answer.text);
    return answer.body;
  };

  test('bad list queries are 400 invalid_request naming the parameter', async () => {
    for (const path of ['/v1/admin/people', '/v1/admin/organizations']) {
      for (const query of [
        'limit=0',
        'limit=101',
        'limit=1e1',
        'cursor=not-ours',
        `search=${'x'.repeat(201)}`,
        'search=%20',
      ]) {
        const body = await expect(asOperator().get(`${path}?${query}`), 400, 'invalid_request');
        assert.ok(body.details.length > 0, `${path}?${query}`);
      }
    }
    for (const query of [
      'limit=201',
      'cursor=eyJiZWZvcmUiOi0xfQ',
      'since=2026-02-01T00:00:00Z&until=2026-01-01T00:00:00Z',
      'action=Bad!',
    ]) {
      await expect(asOperator().get(`/v1/admin/audit-events?${query}`), 400, 'invalid_request');
    }
    await expect(asOperator().get('/v1/admin/audit-events/export?format=xml'), 400, 'invalid_request');
    await expect(
      asOperator().get('/v1/admin/audit-events/export?since=2026-02-01T00:00:00Z&until=2026-01-01T00:00:00Z'),
      400,
      'invalid_request',
    );
  });

  test('plan changes: an unknown plan, an unknown field, a malformed id are 400; an unknown organization 404', async () => {
    const path = `/v1/admin/organizations/${t.tenant.orgId}`;
    await expect(asOperator().patch(path, { plan: 'platinum' }), 400, 'invalid_request');
    await expect(asOperator().patch(path, { plan: 'team', members: 5 }), 400, 'invalid_request');
    await expect(asOperator().patch(path, []), 400, 'invalid_request');
    await expect(asOperator().patch('/v1/admin/organizations/not-an-id', { plan: 'team' }), 400, 'invalid_request');
    await expect(
      asOperator().patch('/v1/admin/organizations/org_00000000000000000000000000', { plan: 'team' }),
      404,
      'organization_not_found',
    );
    const { rows } = await t.app.db.query('/* test */ SELECT plan FROM organizations WHERE id = $1', [t.tenant.orgId]);
    assert.equal(rows[0].plan, 'free');
  });

  test('administrators: a bad e-mail 400, an unknown one 404 person_not_found, not an administrator 404, the last one 409', async () => {
    await expect(asOperator().post('/v1/admin/admins', { email: 'nope' }), 400, 'invalid_request');
    await expect(asOperator().post('/v1/admin/admins', {}), 400, 'invalid_request');
    await expect(asOperator().post('/v1/admin/admins', { email: 'nobody@example.test' }), 404, 'person_not_found');
    await expect(asOperator().delete('/v1/admin/admins/usr_bad'), 400, 'invalid_request');
    await expect(asOperator().delete(`/v1/admin/admins/${t.tenant.owner.userId}`), 404, 'admin_not_found');
    await expect(asOperator().delete('/v1/admin/admins/usr_00000000000000000000000000'), 404, 'admin_not_found');
    const last = await expect(asOperator().delete(`/v1/admin/admins/${t.operator.userId}`), 409, 'last_admin');
    assert.match(last.message, /last instance administrator/);
    const { rows } = await t.app.db.query('/* test */ SELECT is_instance_admin FROM users WHERE id = $1', [
      t.operator.userId,
    ]);
    assert.equal(rows[0].is_instance_admin, true);
  });
});
