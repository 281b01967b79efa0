// The console of a new instance: no administrator yet, so it offers the setup (POST /v1/bootstrap's
// rules and messages) instead of a sign-in page and lands signed in; once set up, nobody sees it again,
// and a second tab that still shows it hears that someone was first.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { startTestApp } from '../support/app.ts';
import { useTenantApp } from '../support/harness.ts';
import { assertAccessible, screenshot, skipWithoutChromium, useConsolePage } from './browser.ts';
import { assertFitsPhone, consoleToken, signOut, waitUntil } from './session.ts';

const t = useTenantApp({ tenant: false });
const ui = useConsolePage(() => t.ready);
const admin = { name: 'Ada Admin', email: 'ada@example.test', password: 'correct horse battery' };
let secondTab: Page;

async function fieldError(page: Page, label: string) {
  const field = page.getByLabel(label, { exact: true });
  await waitUntil(async () => (await field.getAttribute('aria-invalid')) === 'true', `${label} is marked invalid`);
  return page.locator(`#${(await field.getAttribute('aria-describedby'))!.split(' ').pop()}`).innerText();
}

test('a new instance offers its setup instead of a sign-in page; the API refuses bad input beside the fields', {
  skip: skipWithoutChromium,
}, async () => {
  await ui.page.goto(`${t.app.url}/`);
  await ui.page.getByRole('heading', { name: 'Set up orgplane' }).waitFor();
  assert.equal(await ui.page.getByRole('heading', { name: 'Sign in to orgplane' }).count(), 0);
  // A second tab opened at the same time, before anyone set the instance up.
  secondTab = await ui.context.newPage();
  await secondTab.goto(`${t.app.url}/`);
  await secondTab.getByRole('heading', { name: 'Set up orgplane' }).waitFor();
  await assertAccessible(ui.page, 'first-run setup');
  await screenshot(ui.page, 'first-run');

  await ui.page.getByLabel('Name', { exact: true }).fill(admin.name);
  await ui.page.getByLabel('Email').fill('not-an-address');
  await ui.page.getByLabel('Password').fill('short');
  await ui.page.getByRole('button', { name: 'Set up orgplane' }).click();
  assert.match(await fieldError(ui.page, 'Email'), /\S/);
  assert.match(await fieldError(ui.page, 'Password'), /\S/);
  assert.match(await fieldError(ui.page, 'Organization name'), /\S/);
  assert.deepEqual((await t.as().get('/v1/bootstrap')).body, { needed: true }, 'nothing was set up');
  await assertAccessible(ui.page, 'first-run setup with errors');
});

test('set up: the administrator lands signed in on the first organization, by keyboard', {
  skip: skipWithoutChromium,
}, async () => {
  await ui.page.getByLabel('Email').fill(admin.email);
  await ui.page.getByLabel('Password').fill(admin.password);
  await ui.page.getByLabel('Organization name').fill('Acme');
  await ui.page.getByLabel('Organization name').press('Enter');
  await ui.page.getByRole('heading', { name: 'Members' }).waitFor();
  assert.equal(new URL(ui.page.url()).pathname, '/');
  const switcher = ui.page.getByRole('combobox', { name: 'Organization' });
  assert.equal(await switcher.locator('option:checked').innerText(), 'Acme');
  await ui.page
    .getByRole('table', { name: 'Members of this organization' })
    .getByRole('cell', { name: admin.email, exact: true })
    .waitFor();
  const me = await t.as(await consoleToken(ui.page)).get('/v1/me');
  assert.equal(me.body.user.isInstanceAdmin, true);
  assert.equal(me.body.organizations[0].role, 'owner');
  assert.deepEqual((await t.as().get('/v1/bootstrap')).body, { needed: false });
  // The owner sees every section, the managers' ones included.
  const nav = ui.page.getByRole('navigation', { name: 'Console' });
  for (const name of ['API keys', 'SSO', 'Audit log', 'Organization settings'])
    await nav.getByRole('link', { name }).waitFor();
  await assertAccessible(ui.page, 'members after setup');
  await screenshot(ui.page, 'first-run-done');

  // Once set up, a reload stays signed in and a signed-out visitor gets the sign-in page, never the setup.
  await ui.page.reload();
  await ui.page.getByRole('heading', { name: 'Members' }).waitFor();
  await signOut(ui.page);
  assert.equal(await ui.page.getByRole('heading', { name: 'Set up orgplane' }).count(), 0);
});

test('a tab still showing the setup is told someone was first, and goes on to sign in', {
  skip: skipWithoutChromium,
}, async () => {
  await secondTab.bringToFront();
  await secondTab.getByLabel('Name', { exact: true }).fill('Mallory');
  await secondTab.getByLabel('Email').fill('mallory@example.test');
  await secondTab.getByLabel('Password').fill('another long password');
  await secondTab.getByLabel('Organization name').fill('Takeover');
  await secondTab.getByRole('button', { name: 'Set up orgplane' }).click();
  assert.match(await secondTab.getByRole('alert').innerText(), /already has an organization/);
  await assertAccessible(secondTab, 'setup refused');
  await secondTab.getByRole('button', { name: 'Go to the sign-in page' }).click();
  await secondTab.getByRole('heading', { name: 'Sign in to orgplane' }).waitFor();
  const signIn = await t
    .as()
    .post('/v1/auth/sign-in', { email: 'mallory@example.test', password: 'another long password' });
  assert.equal(signIn.status, 401, 'no account was made for the second tab');
  await secondTab.close();
});

test('the setup at 390×844', { skip: skipWithoutChromium }, async () => {
  // A second, empty instance: the setup page again, on a phone.
  const fresh = await startTestApp();
  try {
    await ui.page.setViewportSize({ width: 390, height: 844 });
    await ui.page.goto(`${fresh.url}/`);
    await ui.page.getByRole('heading', { name: 'Set up orgplane' }).waitFor();
    await assertFitsPhone(ui.page, 'first-run setup', 'first-run-phone');
  } finally {
    await ui.page.setViewportSize({ width: 1280, height: 800 });
    await fresh.close();
  }
});
