// The SCIM page in Chromium against the real server on this run's backend, in an organization whose
// SSO domain is verified (a real DNS server and OIDC provider on loopback): the token created and shown
// once, copied, used by a directory's request, which the health then shows; a rotation cancelled by
// keyboard and then confirmed (the old token stops working); a member told who manages it; an
// organization without SSO told what SCIM needs; 390×844. axe-core scans each state.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { api } from '../support/http.ts';
import { startOidcWorld, type OidcWorld } from '../sso/oidc-support.ts';
import { assertAccessible, screenshot, skipWithoutChromium, useConsolePage } from './browser.ts';
import { assertFitsPhone, dismissWithEscape, expectToldWhoManages, signInAs, signOut, waitUntil } from './session.ts';

let world: OidcWorld;
const ui = useConsolePage(
  async () => {
    world = await startOidcWorld();
  },
  { permissions: ['clipboard-read', 'clipboard-write'] },
);
after(async () => {
  await world?.close();
});

// The token the first test created, which the rotation must void.
let firstToken = '';
const clipboard = () => ui.page.evaluate<string>('navigator.clipboard.readText()');
const users = (token: string) =>
  api(world.app.url, token).get('/scim/v2/Users', { headers: { accept: 'application/scim+json' } });

test('an owner creates the SCIM token: shown once, copied, and it works; the health shows the sync', {
  skip: skipWithoutChromium,
}, async () => {
  await signInAs(ui.page, world.app.url, world.tenant.owner, '/scim');
  await ui.page.getByText('No SCIM token yet.').waitFor();
  await assertAccessible(ui.page, 'SCIM, no token');
  await ui.page.getByRole('button', { name: 'Create SCIM token' }).click();

  const shown = ui.page.getByRole('region', { name: 'New SCIM token' });
  await shown.getByText(/you will not see it again/).waitFor();
  const token = await shown.getByRole('textbox', { name: 'SCIM token' }).inputValue();
  firstToken = token;
  await shown.getByRole('button', { name: 'Copy scim token' }).click();
  await shown.getByRole('status').filter({ hasText: 'Copied.' }).waitFor();
  assert.equal(await clipboard(), token);
  assert.equal((await users(token)).status, 200, 'the shown token is the real one');

  const baseUrl = await ui.page.getByRole('textbox', { name: 'SCIM base URL' }).inputValue();
  assert.equal(baseUrl, `${world.app.config.publicUrl}/scim/v2`);
  await ui.page.getByRole('button', { name: 'Copy scim base url' }).click();
  await waitUntil(async () => (await clipboard()) === baseUrl, 'the base URL is on the clipboard');
  const health = ui.page.getByRole('region', { name: 'Health' });
  assert.match(await health.innerText(), /Last successful sync\s+never/);
  await assertAccessible(ui.page, 'SCIM token shown once');
  await screenshot(ui.page, 'scim');

  // What a directory does first: provision someone.
  const created = await api(world.app.url, token).post(
    `${new URL(baseUrl).pathname}/Users`,
    {
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
      userName: 'dana@example.test',
      emails: [{ primary: true, value: 'dana@example.test' }],
      active: true,
    },
    { headers: { 'content-type': 'application/scim+json' } },
  );
  assert.equal(created.status, 201, created.text);
  await shown.getByRole('button', { name: 'I have stored it' }).click();
  await shown.waitFor({ state: 'detached' });
  await ui.page.reload();
  await health.waitFor();
  assert.doesNotMatch(await health.innerText(), /Last successful sync\s+never/);
  assert.ok(!(await ui.page.content()).includes(token), 'the token is never shown again');
});

test('rotation asks first (Escape keeps the token), then the old token stops working', {
  skip: skipWithoutChromium,
}, async () => {
  const rotate = ui.page.getByRole('button', { name: 'Rotate SCIM token' });
  await rotate.focus();
  await ui.page.keyboard.press('Enter');
  const dialog = ui.page.getByRole('dialog', { name: 'Rotate the SCIM token?' });
  await dialog.waitFor();
  await assertAccessible(ui.page, 'SCIM rotation question');
  await dismissWithEscape(ui.page, dialog);
  assert.equal(await ui.page.getByRole('region', { name: 'New SCIM token' }).count(), 0, 'Escape made no token');
  assert.equal((await users(firstToken)).status, 200, 'Escape kept the first token working');

  await rotate.click();
  await dialog.getByRole('button', { name: 'Rotate token' }).click();
  const shown = ui.page.getByRole('region', { name: 'New SCIM token' });
  const token = await shown.getByRole('textbox', { name: 'SCIM token' }).inputValue();
  assert.notEqual(token, firstToken);
  assert.equal((await users(token)).status, 200);
  assert.equal((await users(firstToken)).status, 401, 'the rotation voided the token before it');
});

test('at 390×844 nothing scrolls sideways', { skip: skipWithoutChromium }, async () => {
  await ui.page.setViewportSize({ width: 390, height: 844 });
  await ui.page.evaluate('scrollTo(0, 0)');
  await assertFitsPhone(ui.page, 'SCIM', 'scim-phone');
  await ui.page.setViewportSize({ width: 1280, height: 800 });
});

test('a member is told who manages SCIM; an organization without SSO is told what SCIM needs', {
  skip: skipWithoutChromium,
}, async () => {
  const { owner, admin, member } = world.tenant;
  await expectToldWhoManages(ui.page, world.app.url, member, '/scim', 'SCIM provisioning', [
    { ...owner, role: 'owner' },
    { ...admin, role: 'admin' },
  ]);
  assert.equal(await ui.page.getByRole('button', { name: /SCIM token/ }).count(), 0);

  await signOut(ui.page);
  await signInAs(ui.page, world.app.url, world.tenant.otherAdmin, '/scim');
  await ui.page.getByRole('button', { name: 'Create SCIM token' }).click();
  await ui.page.getByRole('alert').filter({ hasText: /SSO/ }).waitFor();
  assert.equal(await ui.page.getByRole('region', { name: 'New SCIM token' }).count(), 0);
});
