// Requests the HTTP parser refuses before any route (a header block or request line too large,
// malformed HTTP): 431 / 414 / 400 in the API's error shape, and in SCIM's under /scim/v2, where SCIM
// clients read only that. The path is read from the raw request line.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { useTenantApp } from '../support/harness.ts';
import { rawRequest } from '../support/raw-http.ts';

const statusOf = (raw: string) => Number(/^HTTP\/1\.1 (\d{3}) /.exec(raw)?.[1]);
const headerOf = (raw: string, name: string) => new RegExp(`\\r\\n${name}: ([^\\r]*)`, 'i').exec(raw)?.[1];
const bodyOf = (raw: string) => JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4));
const scimError = (status: number, detail: string) => ({
  schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'],
  status: String(status),
  detail,
});

describe('refused before routing', () => {
  const t = useTenantApp({ tenant: false });
  const send = (head: string) => rawRequest(Number(new URL(t.app.url).port), head, '');
  const bigHeader = `X-Big: ${'a'.repeat(20_000)}\r\n`;
  const longPath = (prefix: string) => `${prefix}${'x'.repeat(20_000)}`;

  it("under /scim/v2: a header block too large is 431 in SCIM's shape", async () => {
    for (const target of ['/scim/v2/Users', '/scim/v2', '/scim/v2?filter=x', 'http://127.0.0.1/scim/v2/Groups/abc']) {
      const raw = await send(`GET ${target} HTTP/1.1\r\nHost: x\r\n${bigHeader}\r\n`);
      assert.equal(statusOf(raw), 431, `${target}: ${raw.slice(0, 200)}`);
      assert.match(headerOf(raw, 'content-type')!, /^application\/scim\+json/);
      assert.deepEqual(bodyOf(raw), scimError(431, 'The request line or headers are too large'), target);
    }
  });

  it("under /scim/v2: a request line too long is 414 in SCIM's shape", async () => {
    const raw = await send(`GET ${longPath('/scim/v2/Users?filter=')} HTTP/1.1\r\nHost: x\r\n\r\n`);
    assert.equal(statusOf(raw), 414, raw.slice(0, 200));
    assert.match(headerOf(raw, 'content-type')!, /^application\/scim\+json/);
    assert.deepEqual(bodyOf(raw), scimError(414, 'The request line is too long'));
  });

  it("under /scim/v2: malformed HTTP is 400 in SCIM's shape", async () => {
    const raw = await send('GET /scim/v2/Users HTTP/1.1\r\nHost: x\r\nBad Header Line\r\n\r\n');
    assert.equal(statusOf(raw), 400, raw.slice(0, 200));
    assert.match(headerOf(raw, 'content-type')!, /^application\/scim\+json/);
    assert.deepEqual(bodyOf(raw), scimError(400, 'The request is not valid HTTP'));
  });

  it("elsewhere (and on look-alike paths) the same refusals are in the API's shape", async () => {
    for (const target of ['/v1/org', '/scim/v2x/Users', '/scim', '/v1/scim/token']) {
      const raw = await send(`GET ${target} HTTP/1.1\r\nHost: x\r\n${bigHeader}\r\n`);
      assert.equal(statusOf(raw), 431, target);
      assert.equal(headerOf(raw, 'content-type'), 'application/json', target);
      assert.deepEqual(
        bodyOf(raw),
        { error: 'request_header_fields_too_large', message: 'The request line or headers are too large' },
        target,
      );
    }
    const long = await send(`GET ${longPath('/v1/org?x=')} HTTP/1.1\r\nHost: x\r\n\r\n`);
    assert.equal(statusOf(long), 414, long.slice(0, 200));
    assert.deepEqual(bodyOf(long), { error: 'uri_too_long', message: 'The request line is too long' });
    const malformed = await send('GET /v1/org HTTP/1.1\r\nHost: x\r\nBad Header Line\r\n\r\n');
    assert.equal(statusOf(malformed), 400);
    assert.equal(bodyOf(malformed).error, 'invalid_request');
    // bytes that are no request line at all: the API's shape
    const garbage = await send(`\u0001\u0002 nonsense\r\n\r\n`);
    assert.equal(statusOf(garbage), 400);
    assert.equal(bodyOf(garbage).error, 'invalid_request');
  });

  it('the server goes on serving', async () => {
    assert.equal((await t.as().get('/health')).status, 200);
  });
});
