import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { api } from '../support/http.ts';
import { useTenantApp } from '../support/harness.ts';
import { ageSession, reauthBody } from './reauth-support.ts';

describe('step-up re-authentication: security', () => {
  const t = useTenantApp();

  it('re-authenticating needs a session: anonymous, a made-up token and an API key get 401', async () => {
    const { owner, orgId } = t.tenant;
    const key = (await t.as(owner.token).post(`/v1/orgs/${orgId}/api-keys`, { name: 'k', role: 'admin' })).body
      .key as string;
    for (const headers of [
      {},
      { authorization: 'Bearer ops_made-up-token-0123456789' },
      { 'x-api-key': key },
    ] as Record<string, string>[]) {
      const response = await api(t.app.url).post('/v1/auth/reauthenticate', { password: owner.password }, { headers });
      assert.equal(response.status, 401, JSON.stringify(headers));
    }
  });

  it('an API key never does a privileged operation, even one of the admin role', async () => {
    const { owner, orgId } = t.tenant;
    const key = (await t.as(owner.token).post(`/v1/orgs/${orgId}/api-keys`, { name: 'admin key', role: 'admin' })).body
      .key as string;
    const asKey = { headers: { 'x-api-key': key } };
    assert.equal(
      (await api(t.app.url).post(`/v1/orgs/${orgId}/api-keys`, { name: 'k2', role: 'member' }, asKey)).status,
      401,
    );
    assert.equal(
      (await api(t.app.url).post(`/v1/orgs/${orgId}/transfer-ownership`, { memberId: t.tenant.admin.memberId }, asKey))
        .status,
      401,
    );
  });

  it("re-authenticating refreshes only the session that did it, not the person's other sessions", async () => {
    const { admin, orgId } = t.tenant;
    const other = (await api(t.app.url).post('/v1/auth/sign-in', { email: admin.email, password: admin.password })).body
      .sessionToken as string;
    await ageSession(t.app, admin.token);
    await ageSession(t.app, other);
    assert.equal((await t.as(admin.token).post('/v1/auth/reauthenticate', { password: admin.password })).status, 200);
    const refused = await t.as(other).post(`/v1/orgs/${orgId}/api-keys`, { name: 'x', role: 'member' });
    assert.equal(refused.status, 403);
    assert.deepEqual({ error: refused.body.error, reason: refused.body.reason }, reauthBody);
  });

  it('the role is judged first: a member asking to rotate install links with an old session is told it is not allowed, not to re-authenticate', async () => {
    const { member, orgId } = t.tenant;
    await ageSession(t.app, member.token);
    const rotated = await t.as(member.token).post(`/v1/orgs/${orgId}/install-links`, { rotate: true });
    assert.equal(rotated.status, 403);
    assert.equal(rotated.body.error, 'forbidden');
    const mcpEdit = await t.as(member.token).put('/v1/mcp-connections/mcp_00000000000000000000000000', { name: 'x' });
    assert.equal(mcpEdit.status, 403);
    assert.equal(mcpEdit.body.error, 'forbidden');
  });

  it("another organization's admin with an old session learns nothing of this organization", async () => {
    const { otherAdmin, orgId } = t.tenant;
    await ageSession(t.app, otherAdmin.token);
    const response = await t.as(otherAdmin.token).post(`/v1/orgs/${orgId}/install-links`, { rotate: true });
    assert.equal(response.status, 404);
    assert.equal(response.body.error, 'organization_not_found');
  });
});
