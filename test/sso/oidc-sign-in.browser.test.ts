// One complete SSO sign-in in a real browser (headless Chromium from Debian's `chromium` package):
// the e-mail sent to start, the identity provider's own login page filled in and submitted, back through
// orgplane's callback to the app's loopback redirect URI with a one-time code, exchanged for a session.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { chromium, type Browser } from 'playwright-core';
import { api } from '../support/http.ts';
import { pkcePair, startOidcWorld, type OidcWorld } from './oidc-support.ts';

const chromiumPath = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p));
const skip = chromiumPath
  ? false
  : 'Chromium is not installed (apt-get install -y chromium); the SSO browser test cannot run';

let world: OidcWorld;
let browser: Browser;
let appServer: Server;
const codes: string[] = [];

before(async () => {
  if (skip) return;
  world = await startOidcWorld({ interactive: true });
  // The "desktop app": a loopback redirect URI that receives the code.
  appServer = createServer((req, res) => {
    const code = new URL(req.url ?? '/', 'http://127.0.0.1').searchParams.get('code');
    if (code) codes.push(code);
    res.setHeader('content-type', 'text/html');
    res.end('<h1 id="done">Signed in; you can close this window</h1>');
  });
  await new Promise<void>((resolve) => appServer.listen(0, '127.0.0.1', resolve));
  browser = await chromium.launch({ executablePath: chromiumPath!, args: ['--no-sandbox', '--disable-gpu'] });
});

after(async () => {
  await browser?.close();
  appServer?.close();
  await world?.close();
});

test('a member signs in with SSO in a browser: the IdP login page, back to orgplane, a session', {
  skip,
  timeout: 120_000,
}, async () => {
  const { member, orgId } = world.tenant;
  world.idp.addAccount({ sub: 'browser-member', email: member.email, email_verified: true, name: member.name });
  const redirectUri = `http://127.0.0.1:${(appServer.address() as AddressInfo).port}/sso/done`;
  const pkce = pkcePair();
  const started = await api(world.app.url).post('/v1/auth/sso/start', {
    email: member.email,
    redirectUri,
    codeChallenge: pkce.challenge,
    codeChallengeMethod: 'S256',
  });
  assert.equal(started.status, 200, started.text);

  const page = await browser.newPage();
  await page.goto(started.body.authorizationUrl);
  await page.fill('input[name="login"]', 'browser-member');
  await page.fill('input[name="password"]', 'any password');
  await page.click('button[type="submit"]');
  await page.waitForSelector('#done');
  assert.ok(page.url().startsWith(`${redirectUri}?code=`));
  assert.equal(codes.length, 1);

  const exchanged = await api(world.app.url).post('/v1/auth/sso/token', {
    code: codes[0],
    codeVerifier: pkce.verifier,
  });
  assert.equal(exchanged.status, 200, exchanged.text);
  assert.equal(exchanged.body.user.id, member.userId);
  assert.equal(exchanged.body.organizationId, orgId);
  const me = await api(world.app.url, exchanged.body.sessionToken).get('/v1/me');
  assert.equal(me.body.session.authMethod, 'sso');
  await page.close();
});
