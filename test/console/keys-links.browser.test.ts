// API keys and install links in Chromium against the real server on this run's backend: a key is shown
// once with a copy button, works, and stops working once revoked after a confirmation; creating it on a
// stale session goes through the re-authentication prompt. Install links are minted by anyone and
// rotated by owners and admins only. axe-core scans every state it reaches.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { useTenantApp } from '../support/harness.ts';
import { ageSession } from '../identity/reauth-support.ts';
import { assertAccessible, launchChromium, screenshot, skipWithoutChromium } from './browser.ts';
import { consoleToken, horizontalOverflow, signInAs, waitUntil, signOut } from './session.ts';

const t = useTenantApp();
let browser: Browser;
let context: BrowserContext;
let page: Page;
before(async () => {
  if (skipWithoutChromium) return;
  await t.ready;
  browser = await launchChromium();
  context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: t.app.url });
  page = await context.newPage();
});
after(async () => {
  await browser?.close();
});

const clipboard = () => page.evaluate<string>('navigator.clipboard.readText()');
const keysUrl = `/v1/orgs/{org}/api-keys`;
async function keyNamesOnServer(): Promise<string[]> {
  const listed = await t.as(t.tenant.owner.token).get(`${keysUrl.replace('{org}', t.tenant.orgId)}?limit=100`);
  return listed.body.apiKeys.map((key: { name: string }) => key.name);
}

test('API keys: the empty state, a blank name refused beside its field', { skip: skipWithoutChromium }, async () => {
  await signInAs(page, t.app.url, t.tenant.owner, '/api-keys');
  await page.getByText(/No API keys yet\./).waitFor();
  await assertAccessible(page, 'API keys, empty');
  await page.getByRole('button', { name: 'Create key' }).click();
  const name = page.getByLabel('Key name');
  await waitUntil(async () => (await name.getAttribute('aria-invalid')) === 'true', 'the blank name is marked invalid');
});

test('API keys: on a stale session the prompt comes first; the key is shown once, copies, works, and is revoked', { skip: skipWithoutChromium }, async () => {
  await ageSession(t.app, await consoleToken(page));
  await page.getByLabel('Key name').fill('CI deploy');
  await page.getByLabel('Key role').selectOption('admin');
  await page.getByRole('button', { name: 'Create key' }).click();
  const prompt = page.getByRole('dialog', { name: 'Confirm it is you' });
  await prompt.getByLabel('Your password').fill(t.tenant.owner.password);
  await prompt.getByRole('button', { name: 'Confirm and continue' }).click();

  const shown = page.getByRole('region', { name: 'New API key' });
  await shown.getByText(/you will not see it again/).waitFor();
  const key = await shown.getByRole('textbox', { name: 'API key' }).inputValue();
  assert.ok(key.length > 20);
  await shown.getByRole('button', { name: 'Copy api key' }).click();
  await shown.getByRole('status').filter({ hasText: 'Copied.' }).waitFor();
  assert.equal(await clipboard(), key);
  const table = page.getByRole('table', { name: 'Active API keys' });
  await table.getByRole('cell', { name: 'CI deploy', exact: true }).waitFor();
  await assertAccessible(page, 'API key shown once');
  await screenshot(page, 'api-keys');
  assert.deepEqual(await keyNamesOnServer(), ['CI deploy']);
  const asKey = await fetch(`${t.app.url}/v1/orgs/${t.tenant.orgId}/members`, { headers: { 'x-api-key': key } });
  assert.equal(asKey.status, 200, 'the shown key is the real one');

  await shown.getByRole('button', { name: 'I have stored it' }).click();
  await shown.waitFor({ state: 'detached' });
  await page.reload();
  await table.getByRole('cell', { name: 'CI deploy', exact: true }).waitFor();
  assert.equal(await page.getByText(key).count(), 0, 'the key is never shown again');
  assert.ok(!(await page.content()).includes(key));

  const revoke = page.getByRole('button', { name: 'Revoke CI deploy' });
  await revoke.click();
  const dialog = page.getByRole('dialog', { name: 'Revoke CI deploy?' });
  await dialog.waitFor();
  await assertAccessible(page, 'revoke key confirmation');
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await dialog.waitFor({ state: 'hidden' });
  assert.deepEqual(await keyNamesOnServer(), ['CI deploy'], 'cancel keeps the key');
  await revoke.click();
  await dialog.getByRole('button', { name: 'Revoke key' }).click();
  await page.getByText(/No API keys yet\./).waitFor();
  assert.deepEqual(await keyNamesOnServer(), []);
  const revoked = await fetch(`${t.app.url}/v1/orgs/${t.tenant.orgId}/members`, { headers: { 'x-api-key': key } });
  assert.equal(revoked.status, 401, 'a revoked key is refused');
});

test('install links: an owner mints one and copies it; it opens the install page; rotation voids it after a confirmation', { skip: skipWithoutChromium }, async () => {
  await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Install links' }).click();
  await page.getByText(/No link on screen/).waitFor();
  await page.getByRole('button', { name: 'Create install link' }).click();
  const shown = page.getByRole('region', { name: 'New install link' });
  const field = shown.getByRole('textbox', { name: 'Install page link' });
  await field.waitFor();
  const first = await field.inputValue();
  assert.match(first, /\/install\/[A-Za-z0-9_-]{20,}$/);
  await shown.getByRole('button', { name: 'Copy install page link' }).click();
  await shown.getByRole('status').filter({ hasText: 'Copied.' }).waitFor();
  assert.equal(await clipboard(), first);
  await assertAccessible(page, 'install link');
  await screenshot(page, 'install-links');
  const token = (url: string) => url.split('/install/')[1]!;
  assert.equal((await fetch(`${t.app.url}/v1/install-links/${token(first)}`)).status, 200);

  await page.getByRole('button', { name: 'Rotate install links' }).click();
  const dialog = page.getByRole('dialog', { name: 'Rotate the install links?' });
  await dialog.waitFor();
  await assertAccessible(page, 'rotate confirmation');
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await dialog.waitFor({ state: 'hidden' });
  assert.equal((await fetch(`${t.app.url}/v1/install-links/${token(first)}`)).status, 200, 'cancel keeps the link');

  await page.getByRole('button', { name: 'Rotate install links' }).click();
  await dialog.getByRole('button', { name: 'Rotate links' }).click();
  await page.getByRole('status').filter({ hasText: /Links rotated/ }).waitFor();
  const second = await field.inputValue();
  assert.notEqual(second, first);
  assert.equal((await fetch(`${t.app.url}/v1/install-links/${token(first)}`)).status, 404, 'the older link stopped working');
  assert.equal((await fetch(`${t.app.url}/v1/install-links/${token(second)}`)).status, 200);
});

test('a member: no API keys (the page says who manages them); install links minted but not rotated; 390×844', { skip: skipWithoutChromium }, async () => {
  await signOut(page);
  await signInAs(page, t.app.url, t.tenant.member, '/api-keys');
  await page.getByText(/Only owners and admins manage API keys/).waitFor();
  assert.equal(await page.getByLabel('Key name').count(), 0);
  await assertAccessible(page, 'API keys as a member');

  await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Install links' }).click();
  await page.getByText(/Owners and admins can rotate/).waitFor();
  assert.equal(await page.getByRole('button', { name: 'Rotate install links' }).count(), 0);
  await page.setViewportSize({ width: 390, height: 844 });
  const create = page.getByRole('button', { name: 'Create install link' });
  await create.focus();
  await page.keyboard.press('Enter');
  const url = await page.getByRole('textbox', { name: 'Install page link' }).inputValue();
  assert.equal((await fetch(`${t.app.url}/v1/install-links/${url.split('/install/')[1]}`)).status, 200);
  assert.ok((await horizontalOverflow(page)) <= 0, 'no sideways scrolling at 390 wide');
  await assertAccessible(page, 'install links as a member at 390×844');
  await screenshot(page, 'install-links-phone');
});
