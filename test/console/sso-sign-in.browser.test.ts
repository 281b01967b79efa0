// SSO sign-in through the console, in Chromium: the work e-mail, the test identity provider's own login
// page (oidc-provider on loopback), back to the console's callback, a session. Then what goes wrong: a
// domain without SSO, and a callback this tab did not start or with a code that is not valid. And the
// step-up of a session signed in through SSO: the re-authentication prompt sends the person to the
// identity provider in a second window, and the refused change goes through once it answered. And a
// person whose address someone else signed up with first: orgplane refuses to take that account, and says so.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { ageSession } from '../identity/reauth-support.ts';
import { api } from '../support/http.ts';
import { startOidcWorld, type OidcWorld } from '../sso/oidc-support.ts';
import { assertAccessible, screenshot, skipWithoutChromium, useConsolePage } from './browser.ts';
import { consoleToken as sessionOf, waitUntil } from './session.ts';

let world: OidcWorld;
const ui = useConsolePage(async () => {
  world = await startOidcWorld({ interactive: true });
});
after(async () => {
  await world?.close();
});

const consoleToken = () => ui.page.evaluate(() => sessionStorage.getItem('orgplane.session'));

test('a member signs in with SSO from the console: the IdP login page, back to the page where it started', {
  skip: skipWithoutChromium,
  timeout: 120_000,
}, async () => {
  const { member, orgId } = world.tenant;
  world.idp.addAccount({ sub: 'console-member', email: member.email, email_verified: true, name: member.name });
  // Started on a page of the console: the sign-in comes back to it (the desktop app's sign-in page relies on that).
  await ui.page.goto(`${world.app.url}/teams`);
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

  await ui.page.getByRole('heading', { name: 'Teams' }).waitFor();
  assert.equal(new URL(ui.page.url()).pathname, '/teams', 'back where the sign-in started');
  assert.equal(new URL(ui.page.url()).search, '', 'the one-time code left the address bar');
  const token = await consoleToken();
  assert.ok(token);
  const me = await api(world.app.url, token).get('/v1/me');
  assert.equal(me.status, 200);
  assert.equal(me.body.user.id, member.userId);
  assert.equal(me.body.session.authMethod, 'sso');
  assert.equal(me.body.activeOrganizationId, orgId);
  assert.equal(
    await ui.page.evaluate(() => sessionStorage.getItem('orgplane.sso.verifier')),
    null,
    'the verifier is gone once used',
  );
});

/** Signs `account` in at the test identity provider's own login form (in whichever page shows it). */
async function idpLogin(page: typeof ui.page, account: string) {
  await page.waitForURL((url) => url.origin !== world.app.url);
  await page.fill('input[name="login"]', account);
  await page.fill('input[name="password"]', 'any password');
  await page.click('button[type="submit"]');
}

test('an SSO session asked to re-authenticate confirms at its identity provider in a second window, and the change goes through', {
  skip: skipWithoutChromium,
  timeout: 120_000,
}, async () => {
  const { admin, member, orgId, owner } = world.tenant;
  // An owner signed in through SSO, whose sign-in is older than privileged changes allow; in a browser
  // of their own (the identity provider remembers the member's sign-in in this one).
  world.idp.addAccount({ sub: 'console-owner', email: owner.email, email_verified: true, name: owner.name });
  const context = await ui.browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  await page.goto(`${world.app.url}/`);
  await page.getByRole('button', { name: 'Sign in with SSO' }).click();
  await page.getByLabel('Work email').fill(owner.email);
  await page.getByRole('button', { name: 'Continue with SSO' }).click();
  await idpLogin(page, 'console-owner');
  await page.getByRole('heading', { name: 'Members' }).waitFor();
  const token = await sessionOf(page);
  await ageSession(world.app, token);

  await page.getByRole('combobox', { name: `Role of ${member.email}` }).selectOption('admin');
  await page.getByRole('button', { name: `Save the role of ${member.email}` }).click();
  const prompt = page.getByRole('dialog', { name: 'Confirm it is you' });
  await prompt.getByRole('button', { name: 'Continue with SSO' }).waitFor();
  assert.equal(await prompt.getByLabel('Your password').count(), 0, 'an SSO session is not asked for a password');
  await assertAccessible(page, 're-authentication through SSO');
  const [provider] = await Promise.all([
    page.waitForEvent('popup'),
    prompt.getByRole('button', { name: 'Continue with SSO' }).click(),
  ]);
  await idpLogin(provider, 'console-owner');
  await provider.waitForEvent('close');

  await prompt.waitFor({ state: 'detached' });
  await page
    .getByRole('status')
    .filter({ hasText: `${member.email} is now an admin.` })
    .waitFor();
  const members = await api(world.app.url, admin.token).get(`/v1/orgs/${orgId}/members`);
  assert.equal(
    members.body.members.find((m: { id: string }) => m.id === member.memberId)?.role,
    'admin',
    'the refused request was re-sent',
  );
  const me = await api(world.app.url, token).get('/v1/me');
  assert.equal(me.body.session.authMethod, 'sso');
  assert.ok(Date.now() - Date.parse(me.body.session.authenticatedAt) < 60_000, 'the same session was refreshed');
  await context.close();
});

test("an e-mail whose domain has no SSO gets the API's message beside the field", {
  skip: skipWithoutChromium,
}, async () => {
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
  await waitUntil(
    async () => (await field.getAttribute('aria-invalid')) === 'true',
    'the e-mail field is marked invalid',
  );
  assert.match(await ui.page.locator(`#${await field.getAttribute('aria-describedby')}`).innerText(), /\S/);
  await assertAccessible(ui.page, 'SSO sign-in with an error');
  await ui.page.getByRole('button', { name: 'Use a password instead' }).click();
  await ui.page.getByRole('heading', { name: 'Sign in to orgplane' }).waitFor();
});

test('a callback this tab did not start, or with a code that is not valid, signs no one in', {
  skip: skipWithoutChromium,
}, async () => {
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

test("someone signed up with the person's address before them: the SSO sign-in is refused with what to do, and no one is signed in", {
  skip: skipWithoutChromium,
  timeout: 120_000,
}, async () => {
  const email = `taken.${Date.now()}@example.test`;
  const signedUp = await api(world.app.url).post('/v1/auth/sign-up', {
    email,
    password: 'a-long-enough-password-1',
    name: 'Not The Person',
  });
  assert.equal(signedUp.status, 201, signedUp.text);
  world.idp.addAccount({ sub: 'console-taken', email, email_verified: true, name: 'The Person' });
  // A browser of the person's own (the identity provider remembers other sign-ins in the shared one).
  const context = await ui.browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  await page.goto(`${world.app.url}/`);
  await page.getByRole('button', { name: 'Sign in with SSO' }).click();
  await page.getByLabel('Work email').fill(email);
  await page.getByRole('button', { name: 'Continue with SSO' }).click();
  await idpLogin(page, 'console-taken');

  await page.getByRole('heading', { name: 'Sign-in refused' }).waitFor();
  const reason = await page.locator('#reason').innerText();
  assert.match(
    reason,
    new RegExp(`An orgplane account with the e-mail address ${email.replaceAll('.', '\\.')} already exists`),
  );
  assert.match(reason, /sign in with its password and ask an administrator to invite you/);
  assert.equal(new URL(page.url()).origin, world.app.url, "orgplane's own page, on the console's origin");
  await assertAccessible(page, 'SSO sign-in refused: an account the organization has no tie to');
  await screenshot(page, 'sso-account-not-linkable');
  assert.equal(await page.evaluate(() => sessionStorage.getItem('orgplane.session')), null, 'no one signed in');
  const members = await api(world.app.url, signedUp.body.sessionToken).get(`/v1/orgs/${world.tenant.orgId}/members`);
  assert.equal(members.status, 404, 'the earlier account did not become a member');
  await context.close();
});
