// The served OpenAPI document as a reader meets it: every reference resolves and every component is
// used, tags say where operations are, responses say what they are, and where the document states a
// rule (a body that may be left out, the timestamp format) the server keeps it.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { useTenantApp } from '../support/harness.ts';

// In a describe, so that the document is fetched after the harness's before() has started the app:
// at the top level of a file each before() hook starts at once, without waiting for the one before it.
describe('the served OpenAPI document', () => {
  const t = useTenantApp();
  let document: Record<string, any>;

  before(async () => {
    document = (await t.as().get('/openapi.json')).body;
  });

  const methods = ['get', 'put', 'post', 'patch', 'delete'];
  function operations(): { method: string; path: string; operation: Record<string, any> }[] {
    return Object.entries<Record<string, any>>(document.paths).flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([method]) => methods.includes(method))
        .map(([method, operation]) => ({ method, path, operation })),
    );
  }

  function refsIn(value: unknown, into: Set<string>): Set<string> {
    if (Array.isArray(value)) for (const item of value) refsIn(item, into);
    else if (value && typeof value === 'object') {
      for (const [key, child] of Object.entries(value)) {
        if (key === '$ref' && typeof child === 'string') into.add(child);
        else refsIn(child, into);
      }
    }
    return into;
  }

  test('every $ref resolves, and every component schema is reached from an operation', () => {
    const schemas: Record<string, unknown> = document.components.schemas;
    const refs = refsIn(document, new Set());
    for (const ref of refs) {
      assert.match(ref, /^#\/components\/schemas\//);
      assert.ok(ref.slice('#/components/schemas/'.length) in schemas, `${ref} does not resolve`);
    }
    const reached = new Set<string>();
    const pending = [...refsIn(document.paths, new Set())];
    while (pending.length > 0) {
      const name = pending.pop()!.slice('#/components/schemas/'.length);
      if (reached.has(name)) continue;
      reached.add(name);
      pending.push(...refsIn(schemas[name], new Set()));
    }
    assert.deepEqual(
      Object.keys(schemas).filter((name) => !reached.has(name)),
      [],
    );
    // The spec's name for the access a request states.
    assert.ok('AccessInput' in schemas);
  });

  test('tags: every operation is under a declared tag, and every declared tag has an operation', () => {
    const declared: string[] = document.tags.map((tag: { name: string }) => tag.name);
    const used = new Set(operations().flatMap(({ operation }) => operation.tags ?? []));
    for (const tag of used) assert.ok(declared.includes(tag), `tag ${tag} is not declared`);
    assert.deepEqual(
      declared.filter((name) => !used.has(name)),
      [],
      'declared tags without an operation',
    );
  });

  test('every response has a description of its own, and text responses name their media type', () => {
    const placeholders = operations().flatMap(({ method, path, operation }) =>
      Object.entries<Record<string, any>>(operation.responses)
        .filter(([, response]) => response.description === 'Default Response')
        .map(([status]) => `${method} ${path} ${status}`),
    );
    assert.deepEqual(placeholders, []);
    assert.ok(document.paths['/install/{token}'].get.responses['200'].content['text/html']);
    assert.ok(document.paths['/install/{token}'].get.responses['404'].content['text/html']);
    assert.ok(document.paths['/metrics'].get.responses['200'].content['text/plain']);
    assert.ok(document.paths['/scim/v2/Users'].get.responses['200'].content['application/scim+json']);
  });

  test('an install-link request body may be left out, as documented', async () => {
    const operation = document.paths['/v1/orgs/{organizationId}/install-links'].post;
    assert.equal(operation.requestBody.required, false);
    const response = await t.as(t.tenant.member.token).post(`/v1/orgs/${t.tenant.orgId}/install-links`);
    assert.equal(response.status, 201, response.text);
  });

  test('the documented timestamp pattern says what requests are held to: seconds optional, Z only', async () => {
    const pattern = new RegExp(document.components.schemas.McpConnection.properties.updatedAt.pattern);
    assert.equal(
      document.components.schemas.McpConnection.properties.updatedAt.format,
      undefined,
      'not RFC 3339 date-time: seconds are optional, offsets refused',
    );
    for (const [value, valid] of [
      ['2026-01-31T09:30Z', true],
      ['2026-01-31T09:30:00.123Z', true],
      ['2026-01-31T09:30:00+00:00', false],
      ['2026-01-31', false],
    ] as const) {
      assert.equal(pattern.test(value), valid, value);
    }
  });
});
