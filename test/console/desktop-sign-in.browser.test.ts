// The desktop app's sign-in through the console, in Chromium against the real server on this run's
// backend. The "desktop app" is what it would be on the person's computer: a server on a loopback port
// waiting for the browser, holding the PKCE verifier. The link it opens signs the person in here, they
// confirm, the browser lands on the app with a code, and the app redeems it for its own session. Then
// cancelling (the app is told access_denied), a link that is not complete, and 390×844. And the links an
// attacker makes: one whose redirect is orgplane's own SSO callback (the attacker, another organization's
// admin with an identity provider of her own, would read the code there), and one whose Cancel would send
// the browser to her site.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startAttacker, type Attacker } from '../sso/attacker-support.ts';
import { pkcePair } from '../sso/oidc-support.ts';
import { startDnsServer } from '../support/dns-server.ts';
import { useTenantApp } from '../support/harness.ts';
import { assertAccessible, screenshot, skipWithoutChromium, useConsolePage } from './browser.ts';
import { consoleToken, horizontalOverflow, waitUntil } from './session.ts';

const dns = await startDnsServer();
const t = useTenantApp({ config: { dnsServers: [dns.address], allowedPrivateNetworks: ['127.0.0.1/32'] } });
let attacker: Attacker;
// The app's loopback listener: every redirect the browser brings it, by its query.
const arrivals: URLSearchParams[] = [];
let desktop: Server;
let redirectUri = '';
const ui = useConsolePage(async () => {
  await t.ready;
  desktop = createServer((request, response) => {
    // Only the redirect: the browser's own requests (its favicon) may arrive after a test looked.
    const url = new URL(request.url!, 'http://127.0.0.1');
    if (url.pathname === '/callback') arrivals.push(url.searchParams);
    response
      .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
      .end('<!doctype html><title>orgplane desktop</title><h1>Back in the app</h1>');
  });
  await new Promise<void>((resolve) => desktop.listen(0, '127.0.0.1', resolve));
  redirectUri = `http://127.0.0.1:${(desktop.address() as AddressInfo).port}/callback`;
  attacker = await startAttacker(t.app, dns, t.tenant);
});
after(async () => {
  desktop?.close();
  await attacker?.close();
  await dns.close();
});

function appLink(challenge: string, state?: string, to = redirectUri) {
  const query = new URLSearchParams({
    redirect_uri: to,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    ...(state !== undefined ? { state } : {}),
  });
  return `${t.app.url}/desktop/sign-in?${query}`;
}

test("the app's link: sign in, confirm, the browser lands on the app with a code that only the app's verifier redeems", {
  skip: skipWithoutChromium,
}, async () => {
  const { member, orgId } = t.tenant;
  const pkce = pkcePair();
  await ui.page.goto(appLink(pkce.challenge, 'state-1'));
  await ui.page.getByLabel('Email').fill(member.email);
  await ui.page.getByLabel('Password').fill(member.password);
  await ui.page.getByRole('button', { name: 'Sign in', exact: true }).click();

  await ui.page.getByRole('heading', { name: 'Sign in to the desktop app' }).waitFor();
  await ui.page.getByText(member.email).waitFor();
  assert.match(
    await ui.page.locator('main').innerText(),
    new RegExp(`waiting at 127\\.0\\.0\\.1:${new URL(redirectUri).port}`),
  );
  await assertAccessible(ui.page, 'desktop sign-in');
  await screenshot(ui.page, 'desktop-sign-in');
  await ui.page.getByRole('button', { name: 'Continue to the desktop app' }).click();
  await ui.page.getByRole('heading', { name: 'Back in the app' }).waitFor();

  const [arrived] = arrivals.splice(0);
  assert.equal(arrived?.get('state'), 'state-1');
  const code = arrived!.get('code')!;
  const wrong = await t.as().post('/v1/auth/desktop/token', { code, codeVerifier: pkcePair().verifier, redirectUri });
  assert.equal(wrong.status, 400, 'another verifier spends the code for nothing');
  // So the app starts again, signed in already in this browser: only the confirmation is asked.
  const again = pkcePair();
  await ui.page.goto(appLink(again.challenge, 'state-2'));
  await ui.page.getByRole('button', { name: 'Continue to the desktop app' }).click();
  await ui.page.getByRole('heading', { name: 'Back in the app' }).waitFor();
  const [second] = arrivals.splice(0);
  const exchanged = await t
    .as()
    .post('/v1/auth/desktop/token', { code: second!.get('code'), codeVerifier: again.verifier, redirectUri });
  assert.equal(exchanged.status, 200, exchanged.text);
  assert.equal(exchanged.body.user.id, member.userId);
  assert.equal(exchanged.body.organizationId, orgId);
  const me = await t.as(exchanged.body.sessionToken).get('/v1/me');
  assert.equal(me.body.user.id, member.userId, 'the app is signed in as the person');
});

test('cancelling tells the app (access_denied, its state) and gives it no code', {
  skip: skipWithoutChromium,
}, async () => {
  await ui.page.goto(appLink(pkcePair().challenge, 'state-3'));
  await ui.page.getByRole('button', { name: 'Cancel' }).click();
  await ui.page.getByRole('heading', { name: 'Back in the app' }).waitFor();
  const [arrived] = arrivals.splice(0);
  assert.deepEqual(
    [arrived?.get('error'), arrived?.get('state'), arrived?.has('code')],
    ['access_denied', 'state-3', false],
  );
});

test('a link without its challenge, or with a redirect the API refuses, says so and sends the browser nowhere', {
  skip: skipWithoutChromium,
}, async () => {
  await ui.page.goto(`${t.app.url}/desktop/sign-in?redirect_uri=${encodeURIComponent(redirectUri)}`);
  await ui.page.getByRole('alert').filter({ hasText: 'This sign-in link is incomplete' }).waitFor();
  await assertAccessible(ui.page, 'desktop sign-in, incomplete link');

  const query = new URLSearchParams({
    redirect_uri: 'https://elsewhere.example/callback',
    code_challenge: pkcePair().challenge,
    code_challenge_method: 'S256',
  });
  await ui.page.goto(`${t.app.url}/desktop/sign-in?${query}`);
  await ui.page.getByRole('button', { name: 'Continue to the desktop app' }).click();
  const alert = ui.page.getByRole('alert');
  await alert.waitFor();
  assert.match(await alert.innerText(), /\S/);
  assert.equal(new URL(ui.page.url()).origin, t.app.url, 'the browser stays on the console');
  assert.equal(arrivals.length, 0);
  assert.ok(await consoleToken(ui.page), 'still signed in here');
});

test("a link whose redirect is orgplane's own SSO callback: the owner confirms, and another organization's admin gets no session", {
  skip: skipWithoutChromium,
  timeout: 60_000,
}, async () => {
  const { owner } = t.tenant;
  const trap = await attacker.ownCallback();
  const pkce = pkcePair();
  // No state of the link's own, so that hers stays in the redirect URI.
  const context = await ui.browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  try {
    await page.goto(appLink(pkce.challenge, undefined, trap));
    await page.getByLabel('Email').fill(owner.email);
    await page.getByLabel('Password').fill(owner.password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    const seen = attacker.idp.receivedCodes.length;
    await page.getByRole('button', { name: 'Continue to the desktop app' }).click();
    // The console's refusal, or (where the code was handed on) the page orgplane's callback ends on.
    await page
      .getByRole('alert')
      .or(page.getByRole('heading', { name: 'Sign-in refused' }))
      .first()
      .waitFor();
    let session: { userId: string } | undefined;
    for (const code of attacker.idp.receivedCodes.slice(seen)) {
      const exchanged = await t
        .as()
        .post('/v1/auth/desktop/token', { code, codeVerifier: pkce.verifier, redirectUri: trap });
      if (exchanged.status === 200) session = { userId: exchanged.body.user.id };
    }
    assert.equal(session, undefined, "the attacker got the owner's session");
    assert.equal(new URL(page.url()).origin, t.app.url);
    assert.equal(new URL(page.url()).pathname, '/desktop/sign-in', 'the browser stays on the console page');
  } finally {
    await context.close();
  }
});

test('Cancel on a link whose redirect is another site sends the browser nowhere (no open redirect)', {
  skip: skipWithoutChromium,
}, async () => {
  const visits: string[] = [];
  // Her site, answered here (the test machine reaches no other): any request the browser makes to it is a visit.
  await ui.context.route('https://attacker.example/**', (route) => {
    visits.push(route.request().url());
    return route.fulfill({
      status: 200,
      contentType: 'text/html',
      body: '<!doctype html><title>attacker</title><h1>Attacker site</h1>',
    });
  });
  try {
    await ui.page.goto(appLink(pkcePair().challenge, 'state-5', 'https://attacker.example/phish'));
    await ui.page.getByRole('button', { name: 'Cancel' }).click();
    await ui.page
      .getByRole('alert')
      .or(ui.page.getByRole('heading', { name: 'Attacker site' }))
      .first()
      .waitFor();
    assert.deepEqual(visits, [], 'the console sent the browser to another site (open redirect)');
    assert.equal(new URL(ui.page.url()).origin, t.app.url, 'the browser stays on the console');
    assert.match(await ui.page.getByRole('alert').innerText(), /\S/);
  } finally {
    await ui.context.unroute('https://attacker.example/**');
  }
});

test('the confirmation fits 390×844 without sideways scrolling', { skip: skipWithoutChromium }, async () => {
  await ui.page.setViewportSize({ width: 390, height: 844 });
  await ui.page.goto(appLink(pkcePair().challenge, 'state-4'));
  await ui.page.getByRole('button', { name: 'Continue to the desktop app' }).waitFor();
  await waitUntil(
    async () => (await horizontalOverflow(ui.page)) <= 0,
    'the page stops scrolling sideways at 390 wide',
    3000,
  );
  await assertAccessible(ui.page, 'desktop sign-in at 390×844');
  await ui.page.setViewportSize({ width: 1280, height: 800 });
});
