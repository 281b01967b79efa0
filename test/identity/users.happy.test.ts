import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startTestApp } from '../support/app.ts';
import { signUp } from '../support/fixtures.ts';
import { api } from '../support/http.ts';
import { useTenantApp } from '../support/harness.ts';
import { checkTenantRouting } from '../db/tenant-routing.ts';

describe('users and sessions: happy paths', () => {
  const harness = useTenantApp();
  const tenantRouting = checkTenantRouting();

  it('bootstrap creates an instance administrator owning the first organization, once', async () => {
    const fresh = await startTestApp();
    try {
      const body = {
        email: 'root@example.test',
        password: 'correct horse battery',
        name: 'Root',
        organizationName: 'First',
      };
      const first = await api(fresh.url).post('/v1/bootstrap', body);
      assert.equal(first.status, 201, first.text);
      assert.equal(first.body.user.isInstanceAdmin, true);
      assert.equal(first.body.organization.name, 'First');
      assert.match(first.body.sessionToken, /^ops_/);
      const org = await api(fresh.url, first.body.sessionToken).get('/v1/org');
      assert.equal(org.body.currentMember.role, 'owner');
      const again = await api(fresh.url).post('/v1/bootstrap', { ...body, email: 'other@example.test' });
      assert.equal(again.status, 409);
      assert.equal(again.body.error, 'already_bootstrapped');
    } finally {
      await fresh.close();
    }
  });

  it('sign-in returns a new working session; sign-out revokes only that session', async () => {
    const user = await signUp(harness.app.url, 'signin');
    const signedIn = await harness
      .as()
      .post('/v1/auth/sign-in', { email: user.email.toUpperCase(), password: user.password });
    assert.equal(signedIn.status, 200, signedIn.text);
    assert.equal(signedIn.body.user.id, user.userId);
    const second = signedIn.body.sessionToken;
    assert.notEqual(second, user.token);
    assert.equal((await harness.as(second).get('/v1/me')).status, 200);
    assert.equal((await harness.as(second).post('/v1/auth/sign-out')).status, 204);
    assert.equal((await harness.as(second).get('/v1/me')).status, 401);
    assert.equal((await harness.as(user.token).get('/v1/me')).status, 200);
  });

  it("GET /v1/me lists the user's organizations with roles", async () => {
    const me = await harness.as(harness.tenant.admin.token).get('/v1/me');
    assert.equal(me.status, 200);
    assert.equal(me.body.user.email, harness.tenant.admin.email);
    assert.equal(me.body.activeOrganizationId, harness.tenant.orgId);
    const acme = me.body.organizations.find((o: { id: string }) => o.id === harness.tenant.orgId);
    assert.equal(acme.role, 'admin');
    assert.equal(acme.memberId, harness.tenant.admin.memberId);
  });

  // These flows' statements stay on one tenant (test/db/tenant-routing.ts): on a database distributed
  // by tenant, each runs on one node.
  it('their statements stay on one tenant', async () => {
    await tenantRouting.assertStatementsStayOnOneTenant(harness.app.db, 10);
  });
});
