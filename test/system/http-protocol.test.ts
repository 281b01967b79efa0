// What the HTTP layer answers before any route's own rules: requests that never finish, and bodies
// that are not UTF-8 JSON. Each is refused in the API's error shape, and nothing is stored changed.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { useTenantApp } from '../support/harness.ts';
import { rawRequest } from '../support/raw-http.ts';

const bodyOf = (raw: string) => JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4));

describe('a request that never finishes', () => {
  // A short REQUEST_TIMEOUT_MS keeps the test quick; the behaviour is the same with the default.
  const t = useTenantApp({ config: { requestTimeoutMs: 1000 }, tenant: false });

  // Without the cut, these would wait forever: the timeout makes that a failure.
  it('a body that stops short of its Content-Length is cut off with 408 request_timeout, and the server goes on', {
    timeout: 20_000,
  }, async () => {
    const started = Date.now();
    const raw = await rawRequest(
      Number(new URL(t.app.url).port),
      'POST /v1/auth/sign-in HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n',
      '{',
      { end: false },
    );
    assert.match(raw, /^HTTP\/1\.1 408 /, raw);
    assert.deepEqual(bodyOf(raw), { error: 'request_timeout', message: 'The request took too long to arrive' });
    // The timeout (1 s) plus at most one check interval (250 ms), with room for a slow machine.
    assert.ok(Date.now() - started < 10_000, `cut off after ${Date.now() - started} ms`);
    assert.equal((await t.as().get('/health')).status, 200);
  });

  it('so are a chunked body without its last chunk and headers that never end', { timeout: 20_000 }, async () => {
    const port = Number(new URL(t.app.url).port);
    const chunked = await rawRequest(
      port,
      'POST /v1/auth/sign-in HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n',
      '1\r\n{\r\n',
      { end: false },
    );
    assert.match(chunked, /^HTTP\/1\.1 408 /, chunked);
    const headers = await rawRequest(port, 'GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: ', '', { end: false });
    assert.match(headers, /^HTTP\/1\.1 408 /, headers);
  });
});

describe('JSON bodies are UTF-8', () => {
  const t = useTenantApp({ tenant: false });

  const signIn = (body: Buffer, contentType = 'application/json') =>
    t.as().post('/v1/auth/sign-in', undefined, { raw: body, headers: { 'content-type': contentType } });
  const credentials = (password: Buffer) =>
    Buffer.concat([Buffer.from('{"email":"someone@example.test","password":"'), password, Buffer.from('"}')]);

  it('bytes that are not UTF-8 are 400 invalid_request, not read as U+FFFD', async () => {
    for (const bytes of [[0xc0, 0xaf], [0xff], [0xed, 0xa0, 0x80], [0xe2, 0x82]]) {
      const answer = await signIn(credentials(Buffer.from([0x61, ...bytes, 0x62])));
      assert.equal(answer.status, 400, `${bytes}: ${answer.text}`);
      assert.deepEqual(answer.body, {
        error: 'invalid_request',
        message: 'The body is not valid UTF-8',
        details: [{ message: 'The body is not valid UTF-8', path: [], in: 'body' }],
      });
    }
  });

  it('a charset other than UTF-8 is 415 unsupported_media_type; utf-8 in any spelling is read', async () => {
    const latin1 = credentials(Buffer.from('caf\xe9', 'latin1'));
    for (const contentType of [
      'application/json; charset=latin1',
      'application/json;charset="ISO-8859-1"',
      'application/json; charset=utf-16',
    ]) {
      const answer = await signIn(latin1, contentType);
      assert.equal(answer.status, 415, `${contentType}: ${answer.text}`);
      assert.equal(answer.body.error, 'unsupported_media_type');
    }
    for (const contentType of [
      'application/json; charset=utf-8',
      'application/json; charset="UTF-8"',
      'application/json;charset=utf8',
    ]) {
      const answer = await signIn(credentials(Buffer.from('caf\u00e9')), contentType);
      assert.equal(answer.status, 401, `${contentType}: ${answer.text}`);
      assert.equal(answer.body.error, 'invalid_credentials');
    }
  });
});
