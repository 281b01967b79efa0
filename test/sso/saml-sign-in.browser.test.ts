// A SAML sign-in in a real browser (headless Chromium from Debian's `chromium` package): the IdP's page
// posts its signed answer to orgplane's ACS (HTTP-POST binding), which sends the browser on to the app's
// loopback redirect URI with a one-time code; and a refused answer is a readable page, not JSON, among
// them the answer brought back by another browser than the one that opened the sign-in's link.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { chromium, type Browser } from 'playwright-core';
import { api } from '../support/http.ts';
import { identityProviderUrl } from './oidc-support.ts';
import { personOf, pkcePair, startSamlWorld, type SamlWorld } from './saml-support.ts';

const chromiumPath = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p));
const skip = chromiumPath
  ? false
  : 'Chromium is not installed (apt-get install -y chromium); the SSO browser test cannot run';

let world: SamlWorld;
let browser: Browser;
let appServer: Server;
const codes: string[] = [];

before(async () => {
  if (skip) return;
  world = await startSamlWorld();
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

async function start(email: string) {
  const redirectUri = `http://127.0.0.1:${(appServer.address() as AddressInfo).port}/sso/done`;
  const pkce = pkcePair();
  const started = await api(world.app.url).post('/v1/auth/sso/start', {
    email,
    redirectUri,
    codeChallenge: pkce.challenge,
    codeChallengeMethod: 'S256',
  });
  assert.equal(started.status, 200, started.text);
  return { redirectUri, verifier: pkce.verifier, url: started.body.authorizationUrl as string };
}

test('a member signs in with SAML in a browser: the IdP posts to the ACS, back to the app with a code, a session', {
  skip,
  timeout: 120_000,
}, async () => {
  const { member, orgId } = world.tenant;
  world.idp.signInAs(personOf(member));
  const flow = await start(member.email);
  const page = await browser.newPage();
  await page.goto(flow.url);
  await page.waitForSelector('#done');
  assert.ok(page.url().startsWith(`${flow.redirectUri}?code=`), page.url());
  assert.equal(codes.length, 1);
  const exchanged = await api(world.app.url).post('/v1/auth/sso/token', {
    code: codes[0],
    codeVerifier: flow.verifier,
  });
  assert.equal(exchanged.status, 200, exchanged.text);
  assert.equal(exchanged.body.user.id, member.userId);
  assert.equal(exchanged.body.organizationId, orgId);
  await page.close();
});

test('an unsigned answer is refused with a readable page in the browser', { skip, timeout: 120_000 }, async () => {
  world.idp.signInAs(personOf(world.tenant.member));
  world.idp.unsigned();
  try {
    const flow = await start(world.tenant.member.email);
    const page = await browser.newPage();
    await page.goto(flow.url);
    await page.waitForSelector('#refused');
    assert.match((await page.textContent('#reason')) ?? '', /signature/i);
    assert.equal(new URL(page.url()).pathname, '/v1/auth/sso/saml/acs');
    await page.close();
  } finally {
    world.idp.reset();
  }
});

test("the IdP's answer brought back by another browser than the one that opened the link is refused with a readable page", {
  skip,
  timeout: 120_000,
}, async () => {
  world.idp.signInAs(personOf(world.tenant.member));
  const flow = await start(world.tenant.member.email);
  // The link opened in one browser (whoever started the sign-in): the IdP's URL it leads to, sent to someone else.
  const idpUrl = await identityProviderUrl(world.app, flow.url, new Map());
  const before = codes.length;
  const page = await browser.newPage();
  await page.goto(idpUrl);
  await page.waitForSelector('#refused');
  assert.match((await page.textContent('#reason')) ?? '', /started in another browser/);
  assert.equal(new URL(page.url()).pathname, '/v1/auth/sso/saml/acs');
  assert.equal(codes.length, before, 'no code reached the app');
  await page.close();
});
