// Bearer secrets name their tenant: `<prefix><tenant id>.<secret>`, so a lookup by
// hash reads one tenant's rows (one shard on Citus). Tokens issued before they did keep working
// (test/db/upgrade-0800.test.ts uses the previous release's); a token edited to name another tenant
// matches nothing, since the hash covers the whole token.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { useTenantApp } from '../support/harness.ts';

const otherTenant = (token: string, tenant: string, other: string) => token.replace(`${tenant}.`, `${other}.`);

describe('tokens that name their tenant', () => {
  const t = useTenantApp();

  it('a session token names its user, and works only as issued', async () => {
    const { owner, member } = t.tenant;
    assert.match(owner.token, new RegExp(`^ops_${owner.userId}\\.[A-Za-z0-9_-]{43}$`));
    assert.equal((await t.as(owner.token).get('/v1/org')).status, 200);
    assert.equal((await t.as(otherTenant(owner.token, owner.userId, member.userId)).get('/v1/org')).status, 401);
  });

  it('an API key names its organization, and works only as issued', async () => {
    const { owner, orgId, otherOrgId } = t.tenant;
    const created = await t.as(owner.token).post(`/v1/orgs/${orgId}/api-keys`, { name: 'tenant', role: 'member' });
    assert.equal(created.status, 201, created.text);
    const key = created.body.key as string;
    assert.match(key, new RegExp(`^opk_${orgId}\\.[A-Za-z0-9_-]{43}$`));
    const members = (apiKey: string) => t.as().get(`/v1/orgs/${orgId}/members`, { headers: { 'x-api-key': apiKey } });
    assert.equal((await members(key)).status, 200);
    assert.equal((await members(otherTenant(key, orgId, otherOrgId))).status, 401);
  });

  it('an install link names its organization, and resolves only as issued', async () => {
    const { owner, orgId, otherOrgId } = t.tenant;
    const created = await t.as(owner.token).post(`/v1/orgs/${orgId}/install-links`, {});
    assert.equal(created.status, 201, created.text);
    const token = created.body.token as string;
    assert.match(token, new RegExp(`^opl_${orgId}\\.[A-Za-z0-9_-]{43}$`));
    assert.equal((await t.as().get(`/v1/install-links/${token}`)).status, 200);
    assert.equal((await t.as().get(`/v1/install-links/${otherTenant(token, orgId, otherOrgId)}`)).status, 404);
  });

  it('an invitation names its organization, and is accepted only as issued', async () => {
    const { owner, orgId, otherOrgId, outsider } = t.tenant;
    const invited = await t
      .as(owner.token)
      .post(`/v1/orgs/${orgId}/invitations`, { email: outsider.email, role: 'member' });
    assert.equal(invited.status, 201, invited.text);
    const token = invited.body.token as string;
    assert.match(token, new RegExp(`^opi_${orgId}\\.[A-Za-z0-9_-]{43}$`));
    assert.equal(
      (await t.as(outsider.token).post(`/v1/invitations/${otherTenant(token, orgId, otherOrgId)}/accept`)).status,
      404,
    );
    const accepted = await t.as(outsider.token).post(`/v1/invitations/${token}/accept`);
    assert.equal(accepted.status, 200, accepted.text);
    const org = await t.as(outsider.token).get('/v1/org');
    assert.equal(org.body.organization.id, orgId, org.text);
  });
});
