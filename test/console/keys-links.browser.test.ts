// API keys and install links in Chromium against the real server on this run's backend: a key is shown
// once with a copy button, works, and stops working once revoked after a confirmation; creating it on a
// stale session goes through the re-authentication prompt. Install links are minted by anyone and
// rotated by owners and admins only. axe-core scans every state it reaches.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useTenantApp } from '../support/harness.ts';
import { ageSession } from '../identity/reauth-support.ts';
import { assertAccessible, screenshot, skipWithoutChromium, useConsolePage } from './browser.ts';
import { consoleToken, horizontalOverflow, signInAs, waitUntil, signOut } from './session.ts';

const t = useTenantApp();
const ui = useConsolePage(() => t.ready, { permissions: ['clipboard-read', 'clipboard-write'] });

const clipboard = () => ui.page.evaluate<string>('navigator.clipboard.readText()');
const keysUrl = `/v1/orgs/{org}/api-keys`;
async function keyNamesOnServer(): Promise<string[]> {
  const listed = await t.as(t.tenant.owner.token).get(`${keysUrl.replace('{org}', t.tenant.orgId)}?limit=100`);
  return listed.body.apiKeys.map((key: { name: string }) => key.name);
}

test('API keys: the empty state, a blank name refused beside its field', { skip: skipWithoutChromium }, async () => {
  await signInAs(ui.page, t.app.url, t.tenant.owner, '/api-keys');
  await ui.page.getByText(/No API keys yet\./).waitFor();
  await assertAccessible(ui.page, 'API keys, empty');
  await ui.page.getByRole('button', { name: 'Create key' }).click();
  const name = ui.page.getByLabel('Key name');
  await waitUntil(async () => (await name.getAttribute('aria-invalid')) === 'true', 'the blank name is marked invalid');
});

test('API keys: on a stale session the prompt comes first; the key is shown once, copies, works, and is revoked', {
  skip: skipWithoutChromium,
}, async () => {
  await ageSession(t.app, await consoleToken(ui.page));
  await ui.page.getByLabel('Key name').fill('CI deploy');
  await ui.page.getByLabel('Key role').selectOption('admin');
  await ui.page.getByRole('button', { name: 'Create key' }).click();
  const prompt = ui.page.getByRole('dialog', { name: 'Confirm it is you' });
  await prompt.getByLabel('Your password').fill(t.tenant.owner.password);
  await prompt.getByRole('button', { name: 'Confirm and continue' }).click();

  const shown = ui.page.getByRole('region', { name: 'New API key' });
  await shown.getByText(/you will not see it again/).waitFor();
  const key = await shown.getByRole('textbox', { name: 'API key' }).inputValue();
  assert.ok(key.length > 20);
  await shown.getByRole('button', { name: 'Copy api key' }).click();
  await shown.getByRole('status').filter({ hasText: 'Copied.' }).waitFor();
  assert.equal(await clipboard(), key);
  const table = ui.page.getByRole('table', { name: 'Active API keys' });
  await table.getByRole('cell', { name: 'CI deploy', exact: true }).waitFor();
  await assertAccessible(ui.page, 'API key shown once');
  await screenshot(ui.page, 'api-keys');
  assert.deepEqual(await keyNamesOnServer(), ['CI deploy']);
  const asKey = await fetch(`${t.app.url}/v1/orgs/${t.tenant.orgId}/members`, { headers: { 'x-api-key': key } });
  assert.equal(asKey.status, 200, 'the shown key is the real one');

  await shown.getByRole('button', { name: 'I have stored it' }).click();
  await shown.waitFor({ state: 'detached' });
  await ui.page.reload();
  await table.getByRole('cell', { name: 'CI deploy', exact: true }).waitFor();
  assert.equal(await ui.page.getByText(key).count(), 0, 'the key is never shown again');
  assert.ok(!(await ui.page.content()).includes(key));

  const revoke = ui.page.getByRole('button', { name: 'Revoke CI deploy' });
  await revoke.click();
  const dialog = ui.page.getByRole('dialog', { name: 'Revoke CI deploy?' });
  await dialog.waitFor();
  await assertAccessible(ui.page, 'revoke key confirmation');
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await dialog.waitFor({ state: 'hidden' });
  assert.deepEqual(await keyNamesOnServer(), ['CI deploy'], 'cancel keeps the key');
  await revoke.click();
  await dialog.getByRole('button', { name: 'Revoke key' }).click();
  await ui.page.getByText(/No API keys yet\./).waitFor();
  assert.deepEqual(await keyNamesOnServer(), []);
  const revoked = await fetch(`${t.app.url}/v1/orgs/${t.tenant.orgId}/members`, { headers: { 'x-api-key': key } });
  assert.equal(revoked.status, 401, 'a revoked key is refused');
});

test('install links: an owner mints one and copies it; it opens the install page; rotation voids it after a confirmation', {
  skip: skipWithoutChromium,
}, async () => {
  await ui.page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Install links' }).click();
  await ui.page.getByText(/No link on screen/).waitFor();
  await ui.page.getByRole('button', { name: 'Create install link' }).click();
  const shown = ui.page.getByRole('region', { name: 'New install link' });
  const field = shown.getByRole('textbox', { name: 'Install page link' });
  await field.waitFor();
  const first = await field.inputValue();
  assert.match(first, /\/install\/[A-Za-z0-9_.-]{20,}$/);
  await shown.getByRole('button', { name: 'Copy install page link' }).click();
  await shown.getByRole('status').filter({ hasText: 'Copied.' }).waitFor();
  assert.equal(await clipboard(), first);
  await assertAccessible(ui.page, 'install link');
  await screenshot(ui.page, 'install-links');
  const token = (url: string) => url.split('/install/')[1]!;
  assert.equal((await fetch(`${t.app.url}/v1/install-links/${token(first)}`)).status, 200);

  await ui.page.getByRole('button', { name: 'Rotate install links' }).click();
  const dialog = ui.page.getByRole('dialog', { name: 'Rotate the install links?' });
  await dialog.waitFor();
  await assertAccessible(ui.page, 'rotate confirmation');
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await dialog.waitFor({ state: 'hidden' });
  assert.equal((await fetch(`${t.app.url}/v1/install-links/${token(first)}`)).status, 200, 'cancel keeps the link');

  await ui.page.getByRole('button', { name: 'Rotate install links' }).click();
  await dialog.getByRole('button', { name: 'Rotate links' }).click();
  await ui.page
    .getByRole('status')
    .filter({ hasText: /Links rotated/ })
    .waitFor();
  const second = await field.inputValue();
  assert.notEqual(second, first);
  assert.equal(
    (await fetch(`${t.app.url}/v1/install-links/${token(first)}`)).status,
    404,
    'the older link stopped working',
  );
  assert.equal((await fetch(`${t.app.url}/v1/install-links/${token(second)}`)).status, 200);
});

test('a member: no API keys (the page says who manages them); install links minted but not rotated; 390×844', {
  skip: skipWithoutChromium,
}, async () => {
  await signOut(ui.page);
  await signInAs(ui.page, t.app.url, t.tenant.member, '/api-keys');
  await ui.page.getByText(/Only owners and admins manage API keys/).waitFor();
  assert.equal(await ui.page.getByLabel('Key name').count(), 0);
  await assertAccessible(ui.page, 'API keys as a member');

  await ui.page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Install links' }).click();
  await ui.page.getByText(/Owners and admins can rotate/).waitFor();
  assert.equal(await ui.page.getByRole('button', { name: 'Rotate install links' }).count(), 0);
  await ui.page.setViewportSize({ width: 390, height: 844 });
  const create = ui.page.getByRole('button', { name: 'Create install link' });
  await create.focus();
  await ui.page.keyboard.press('Enter');
  const url = await ui.page.getByRole('textbox', { name: 'Install page link' }).inputValue();
  assert.equal((await fetch(`${t.app.url}/v1/install-links/${url.split('/install/')[1]}`)).status, 200);
  assert.ok((await horizontalOverflow(ui.page)) <= 0, 'no sideways scrolling at 390 wide');
  await assertAccessible(ui.page, 'install links as a member at 390×844');
  await screenshot(ui.page, 'install-links-phone');
});
