// POST /v1/scim/token: sso_required, organization_not_found, invalid_request, no connector yet.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { api } from '../support/http.ts';
import { setPlanAsOperator } from '../support/identity.ts';
import { signUp } from '../support/fixtures.ts';
import { startScimEnv, verifySso, type ScimEnv } from './helpers.ts';

let env: ScimEnv;
before(async () => {
  env = await startScimEnv();
});
after(async () => {
  await env.close();
});

test('no SSO connection, or an unverified one: 409 sso_required with a message, and no connector', async () => {
  const none = await api(env.app.url, env.tenant.owner.token).post('/v1/scim/token');
  assert.equal(none.status, 409);
  assert.equal(none.body.error, 'sso_required');
  assert.match(none.body.message, /verif/);
  await setPlanAsOperator(env.app, env.tenant.orgId, 'enterprise');
  await api(env.app.url, env.tenant.owner.token).put('/v1/sso/connection', {
    domain: 'acme.example',
    issuer: 'https://idp.example.test',
    clientId: 'c',
  });
  const unverified = await api(env.app.url, env.tenant.owner.token).post('/v1/scim/token');
  assert.equal(unverified.status, 409);
  assert.equal(unverified.body.error, 'sso_required');
  const { rows } = await env.app.db.query('SELECT count(*)::int AS n FROM scim_connectors');
  assert.equal(rows[0].n, 0);
  const view = await api(env.app.url, env.tenant.owner.token).get('/v1/scim/connection');
  assert.equal(view.status, 404);
  assert.equal(view.body.error, 'scim_connection_not_found');
});

test('no active organization: 404 organization_not_found and no other field', async () => {
  const loner = await signUp(env.app.url, 'loner');
  for (const response of [
    await api(env.app.url, loner.token).post('/v1/scim/token'),
    await api(env.app.url, loner.token).get('/v1/scim/connection'),
  ]) {
    assert.equal(response.status, 404);
    assert.deepEqual(response.body, { error: 'organization_not_found' });
  }
});

test('a body that is not JSON is 400 invalid_request', async () => {
  const response = await api(env.app.url, env.tenant.owner.token).post('/v1/scim/token', undefined, {
    raw: '{oops',
    headers: { 'content-type': 'application/json' },
  });
  assert.equal(response.status, 400);
  assert.equal(response.body.error, 'invalid_request');
});

test('once the domain is verified the token is issued; changing the SSO domain makes it sso_required again', async () => {
  await verifySso(env.app, env.dns, env.tenant.orgId, env.tenant.owner.token, 'acme.example');
  assert.equal((await api(env.app.url, env.tenant.owner.token).post('/v1/scim/token')).status, 200);
  await api(env.app.url, env.tenant.owner.token).put('/v1/sso/connection', {
    domain: 'other.example',
    issuer: 'https://idp.example.test',
    clientId: 'c',
  });
  const again = await api(env.app.url, env.tenant.owner.token).post('/v1/scim/token');
  assert.equal(again.status, 409);
  assert.equal(again.body.error, 'sso_required');
  assert.equal((await api(env.app.url, env.tenant.owner.token).get('/v1/scim/connection')).body.ssoReady, false);
});
