// The console's sign-in, sign-up, shell and members page, clicked through in Chromium against the real
// server on this run's backend; axe-core scans every page it reaches.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { useTenantApp } from '../support/harness.ts';
import { uniqueEmail } from '../support/fixtures.ts';
import { assertAccessible, launchChromium, screenshot, skipWithoutChromium } from './browser.ts';
import { horizontalOverflow, waitUntil } from './session.ts';

const t = useTenantApp();
let browser: Browser;
let context: BrowserContext;
let page: Page;
before(async () => {
  if (skipWithoutChromium) return;
  await t.ready;
  browser = await launchChromium();
  context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  page = await context.newPage();
});
after(async () => {
  await browser?.close();
});

async function signIn(email: string, password: string) {
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
}

test('a wrong password is refused with the API message; the right one opens the members page', { skip: skipWithoutChromium }, async () => {
  await page.goto(`${t.app.url}/`);
  await page.getByRole('heading', { name: 'Sign in to orgplane' }).waitFor();
  await assertAccessible(page, 'sign-in');
  await screenshot(page, 'sign-in');

  await signIn(t.tenant.owner.email, 'not-the-password');
  await page.getByRole('alert').waitFor();
  assert.match(await page.getByRole('alert').innerText(), /\S/);

  await page.getByLabel('Password').fill(t.tenant.owner.password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('heading', { name: 'Members' }).waitFor();
  const table = page.getByRole('table', { name: 'Members of this organization' });
  for (const person of [t.tenant.owner, t.tenant.admin, t.tenant.member]) {
    await table.getByRole('cell', { name: person.email, exact: true }).waitFor();
  }
  assert.equal(await table.getByRole('cell', { name: t.tenant.otherAdmin.email, exact: true }).count(), 0);
  assert.match(await page.getByText(/^Plan:/).innerText(), /Plan: (free|team|enterprise)/);
  await assertAccessible(page, 'members');
  await screenshot(page, 'members');
});

test('the token is kept in sessionStorage, never in the URL, and a reload stays signed in', { skip: skipWithoutChromium }, async () => {
  assert.doesNotMatch(page.url(), /token|ops_|session/i);
  const stored = await page.evaluate(() => sessionStorage.getItem('orgplane.session'));
  assert.ok(stored && stored.length > 10);
  await page.reload();
  await page.getByRole('heading', { name: 'Members' }).waitFor();
});

test('the organization switcher makes another organization active and shows its members', { skip: skipWithoutChromium }, async () => {
  const created = await t.as(t.tenant.owner.token).post('/v1/orgs', { name: 'Second org' });
  assert.equal(created.status, 201, created.text);
  // The console's session is not the one that created it: a reload lists it in the switcher.
  await page.reload();
  const switcher = page.getByRole('combobox', { name: 'Organization' });
  await switcher.selectOption({ label: 'Second org' });
  const rows = page.getByRole('table', { name: 'Members of this organization' }).getByRole('row');
  // The new organization has one member, the owner: a header row and one row.
  await waitUntil(async () => (await rows.count()) === 2, 'the second organization\'s members show');
  await rows.getByRole('cell', { name: t.tenant.owner.email, exact: true }).waitFor();
  const consoleToken = await page.evaluate(() => sessionStorage.getItem('orgplane.session'));
  const me = await t.as(consoleToken!).get('/v1/me');
  assert.equal(me.body.activeOrganizationId, created.body.organization.id);
});

test('the navigation works by keyboard, and at 390×844', { skip: skipWithoutChromium }, async () => {
  const link = page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Members' });
  await link.focus();
  await page.keyboard.press('Enter');
  assert.equal(new URL(page.url()).pathname, '/members');
  assert.equal(await link.getAttribute('aria-current'), 'page');
  await page.setViewportSize({ width: 390, height: 844 });
  await page.getByRole('heading', { name: 'Members' }).waitFor();
  const overflow = await horizontalOverflow(page);
  assert.ok(overflow <= 0, `the page scrolls sideways by ${overflow}px at 390 wide`);
  await assertAccessible(page, 'members at 390×844');
  await screenshot(page, 'members-phone');
  await page.setViewportSize({ width: 1280, height: 800 });
});

test('invitations: a bad address is refused beside its field; an invitation is sent, listed, and revoked after a confirmation', { skip: skipWithoutChromium }, async () => {
  await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Invitations' }).click();
  await page.getByRole('heading', { name: 'Invitations' }).waitFor();
  const emailField = page.getByLabel('Email to invite');
  await emailField.fill('not-an-address');
  await page.getByRole('button', { name: 'Invite', exact: true }).click();
  await waitUntil(async () => (await emailField.getAttribute('aria-invalid')) === 'true', 'the address is marked invalid');
  assert.match(await page.locator(`#${await emailField.getAttribute('aria-describedby')}`).innerText(), /\S/);

  const invitee = uniqueEmail('invitee');
  await emailField.fill(invitee);
  await page.getByLabel('Role').selectOption('admin');
  await page.getByRole('button', { name: 'Invite', exact: true }).click();
  const table = page.getByRole('table', { name: 'Pending invitations' });
  await table.getByRole('cell', { name: invitee, exact: true }).waitFor();
  await assertAccessible(page, 'invitations');
  await screenshot(page, 'invitations');

  const revoke = page.getByRole('button', { name: `Revoke the invitation of ${invitee}` });
  await revoke.click();
  const dialog = page.getByRole('dialog', { name: 'Revoke this invitation?' });
  await dialog.waitFor();
  await assertAccessible(page, 'revoke confirmation');
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await dialog.waitFor({ state: 'hidden' });
  // The console's active organization (the switcher test left it on the second one).
  const consoleToken = await page.evaluate(() => sessionStorage.getItem('orgplane.session'));
  const organizationId = (await t.as(consoleToken!).get('/v1/me')).body.activeOrganizationId;
  const listed = async () => (await t.as(t.tenant.owner.token).get(`/v1/orgs/${organizationId}/invitations`)).body.invitations.map((i: { email: string }) => i.email);
  assert.ok((await listed()).includes(invitee), 'cancel keeps the invitation');

  await revoke.click();
  await dialog.getByRole('button', { name: 'Revoke invitation' }).click();
  await table.getByRole('cell', { name: invitee, exact: true }).waitFor({ state: 'detached' });
  assert.ok(!(await listed()).includes(invitee), 'the invitation was revoked on the server');
});

test('sign out ends the session on the server and returns to sign-in', { skip: skipWithoutChromium }, async () => {
  const token = await page.evaluate(() => sessionStorage.getItem('orgplane.session'));
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('heading', { name: 'Sign in to orgplane' }).waitFor();
  assert.equal(await page.evaluate(() => sessionStorage.getItem('orgplane.session')), null);
  assert.equal((await t.as(token!).get('/v1/me')).status, 401);
});

test('sign-up shows the API message beside the field it names, then creates the account', { skip: skipWithoutChromium }, async () => {
  await page.getByRole('button', { name: 'Create one' }).click();
  await page.getByRole('heading', { name: 'Create your orgplane account' }).waitFor();
  const email = uniqueEmail('console');
  await page.getByLabel('Name').fill('Console Person');
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill('short');
  await page.getByRole('button', { name: 'Create account' }).click();
  const password = page.getByLabel('Password');
  await waitUntil(async () => (await password.getAttribute('aria-invalid')) === 'true', 'the password field is marked invalid');
  const describedBy = await password.getAttribute('aria-describedby');
  assert.ok(describedBy);
  assert.match(await page.locator(`#${describedBy}`).innerText(), /\S/);
  await assertAccessible(page, 'sign-up with an error');

  await password.fill('a-long-enough-password-1');
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.getByText(/not a member of any organization yet/).waitFor();
  await assertAccessible(page, 'no organization');
});
