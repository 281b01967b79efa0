import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import { addMember, signUp } from '../support/fixtures.ts';
import { useTenantApp } from '../support/harness.ts';
import { api } from '../support/http.ts';
import { ageSession, reauthBody } from './reauth-support.ts';

describe('step-up re-authentication: happy paths', () => {
  const t = useTenantApp();

  it('a session records when and how its person authenticated; GET /v1/me shows it', async () => {
    const before = Date.now() - 1000;
    const user = await signUp(t.app.url, 'recorded');
    const signedIn = await api(t.app.url).post('/v1/auth/sign-in', { email: user.email, password: user.password });
    assert.equal(signedIn.status, 200);
    for (const token of [user.token, signedIn.body.sessionToken]) {
      const me = await t.as(token).get('/v1/me');
      assert.equal(me.status, 200, me.text);
      assert.equal(me.body.session.authMethod, 'password');
      const at = Date.parse(me.body.session.authenticatedAt);
      assert.ok(at >= before && at <= Date.now() + 1000, me.body.session.authenticatedAt);
    }
  });

  it('an old session gets 403 reauth on a privileged operation and nothing is done; after re-authenticating with the password it goes through', async () => {
    const { owner, orgId } = t.tenant;
    const user = await signUp(t.app.url, 'stepup');
    await addMember(t.app.url, owner, orgId, user, 'admin');
    await ageSession(t.app, user.token);
    const listBefore = await t.as(owner.token).get(`/v1/orgs/${orgId}/api-keys`);
    const refused = await t.as(user.token).post(`/v1/orgs/${orgId}/api-keys`, { name: 'ci', role: 'member' });
    assert.equal(refused.status, 403, refused.text);
    assert.deepEqual({ error: refused.body.error, reason: refused.body.reason }, reauthBody);
    assert.match(refused.body.message, /reauthenticate/);
    const listAfter = await t.as(owner.token).get(`/v1/orgs/${orgId}/api-keys`);
    assert.deepEqual(listAfter.body, listBefore.body, 'no key was created');

    const oldMe = await t.as(user.token).get('/v1/me');
    const reauth = await t.as(user.token).post('/v1/auth/reauthenticate', { password: user.password });
    assert.equal(reauth.status, 200, reauth.text);
    assert.ok(Date.parse(reauth.body.authenticatedAt) > Date.parse(oldMe.body.session.authenticatedAt));
    const me = await t.as(user.token).get('/v1/me');
    assert.equal(me.body.session.authenticatedAt, reauth.body.authenticatedAt);
    assert.equal(me.body.session.authMethod, 'password');

    const created = await t.as(user.token).post(`/v1/orgs/${orgId}/api-keys`, { name: 'ci', role: 'member' });
    assert.equal(created.status, 201, created.text);
  });

  it('an old session still does what is not privileged (reads, minting an install link without rotation)', async () => {
    const { owner, orgId } = t.tenant;
    const user = await signUp(t.app.url, 'reader');
    await addMember(t.app.url, owner, orgId, user, 'admin');
    await ageSession(t.app, user.token);
    assert.equal((await t.as(user.token).get(`/v1/orgs/${orgId}/members`)).status, 200);
    const minted = await t.as(user.token).post(`/v1/orgs/${orgId}/install-links`, {});
    assert.equal(minted.status, 201, minted.text);
    const rotated = await t.as(user.token).post(`/v1/orgs/${orgId}/install-links`, { rotate: true });
    assert.equal(rotated.status, 403, rotated.text);
    assert.equal(rotated.body.error, 'reauth');
    const config = await t.as().get(`/v1/install-links/${minted.body.token}`);
    assert.equal(config.status, 200, 'the refused rotation revoked nothing');
  });

  it('role changes and ownership transfer need a recent authentication', async () => {
    const { owner, orgId } = t.tenant;
    const target = await signUp(t.app.url, 'target');
    await addMember(t.app.url, owner, orgId, target, 'member');
    const ownerSession = (
      await api(t.app.url).post('/v1/auth/sign-in', { email: owner.email, password: owner.password })
    ).body.sessionToken as string;
    await ageSession(t.app, ownerSession);
    const role = await t.as(ownerSession).patch(`/v1/orgs/${orgId}/members/${target.memberId}`, { role: 'admin' });
    assert.equal(role.status, 403, role.text);
    assert.equal(role.body.error, 'reauth');
    const transfer = await t
      .as(ownerSession)
      .post(`/v1/orgs/${orgId}/transfer-ownership`, { memberId: target.memberId });
    assert.equal(transfer.status, 403, transfer.text);
    assert.equal(transfer.body.error, 'reauth');
    const members = await t.as(owner.token).get(`/v1/orgs/${orgId}/members?limit=100`);
    const row = members.body.members.find((member: { id: string }) => member.id === target.memberId);
    assert.equal(row.role, 'member', 'the role did not change');
    assert.equal(members.body.members.find((member: { id: string }) => member.id === owner.memberId).role, 'owner');
  });

  it('the OpenAPI marks every privileged operation and says what an old session gets', async () => {
    const document = (await t.as().get('/openapi.json')).body;
    const marked: string[] = [];
    for (const item of Object.values<Record<string, any>>(document.paths)) {
      for (const operation of Object.values<any>(item)) {
        if (operation?.['x-requires-fresh-authentication']) {
          marked.push(operation.operationId);
          assert.match(operation.description, /REAUTH_MAX_AGE_SECONDS/);
          assert.match(operation.description, /API keys are never accepted/);
        }
      }
    }
    // Why each write is privileged or not: test/system/fresh-authentication.test.ts.
    assert.deepEqual(
      marked.sort(),
      [
        'addTeamMember',
        'authorizeDesktopSignIn',
        'authorizeMcpConnection',
        'changeMemberRole',
        'createApiKey',
        'createInstallLink',
        'createInvitation',
        'createMcpConnection',
        'createMessengerConnection',
        'deleteAuditStream',
        'deleteMcpConnection',
        'deleteMessengerConnection',
        'disconnectMcpConnection',
        'editMcpConnection',
        'installPlugin',
        'putAuditStream',
        'putSsoConnection',
        'removeMember',
        'removeTeamMember',
        'renameOrganization',
        'replaceMcpConnectionAccess',
        'resendInvitation',
        'revokeApiKey',
        'revokeInvitation',
        'rotateScimToken',
        'setMcpConnectionApiKey',
        'setMcpConnectionToolPolicy',
        'setOrganizationPlan',
        'transferOwnership',
        'uninstallPlugin',
        'updateMessengerConnection',
        'verifySsoDomain',
        'deleteOrganization',
        'createRole',
        'updateRole',
        'deleteRole',
        'updateTeam',
        // Every instance-administration route, reads included.
        'addInstanceAdmin',
        'exportInstanceAuditEvents',
        'getInstanceOverview',
        'listInstanceAdmins',
        'listInstanceAuditEvents',
        'listInstanceOrganizations',
        'listInstancePeople',
        'removeInstanceAdmin',
        'updateInstanceOrganization',
        'verifyInstanceAuditEvents',
      ].sort(),
    );
  });

  it('REAUTH_MAX_AGE_SECONDS is a whole number from 0 to 86400, 900 by default', () => {
    assert.equal(loadConfig({}).reauthMaxAgeSeconds, 900);
    assert.equal(loadConfig({ REAUTH_MAX_AGE_SECONDS: '0' }).reauthMaxAgeSeconds, 0);
    for (const bad of ['-1', '86401', '1.5', 'abc'])
      assert.throws(() => loadConfig({ REAUTH_MAX_AGE_SECONDS: bad }), /REAUTH_MAX_AGE_SECONDS/);
  });
});

describe('step-up re-authentication: REAUTH_MAX_AGE_SECONDS=0 turns the rule off', () => {
  const t = useTenantApp({ config: { reauthMaxAgeSeconds: 0 } });

  it('an old session does privileged operations', async () => {
    await ageSession(t.app, t.tenant.owner.token, 86_400 * 10);
    const created = await t
      .as(t.tenant.owner.token)
      .post(`/v1/orgs/${t.tenant.orgId}/api-keys`, { name: 'old', role: 'member' });
    assert.equal(created.status, 201, created.text);
  });
});
