// CORS as a browser judges it (headless Chromium from Debian's `chromium` package): a page served by a
// second loopback server, on a listed origin, calls the API with fetch and reads the answers; the same
// page on an unlisted origin is blocked by the browser.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser } from 'playwright-core';
import { startTestApp, type TestApp } from '../support/app.ts';
import { packageVersion } from '../../src/version.ts';
import { createTenant, type Tenant } from '../support/fixtures.ts';

const chromiumPath = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p));
const skip = chromiumPath
  ? false
  : 'Chromium is not installed (apt-get install -y chromium); the CORS browser test cannot run';

/** A server for a page: any path answers an empty HTML page, whose script the test runs. */
async function startPageServer(): Promise<{ server: Server; origin: string }> {
  const server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    response.end('<!doctype html><title>integrator app</title>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

let app: TestApp;
let tenant: Tenant;
let browser: Browser;
let allowedPage: { server: Server; origin: string };
let otherPage: { server: Server; origin: string };
before(async () => {
  if (skip) return;
  [allowedPage, otherPage] = await Promise.all([startPageServer(), startPageServer()]);
  app = await startTestApp({ corsAllowedOrigins: [allowedPage.origin] });
  tenant = await createTenant(app.url);
  browser = await chromium.launch({
    executablePath: chromiumPath!,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--no-first-run',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
});
after(async () => {
  await browser?.close();
  await app?.close();
  for (const page of [allowedPage, otherPage]) await new Promise((resolve) => page?.server.close(resolve));
});

interface Outcome {
  ok: boolean;
  status?: number;
  body?: unknown;
  requestId?: string | null;
  retryAfter?: string | null;
  error?: string;
}

/** Opens `origin`'s page and runs fetch(url, init) in it; a fetch the browser blocks comes back as ok: false with its error. */
async function fetchFrom(
  origin: string,
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<Outcome> {
  const page = await browser.newPage();
  try {
    await page.goto(`${origin}/`);
    return await page.evaluate(
      async ([target, options]) => {
        try {
          const response = await fetch(target, options);
          const text = await response.text();
          return {
            ok: true,
            status: response.status,
            body: text ? JSON.parse(text) : null,
            requestId: response.headers.get('x-request-id'),
            retryAfter: response.headers.get('retry-after'),
          };
        } catch (error) {
          return { ok: false, error: String(error) };
        }
      },
      [url, init] as const,
    );
  } finally {
    await page.close();
  }
}

test('a page on the listed origin calls the API with a bearer token and reads the answer and its headers', {
  skip,
}, async () => {
  const me = await fetchFrom(allowedPage.origin, `${app.url}/v1/me`, {
    headers: { authorization: `Bearer ${tenant.member.token}` },
  });
  assert.equal(me.ok, true, me.error);
  assert.equal(me.status, 200);
  assert.equal((me.body as { user: { email: string } }).user.email, tenant.member.email);
  assert.match(me.requestId ?? '', /.+/, 'x-request-id is readable (exposed)');

  // a JSON write (a preflighted request) works too, and so does reading its error
  const signIn = await fetchFrom(allowedPage.origin, `${app.url}/v1/auth/sign-in`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: tenant.member.email, password: 'wrong password here' }),
  });
  assert.equal(signIn.ok, true, signIn.error);
  assert.equal(signIn.status, 401);
  assert.equal((signIn.body as { error: string }).error, 'invalid_credentials');

  const team = await fetchFrom(allowedPage.origin, `${app.url}/v1/orgs/${tenant.orgId}/teams`, {
    method: 'POST',
    headers: { authorization: `Bearer ${tenant.admin.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'From the browser' }),
  });
  assert.equal(team.ok, true, team.error);
  assert.equal(team.status, 201, JSON.stringify(team.body));
});

test('the same page on an unlisted origin is blocked by the browser, before and after the server answers', {
  skip,
}, async () => {
  // preflighted: the browser never sends the request
  const me = await fetchFrom(otherPage.origin, `${app.url}/v1/me`, {
    headers: { authorization: `Bearer ${tenant.member.token}` },
  });
  assert.equal(me.ok, false);
  assert.match(me.error!, /TypeError/);
  // a simple request reaches the server, but the page cannot read the answer
  const health = await fetchFrom(otherPage.origin, `${app.url}/health`);
  assert.equal(health.ok, false);
  // the listed origin can read that one
  const allowed = await fetchFrom(allowedPage.origin, `${app.url}/health`);
  assert.deepEqual(allowed.body, { status: 'ok', version: packageVersion });
});

test('a listed origin still cannot call the webhook ingress or SCIM from a page', { skip }, async () => {
  const webhook = await fetchFrom(allowedPage.origin, `${app.url}/v1/webhooks/messenger/mcn_x`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"update_id":1}',
  });
  assert.equal(webhook.ok, false);
  const scim = await fetchFrom(allowedPage.origin, `${app.url}/scim/v2/Users`, {
    headers: { authorization: 'Bearer opscim_x' },
  });
  assert.equal(scim.ok, false);
});
