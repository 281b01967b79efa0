// SSO sign-in through the console, in Chromium: the work e-mail, the test identity provider's own login
// page (oidc-provider on loopback), back to the console's callback, a session. Then what goes wrong: a
// domain without SSO, and a callback this tab did not start or with a code that is not valid.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { api } from '../support/http.ts';
import { startOidcWorld, type OidcWorld } from '../sso/oidc-support.ts';
import { assertAccessible, screenshot, skipWithoutChromium, useConsolePage } from './browser.ts';
import { waitUntil } from './session.ts';

let world: OidcWorld;
const ui = useConsolePage(async () => {
  world = await startOidcWorld({ interactive: true });
});
after(async () => {
  await world?.close();
});

const consoleToken = () => ui.page.evaluate(() => sessionStorage.getItem('orgplane.session'));

test('a member signs in with SSO from the console: the IdP login page, back, the members page', { skip: skipWithoutChromium, timeout: 120_000 }, async () => {
  const { member, orgId } = world.tenant;
  world.idp.addAccount({ sub: 'console-member', email: member.email, email_verified: true, name: member.name });
  await ui.page.goto(`${world.app.url}/`);
  await ui.page.getByRole('button', { name: 'Sign in with SSO' }).click();
  await ui.page.getByRole('heading', { name: 'Sign in with SSO' }).waitFor();
  await assertAccessible(ui.page, 'SSO sign-in');
  await screenshot(ui.page, 'sso-sign-in');
  await ui.page.getByLabel('Work email').fill(member.email);
  await ui.page.getByRole('button', { name: 'Continue with SSO' }).click();

  // The identity provider's own page (oidc-provider's interaction form), not orgplane's.
  await ui.page.waitForURL((url) => url.origin !== world.app.url);
  await ui.page.fill('input[name="login"]', 'console-member');
  await ui.page.fill('input[name="password"]', 'any password');
  await ui.page.click('button[type="submit"]');

  await ui.page.getByRole('heading', { name: 'Members' }).waitFor();
  assert.equal(new URL(ui.page.url()).pathname, '/', 'the one-time code left the address bar');
  const token = await consoleToken();
  assert.ok(token);
  const me = await api(world.app.url, token).get('/v1/me');
  assert.equal(me.status, 200);
  assert.equal(me.body.user.id, member.userId);
  assert.equal(me.body.session.authMethod, 'sso');
  assert.equal(me.body.activeOrganizationId, orgId);
  assert.equal(await ui.page.evaluate(() => sessionStorage.getItem('orgplane.sso.verifier')), null, 'the verifier is gone once used');
});

test('an e-mail whose domain has no SSO gets the API\'s message beside the field', { skip: skipWithoutChromium }, async () => {
  await ui.page.getByRole('button', { name: 'Sign out' }).click();
  await ui.page.getByRole('button', { name: 'Sign in with SSO' }).click();
  await ui.page.getByLabel('Work email').fill('someone@no-sso.example.org');
  await ui.page.getByRole('button', { name: 'Continue with SSO' }).click();
  const alert = ui.page.getByRole('alert');
  await alert.waitFor();
  assert.match(await alert.innerText(), /\S/);
  assert.equal(new URL(ui.page.url()).origin, world.app.url, 'the browser stays on the console');

  await ui.page.getByLabel('Work email').fill('not-an-address');
  await ui.page.getByRole('button', { name: 'Continue with SSO' }).click();
  const field = ui.page.getByLabel('Work email');
  await waitUntil(async () => (await field.getAttribute('aria-invalid')) === 'true', 'the e-mail field is marked invalid');
  assert.match(await ui.page.locator(`#${await field.getAttribute('aria-describedby')}`).innerText(), /\S/);
  await assertAccessible(ui.page, 'SSO sign-in with an error');
  await ui.page.getByRole('button', { name: 'Use a password instead' }).click();
  await ui.page.getByRole('heading', { name: 'Sign in to orgplane' }).waitFor();
});

test('a callback this tab did not start, or with a code that is not valid, signs no one in', { skip: skipWithoutChromium }, async () => {
  // No verifier in this tab (a link opened elsewhere, or a replay): refused before any exchange.
  await ui.page.goto(`${world.app.url}/sso/callback?code=made-up`);
  await ui.page.getByRole('alert').filter({ hasText: 'not started in this tab' }).waitFor();
  assert.equal(await consoleToken(), null);
  assert.equal(new URL(ui.page.url()).search, '', 'the code left the address bar');
  await assertAccessible(ui.page, 'SSO callback refused');
  await screenshot(ui.page, 'sso-callback-refused');

  // A verifier, but a code orgplane never issued: the API's invalid_grant message.
  await ui.page.evaluate(() => sessionStorage.setItem('orgplane.sso.verifier', 'v'.repeat(43)));
  await ui.page.goto(`${world.app.url}/sso/callback?code=made-up`);
  const alert = ui.page.getByRole('alert');
  await alert.waitFor();
  assert.doesNotMatch(await alert.innerText(), /not started in this tab/);
  assert.equal(await consoleToken(), null);
  await ui.page.getByRole('link', { name: 'Back to sign in' }).click();
  await ui.page.getByRole('heading', { name: 'Sign in to orgplane' }).waitFor();
});
