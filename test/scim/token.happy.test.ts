// POST /v1/scim/token and GET /v1/scim/connection.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { api } from '../support/http.ts';
import { scim, startScimEnv, type ScimEnv } from './helpers.ts';

let env: ScimEnv;
before(async () => {
  env = await startScimEnv({ domain: 'acme.example' });
});
after(async () => {
  await env.close();
});

const iso = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

test('the first call creates the connector and returns the spec shape exactly', async () => {
  const response = await api(env.app.url, env.tenant.owner.token).post('/v1/scim/token');
  assert.equal(response.status, 200, response.text);
  const body = response.body;
  assert.deepEqual(Object.keys(body).sort(), ['baseUrl', 'connection', 'health', 'scimToken', 'ssoReady']);
  assert.equal(body.baseUrl, `${env.app.config.publicUrl}/scim/v2`);
  assert.equal(body.ssoReady, true);
  assert.deepEqual(Object.keys(body.connection).sort(), [
    'createdAt',
    'groupMappingMode',
    'id',
    'organizationId',
    'providerId',
    'updatedAt',
  ]);
  assert.match(body.connection.id, /^scim_[0-9a-z]{26}$/);
  assert.equal(body.connection.organizationId, env.tenant.orgId);
  assert.equal(body.connection.groupMappingMode, 'metadata_only');
  const sso = await api(env.app.url, env.tenant.owner.token).get('/v1/sso/connection');
  assert.equal(body.connection.providerId, sso.body.connection.id);
  assert.match(body.connection.createdAt, iso);
  assert.match(body.connection.updatedAt, iso);
  assert.match(body.scimToken, new RegExp(`^opscim_${env.tenant.orgId}\\.[A-Za-z0-9_-]{43}$`));
  // nothing has happened yet: only the count, no invented timestamps
  assert.deepEqual(body.health, { unresolvedFailureCount: 0 });
  // the token works against the SCIM server
  assert.equal((await scim(env.app, body.scimToken).get('/ServiceProviderConfig')).status, 200);
});

test('rotation: the new token works at once and the old one stops at once; only a hash is stored', async () => {
  const first = await api(env.app.url, env.tenant.admin.token).post('/v1/scim/token');
  const second = await api(env.app.url, env.tenant.owner.token).post('/v1/scim/token');
  assert.equal(first.status, 200);
  assert.equal(second.status, 200);
  assert.equal(first.body.connection.id, second.body.connection.id, 'the connector is kept');
  assert.notEqual(first.body.scimToken, second.body.scimToken);
  const old = await scim(env.app, first.body.scimToken).get('/Users');
  assert.equal(old.status, 401);
  assert.equal(old.body.status, '401');
  assert.equal((await scim(env.app, second.body.scimToken).get('/Users')).status, 200);
  const { rows } = await env.app.db.query('SELECT * FROM scim_connectors WHERE organization_id = $1', [
    env.tenant.orgId,
  ]);
  assert.equal(rows.length, 1);
  assert.equal(rows[0].token_hash, createHash('sha256').update(second.body.scimToken).digest('hex'));
  assert.ok(!JSON.stringify(rows).includes(second.body.scimToken.slice(7)));
});

test('GET /v1/scim/connection shows the connector and health without a token', async () => {
  const response = await api(env.app.url, env.tenant.admin.token).get('/v1/scim/connection');
  assert.equal(response.status, 200, response.text);
  assert.deepEqual(Object.keys(response.body).sort(), ['baseUrl', 'connection', 'health', 'ssoReady']);
  assert.equal(response.body.connection.organizationId, env.tenant.orgId);
  assert.equal(response.body.ssoReady, true);
});
