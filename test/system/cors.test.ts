// CORS over real HTTP: which paths answer a listed origin, what a preflight says, and that an unlisted
// origin, the webhook ingress, SCIM and the pages for people get no CORS header. The browser's own
// judgement of these answers is in cors-browser.test.ts.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { createTenant, type Tenant } from '../support/fixtures.ts';
import { api } from '../support/http.ts';

const listed = 'http://app.example.test:5173';
const unlisted = 'http://evil.example.test';

let app: TestApp;
let plain: TestApp;
let tenant: Tenant;
before(async () => {
  [app, plain] = await Promise.all([
    startTestApp({ corsAllowedOrigins: [listed, 'https://other.example.test'] }),
    startTestApp(),
  ]);
  tenant = await createTenant(app.url);
});
after(async () => {
  await Promise.all([app?.close(), plain?.close()]);
});

const preflight = (
  base: string,
  path: string,
  origin: string,
  method = 'PUT',
  headers = 'authorization, content-type',
) =>
  fetch(new URL(path, base), {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': headers },
  });

const list = (value: string | null) =>
  (value ?? '')
    .split(',')
    .map((item) => item.trim().toLowerCase())
    .filter(Boolean);

test('CORS_ALLOWED_ORIGINS: origins are normalized as browsers send them; anything else names the variable', () => {
  assert.deepEqual(loadConfig({}).corsAllowedOrigins, []);
  assert.deepEqual(
    loadConfig({
      CORS_ALLOWED_ORIGINS: ' HTTPS://App.Example.com:443/ , http://localhost:5173,https://app.example.com',
    }).corsAllowedOrigins,
    ['https://app.example.com', 'http://localhost:5173'],
  );
  for (const bad of [
    '*',
    'null',
    'app.example.com',
    'https://app.example.com/path',
    'https://app.example.com?x',
    'ftp://app.example.com',
    'https://user@app.example.com',
  ]) {
    assert.throws(
      () => loadConfig({ CORS_ALLOWED_ORIGINS: bad }),
      (error: Error) => error instanceof ConfigError && /CORS_ALLOWED_ORIGINS/.test(error.message),
      bad,
    );
  }
});

test('a preflight from a listed origin is answered 204 with what the API takes, and no credentials', async () => {
  const response = await preflight(app.url, `/v1/mcp-connections/${'mcp_x'}`, listed);
  assert.equal(response.status, 204);
  assert.equal(response.headers.get('access-control-allow-origin'), listed);
  assert.ok(list(response.headers.get('access-control-allow-methods')).includes('put'));
  for (const method of ['get', 'post', 'patch', 'delete'])
    assert.ok(list(response.headers.get('access-control-allow-methods')).includes(method), method);
  for (const header of ['authorization', 'content-type', 'x-api-key'])
    assert.ok(list(response.headers.get('access-control-allow-headers')).includes(header), header);
  assert.equal(response.headers.get('access-control-max-age'), '600');
  assert.equal(response.headers.get('access-control-allow-credentials'), null);
  assert.ok(list(response.headers.get('vary')).includes('origin'));
  assert.equal(await response.text(), '');
});

test("a listed origin's requests carry its origin on success and on errors, with the readable headers named", async () => {
  const me = await api(app.url, tenant.member.token).get('/v1/me', { headers: { origin: listed } });
  assert.equal(me.status, 200);
  assert.equal(me.headers.get('access-control-allow-origin'), listed);
  assert.equal(me.headers.get('access-control-allow-credentials'), null);
  assert.ok(list(me.headers.get('access-control-expose-headers')).includes('x-request-id'));
  assert.ok(list(me.headers.get('access-control-expose-headers')).includes('retry-after'));
  assert.ok(list(me.headers.get('vary')).includes('origin'));
  const anonymous = await api(app.url).get('/v1/me', { headers: { origin: listed } });
  assert.equal(anonymous.status, 401);
  assert.equal(anonymous.headers.get('access-control-allow-origin'), listed);
  const invalid = await api(app.url).post(
    '/v1/auth/sign-in',
    { email: 'nope' },
    { headers: { origin: 'https://other.example.test' } },
  );
  assert.equal(invalid.status, 400);
  assert.equal(invalid.headers.get('access-control-allow-origin'), 'https://other.example.test');
  for (const path of ['/health', '/ready', '/openapi.json']) {
    const system = await api(app.url).get(path, { headers: { origin: listed } });
    assert.equal(system.status, 200, path);
    assert.equal(system.headers.get('access-control-allow-origin'), listed, path);
  }
});

test('an unlisted origin, or "null", gets no CORS header: its preflight is the 404 it always was', async () => {
  for (const origin of [unlisted, 'null', `${listed}/`, 'http://app.example.test:5174']) {
    const response = await preflight(app.url, '/v1/me', origin, 'GET', 'authorization');
    assert.equal(response.status, 404, origin);
    assert.equal(response.headers.get('access-control-allow-origin'), null, origin);
    assert.equal(response.headers.get('access-control-allow-methods'), null, origin);
    const get = await api(app.url, tenant.member.token).get('/v1/me', { headers: { origin } });
    assert.equal(get.status, 200);
    assert.equal(get.headers.get('access-control-allow-origin'), null, origin);
    // still marked as depending on Origin, so a shared cache does not hand it to a listed origin
    assert.ok(list(get.headers.get('vary')).includes('origin'));
  }
});

test('the webhook ingress, SCIM, the docs, metrics and the install page never answer cross-origin', async () => {
  const paths = [
    '/v1/webhooks/messenger/mcn_x',
    '/scim/v2/Users',
    '/scim/v2/ServiceProviderConfig',
    '/docs',
    '/docs/',
    '/metrics',
    `/install/opl_${'x'.repeat(43)}`,
    '/oauth/client-metadata.json',
  ];
  for (const path of paths) {
    const flight = await preflight(app.url, path, listed, 'POST', 'content-type');
    assert.equal(flight.headers.get('access-control-allow-origin'), null, path);
    assert.notEqual(flight.status, 204, path);
    const get = await fetch(new URL(path, app.url), { headers: { origin: listed } });
    assert.equal(get.headers.get('access-control-allow-origin'), null, path);
  }
  const webhook = await api(app.url).post(
    '/v1/webhooks/messenger/mcn_x',
    { update_id: 1 },
    { headers: { origin: listed } },
  );
  assert.equal(webhook.headers.get('access-control-allow-origin'), null);
});

test('with no origin configured (the default) nothing is cross-origin, as before', async () => {
  const flight = await preflight(plain.url, '/v1/me', listed, 'GET', 'authorization');
  assert.equal(flight.status, 404);
  assert.equal(flight.headers.get('access-control-allow-origin'), null);
  const health = await api(plain.url).get('/health', { headers: { origin: listed } });
  assert.equal(health.headers.get('access-control-allow-origin'), null);
  assert.equal(health.headers.get('vary'), null);
});
