// The console as the server serves it, over real HTTP: the HTML at `/` and at client-side routes, hashed
// assets cached for a year and precompressed, a strict CSP, the API's own 404s untouched, and a clear
// page when the console was never built.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { request } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { startTestApp, type TestApp } from '../support/app.ts';

interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** A GET without fetch's transparent decompression, so the encoding on the wire can be checked. */
function rawGet(url: string, headers: Record<string, string> = {}, method = 'GET'): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    request(url, { method, headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk) => chunks.push(chunk));
      response.on('end', () =>
        resolve({ status: response.statusCode!, headers: response.headers, body: Buffer.concat(chunks) }),
      );
    })
      .on('error', reject)
      .end();
  });
}

function assertStrictCsp(csp: unknown) {
  assert.equal(typeof csp, 'string');
  const policy = csp as string;
  assert.match(policy, /default-src 'self'/);
  assert.match(policy, /script-src 'self'(;|$)/);
  assert.match(policy, /frame-ancestors 'none'/);
  assert.match(policy, /object-src 'none'/);
  assert.doesNotMatch(policy, /unsafe-inline|unsafe-eval/);
}

let app: TestApp;
let missing: TestApp;
let emptyDir: string;
before(async () => {
  emptyDir = await mkdtemp(path.join(tmpdir(), 'orgplane-no-console-'));
  [app, missing] = await Promise.all([startTestApp(), startTestApp({}, { consoleDir: emptyDir })]);
});
after(async () => {
  await Promise.all([app?.close(), missing?.close()]);
  await rm(emptyDir, { recursive: true, force: true });
});

test('GET / answers the console HTML, not cached without revalidation, under a strict CSP', async () => {
  const answer = await rawGet(`${app.url}/`);
  assert.equal(answer.status, 200);
  assert.match(String(answer.headers['content-type']), /^text\/html/);
  assert.equal(answer.headers['cache-control'], 'no-cache');
  assert.equal(answer.headers['x-frame-options'], 'DENY');
  assertStrictCsp(answer.headers['content-security-policy']);
  const html = answer.body.toString();
  assert.match(html, /<script type="module" src="\/assets\/main-[A-Z0-9]+\.js"><\/script>/);
  // No inline script: every <script> names a src.
  assert.doesNotMatch(html, /<script(?![^>]*\bsrc=)[^>]*>/);
});

test('client-side routes answer the same HTML (the SPA fallback); HEAD too', async () => {
  const root = (await rawGet(`${app.url}/`)).body.toString();
  for (const route of ['/members', '/orgs/x/mcp-connections/y', '/sso/callback?code=abc']) {
    const answer = await rawGet(`${app.url}${route}`);
    assert.equal(answer.status, 200, route);
    assert.equal(answer.body.toString(), root, route);
  }
  const head = await rawGet(`${app.url}/members`, {}, 'HEAD');
  assert.equal(head.status, 200);
});

test('the API prefixes keep their own answers (JSON 404s), and other methods are not the console', async () => {
  const consoleHtml = (await rawGet(`${app.url}/`)).body.toString();
  for (const route of [
    '/v1/nothing-here',
    '/scim/v2/Nothing',
    '/docs/nothing',
    '/health/nothing',
    '/install/nothing',
  ]) {
    const answer = await rawGet(`${app.url}${route}`);
    // SCIM asks for its bearer token (401) before routing; the others answer 404. None is the console.
    assert.ok(answer.status === 404 || answer.status === 401, `${route}: ${answer.status}`);
    assert.notEqual(answer.body.toString(), consoleHtml, route);
  }
  const v1 = await rawGet(`${app.url}/v1/nothing-here`);
  assert.equal(JSON.parse(v1.body.toString()).error, 'not_found');
  const post = await rawGet(`${app.url}/members`, {}, 'POST');
  assert.equal(post.status, 404);
  assert.equal(JSON.parse(post.body.toString()).error, 'not_found');
});

test('the hashed assets are immutable for a year and come brotli- or gzip-compressed as accepted', async () => {
  const html = (await rawGet(`${app.url}/`)).body.toString();
  const script = /src="(\/assets\/[^"]+\.js)"/.exec(html)![1]!;
  const style = /href="(\/assets\/[^"]+\.css)"/.exec(html)![1]!;
  const plain = await rawGet(`${app.url}${script}`);
  assert.equal(plain.status, 200);
  assert.equal(plain.headers['cache-control'], 'public, max-age=31536000, immutable');
  assert.match(String(plain.headers['content-type']), /^text\/javascript/);
  assert.equal(plain.headers['content-encoding'], undefined);
  assertStrictCsp(plain.headers['content-security-policy']);

  const brotli = await rawGet(`${app.url}${script}`, { 'accept-encoding': 'gzip, deflate, br' });
  assert.equal(brotli.headers['content-encoding'], 'br');
  assert.equal(brotli.headers.vary, 'accept-encoding');
  assert.ok(brotli.body.length < plain.body.length);
  assert.deepEqual(brotliDecompressSync(brotli.body), plain.body);

  const gzip = await rawGet(`${app.url}${script}`, { 'accept-encoding': 'gzip' });
  assert.equal(gzip.headers['content-encoding'], 'gzip');
  assert.deepEqual(gunzipSync(gzip.body), plain.body);

  const refusedBrotli = await rawGet(`${app.url}${script}`, { 'accept-encoding': 'br;q=0, gzip' });
  assert.equal(refusedBrotli.headers['content-encoding'], 'gzip');

  const css = await rawGet(`${app.url}${style}`);
  assert.match(String(css.headers['content-type']), /^text\/css/);

  const unknown = await rawGet(`${app.url}/assets/main-NOTBUILT.js`);
  assert.equal(unknown.status, 404);
});

test('a server whose console was never built answers a page that says so, and its API still works', async () => {
  const answer = await rawGet(`${missing.url}/`);
  assert.equal(answer.status, 503);
  assert.match(String(answer.headers['content-type']), /^text\/html/);
  assert.match(answer.body.toString(), /console has not been built/);
  assert.match(answer.body.toString(), /npm run build:console/);
  const health = await rawGet(`${missing.url}/health`);
  assert.equal(health.status, 200);
});
