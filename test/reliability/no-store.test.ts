// No cache keeps a secret: every operation whose response schema has a field marked secret
// (`secretString`, the OpenAPI's `x-secret`) answers `Cache-Control: no-store` and `Pragma: no-cache`
// (src/http/no-store.ts). The served OpenAPI is walked for those fields, the operations found must be
// exactly the ones listed here (a secret field that lost its marker, or a new one, fails until the list
// says so), and each is performed for real, successfully, and its answer's headers checked.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestApp, type TestApp } from '../support/app.ts';
import { api, type ApiResponse } from '../support/http.ts';
import { startTestIdp, type TestIdp } from '../support/oidc-idp.ts';
import { fillPath, loadOpenApi, type JsonSchema, type OpenApi } from './openapi.ts';
import { prepareRequest, realDesktopCode, realSsoCode } from './requests.ts';
import { startWorld, type World } from './world.ts';

/** Each operation whose successful response carries a secret, and where in its body the secret is. */
const secretOperations: Record<string, string[]> = {
  bootstrap: ['sessionToken'],
  signUp: ['sessionToken'],
  signIn: ['sessionToken'],
  exchangeSsoCode: ['sessionToken'],
  exchangeDesktopSignInCode: ['sessionToken'],
  createApiKey: ['key'],
  rotateScimToken: ['scimToken'],
  createInstallLink: ['token', 'installPageUrl'],
  getInstallLinkConfig: ['installPageUrl'],
  createInvitation: ['token', 'acceptUrl'],
  resendInvitation: ['token', 'acceptUrl'],
  createMessengerConnection: ['deliverySecret'],
  putAuditStream: ['signingSecret'],
  authorizeMcpConnection: ['authorizationUrl'],
};

let world: World;
let openapi: OpenApi;
let idp: TestIdp | undefined;
// An instance nobody has bootstrapped yet: bootstrap succeeds once per instance.
let fresh: TestApp | undefined;
let starting: Promise<World> | undefined;
const hookTimeout = { timeout: 600_000 };

before(async () => {
  starting = startWorld({ logLevel: 'warn' });
  world = await starting;
  openapi = await loadOpenApi(world.app.url);
  idp = await startTestIdp({ redirectUri: `${world.app.config.publicUrl}/v1/auth/sso/oidc/callback` });
  fresh = await startTestApp();
}, hookTimeout);

after(async () => {
  await idp?.close();
  await fresh?.close();
  await (await starting?.catch(() => undefined))?.close();
}, hookTimeout);

/** The names of the properties marked `x-secret` anywhere in a schema ($refs followed). */
function secretFields(schema: JsonSchema | undefined, seen = new Set<unknown>()): string[] {
  if (!schema || typeof schema !== 'object' || seen.has(schema)) return [];
  seen.add(schema);
  if (typeof schema.$ref === 'string') return secretFields(openapi.resolve(schema), seen);
  const found: string[] = [];
  for (const [name, property] of Object.entries<JsonSchema>(schema.properties ?? {})) {
    const marked = (value: JsonSchema): boolean =>
      value?.['x-secret'] === true || (value?.anyOf ?? value?.oneOf ?? []).some(marked);
    if (marked(property)) found.push(name);
  }
  for (const child of Object.values(schema)) {
    if (child && typeof child === 'object') found.push(...secretFields(child as JsonSchema, seen));
  }
  return [...new Set(found)];
}

test('the operations whose responses carry a secret are the listed ones, each marked x-no-store with the headers documented', () => {
  const found: Record<string, string[]> = {};
  for (const operation of openapi.operations) {
    const fields = Object.entries(operation.responses)
      .filter(([status]) => Number(status) < 300)
      .flatMap(([, response]) => secretFields(response.schema));
    if (fields.length) found[operation.operationId] = [...new Set(fields)].sort();
  }
  const expected = Object.fromEntries(Object.entries(secretOperations).map(([id, fields]) => [id, [...fields].sort()]));
  assert.deepEqual(found, expected);

  const marked = openapi.operations
    .filter((operation) => openapi.document.paths[operation.path][operation.method.toLowerCase()]['x-no-store'])
    .map((operation) => operation.operationId);
  assert.deepEqual(marked.sort(), Object.keys(secretOperations).sort(), 'x-no-store marks exactly these');
  for (const id of marked) {
    const operation = openapi.operations.find((candidate) => candidate.operationId === id)!;
    const success = Object.entries<Record<string, any>>(
      openapi.document.paths[operation.path][operation.method.toLowerCase()].responses,
    ).filter(([status]) => Number(status) < 300);
    for (const [status, response] of success) {
      assert.equal(
        response.headers?.['Cache-Control']?.schema?.const,
        'no-store',
        `${id} ${status} documents Cache-Control`,
      );
    }
  }
});

test('each of them, performed for real, answers with Cache-Control: no-store and Pragma: no-cache; so do its refusals; other routes do not', {
  timeout: 600_000,
}, async () => {
  const { tenant, ids } = world;
  const missing: string[] = [];
  const check = (label: string, response: ApiResponse, fields: string[] = []) => {
    const headers = `cache-control: ${response.headers.get('cache-control')}, pragma: ${response.headers.get('pragma')}`;
    if (headers !== 'cache-control: no-store, pragma: no-cache')
      missing.push(`${label} -> ${response.status}: ${headers}`);
    for (const field of fields) {
      if (typeof response.body?.[field] !== 'string' || response.body[field] === '')
        missing.push(`${label} -> ${response.status}: no ${field} in ${response.text.slice(0, 200)}`);
    }
  };

  const booted = await api(fresh!.url).post('/v1/bootstrap', {
    email: 'first@example.test',
    password: 'a-long-password-1',
    name: 'First',
    organizationName: 'First',
  });
  assert.equal(booted.status, 201, booted.text);
  check('bootstrap', booted, secretOperations.bootstrap);

  for (const id of Object.keys(secretOperations).filter((name) => name !== 'bootstrap')) {
    const operation = openapi.operations.find((candidate) => candidate.operationId === id);
    assert.ok(operation, `${id} is served`);
    let prepared = await prepareRequest(world, id, operation.path);
    let token: string | undefined = tenant.owner.token;
    if (id === 'signUp' || id === 'signIn' || id === 'getInstallLinkConfig') token = undefined;
    if (id === 'exchangeSsoCode') prepared = { ...prepared, body: await realSsoCode(world, idp!) };
    if (id === 'exchangeDesktopSignInCode') prepared = { ...prepared, body: await realDesktopCode(world) };
    // The world's connection whose authorization server answers (the prepared one is for refusals).
    if (id === 'authorizeMcpConnection')
      prepared = { ...prepared, path: { ...prepared.path, connectionId: ids.connectedOauthConnectionId } };
    const url = `${fillPath(operation.path, prepared.path)}${prepared.query ? `?${prepared.query}` : ''}`;
    const response = await api(world.app.url, token).send(operation.method, url, prepared.body);
    assert.ok(
      response.status >= 200 && response.status < 300,
      `${id}: ${response.status} ${response.text.slice(0, 300)}`,
    );
    check(id, response, secretOperations[id]);
  }

  // A refusal of such a route has the headers too (set for the route, whatever the answer).
  check(
    'signIn, wrong password',
    await api(world.app.url).post('/v1/auth/sign-in', { email: tenant.member.email, password: 'not-the-password' }),
  );
  check(
    'exchangeDesktopSignInCode, unknown code',
    await api(world.app.url).post('/v1/auth/desktop/token', {
      code: 'never-issued',
      codeVerifier: 'd'.repeat(43),
      redirectUri: 'http://127.0.0.1:9/desktop',
    }),
  );
  check(
    'bootstrap, already done',
    await api(fresh!.url).post('/v1/bootstrap', {
      email: 'second@example.test',
      password: 'a-long-password-1',
      name: 'Second',
      organizationName: 'Second',
    }),
  );
  // HEAD of a GET that carries a secret, as a cache may ask.
  check(
    'getInstallLinkConfig, HEAD',
    await api(world.app.url).send('HEAD', `/v1/install-links/${encodeURIComponent(ids.installLinkToken)}`),
  );
  assert.deepEqual(missing, []);

  // A route whose answer carries no secret keeps the default (the header is the schema's doing, not every route's).
  for (const path of ['/v1/me', `/v1/orgs/${tenant.orgId}/api-keys`]) {
    const response = await api(world.app.url, tenant.owner.token).get(path);
    assert.equal(response.status, 200, `${path}: ${response.text}`);
    assert.equal(response.headers.get('cache-control'), null, path);
  }
});
