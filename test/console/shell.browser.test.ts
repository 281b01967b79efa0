// The console's sign-in, sign-up, shell and members page, clicked through in Chromium against the real
// server on this run's backend; axe-core scans every page it reaches.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useTenantApp } from '../support/harness.ts';
import { uniqueEmail } from '../support/fixtures.ts';
import { assertAccessible, screenshot, skipWithoutChromium, useConsolePage } from './browser.ts';
import { ageSession } from '../identity/reauth-support.ts';
import { confirmItIsYou, horizontalOverflow, waitUntil } from './session.ts';

const t = useTenantApp();
const ui = useConsolePage(() => t.ready);

async function signIn(email: string, password: string) {
  await ui.page.getByLabel('Email').fill(email);
  await ui.page.getByLabel('Password').fill(password);
  await ui.page.getByRole('button', { name: 'Sign in', exact: true }).click();
}

test('a wrong password is refused with the API message; the right one opens the members page', {
  skip: skipWithoutChromium,
}, async () => {
  await ui.page.goto(`${t.app.url}/`);
  await ui.page.getByRole('heading', { name: 'Sign in to orgplane' }).waitFor();
  await assertAccessible(ui.page, 'sign-in');
  await screenshot(ui.page, 'sign-in');

  await signIn(t.tenant.owner.email, 'not-the-password');
  await ui.page.getByRole('alert').waitFor();
  assert.match(await ui.page.getByRole('alert').innerText(), /\S/);

  await ui.page.getByLabel('Password').fill(t.tenant.owner.password);
  await ui.page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await ui.page.getByRole('heading', { name: 'Members' }).waitFor();
  const table = ui.page.getByRole('table', { name: 'Members of this organization' });
  for (const person of [t.tenant.owner, t.tenant.admin, t.tenant.member]) {
    await table.getByRole('cell', { name: person.email, exact: true }).waitFor();
  }
  assert.equal(await table.getByRole('cell', { name: t.tenant.otherAdmin.email, exact: true }).count(), 0);
  assert.match(await ui.page.getByText(/^Plan:/).innerText(), /Plan: (free|team|enterprise)/);
  await assertAccessible(ui.page, 'members');
  await screenshot(ui.page, 'members');
});

test('the token is kept in sessionStorage, never in the URL, and a reload stays signed in', {
  skip: skipWithoutChromium,
}, async () => {
  assert.doesNotMatch(ui.page.url(), /token|ops_|session/i);
  const stored = await ui.page.evaluate(() => sessionStorage.getItem('orgplane.session'));
  assert.ok(stored && stored.length > 10);
  await ui.page.reload();
  await ui.page.getByRole('heading', { name: 'Members' }).waitFor();
});

test('the organization switcher makes another organization active and shows its members', {
  skip: skipWithoutChromium,
}, async () => {
  const created = await t.as(t.tenant.owner.token).post('/v1/orgs', { name: 'Second org' });
  assert.equal(created.status, 201, created.text);
  // The console's session is not the one that created it: a reload lists it in the switcher.
  await ui.page.reload();
  const switcher = ui.page.getByRole('combobox', { name: 'Organization' });
  await switcher.selectOption({ label: 'Second org' });
  const rows = ui.page.getByRole('table', { name: 'Members of this organization' }).getByRole('row');
  // The new organization has one member, the owner: a header row and one row.
  await waitUntil(async () => (await rows.count()) === 2, "the second organization's members show");
  await rows.getByRole('cell', { name: t.tenant.owner.email, exact: true }).waitFor();
  const consoleToken = await ui.page.evaluate(() => sessionStorage.getItem('orgplane.session'));
  const me = await t.as(consoleToken!).get('/v1/me');
  assert.equal(me.body.activeOrganizationId, created.body.organization.id);
});

test('the navigation works by keyboard, and at 390×844', { skip: skipWithoutChromium }, async () => {
  const link = ui.page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Members' });
  await link.focus();
  await ui.page.keyboard.press('Enter');
  assert.equal(new URL(ui.page.url()).pathname, '/members');
  assert.equal(await link.getAttribute('aria-current'), 'page');
  await ui.page.setViewportSize({ width: 390, height: 844 });
  await ui.page.getByRole('heading', { name: 'Members' }).waitFor();
  const overflow = await horizontalOverflow(ui.page);
  assert.ok(overflow <= 0, `the page scrolls sideways by ${overflow}px at 390 wide`);
  await assertAccessible(ui.page, 'members at 390×844');
  await screenshot(ui.page, 'members-phone');
  await ui.page.setViewportSize({ width: 1280, height: 800 });
});

test('invitations: a bad address is refused beside its field; an invitation is sent (a stale session confirms first), listed, and revoked after a confirmation', {
  skip: skipWithoutChromium,
}, async () => {
  await ui.page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Invitations' }).click();
  await ui.page.getByRole('heading', { name: 'Invitations' }).waitFor();
  const emailField = ui.page.getByLabel('Email to invite');
  await emailField.fill('not-an-address');
  await ui.page.getByRole('button', { name: 'Invite', exact: true }).click();
  await waitUntil(
    async () => (await emailField.getAttribute('aria-invalid')) === 'true',
    'the address is marked invalid',
  );
  assert.match(await ui.page.locator(`#${await emailField.getAttribute('aria-describedby')}`).innerText(), /\S/);

  const invitee = uniqueEmail('invitee');
  await ageSession(t.app, (await ui.page.evaluate(() => sessionStorage.getItem('orgplane.session')))!);
  await emailField.fill(invitee);
  await ui.page.getByLabel('Role').selectOption('admin');
  await ui.page.getByRole('button', { name: 'Invite', exact: true }).click();
  await confirmItIsYou(ui.page, t.tenant.owner.password);
  const table = ui.page.getByRole('table', { name: 'Pending invitations' });
  await table.getByRole('cell', { name: invitee, exact: true }).waitFor();
  await assertAccessible(ui.page, 'invitations');
  await screenshot(ui.page, 'invitations');

  const revoke = ui.page.getByRole('button', { name: `Revoke the invitation of ${invitee}` });
  await revoke.click();
  const dialog = ui.page.getByRole('dialog', { name: 'Revoke this invitation?' });
  await dialog.waitFor();
  await assertAccessible(ui.page, 'revoke confirmation');
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await dialog.waitFor({ state: 'hidden' });
  // The console's active organization (the switcher test left it on the second one).
  const consoleToken = await ui.page.evaluate(() => sessionStorage.getItem('orgplane.session'));
  const organizationId = (await t.as(consoleToken!).get('/v1/me')).body.activeOrganizationId;
  const listed = async () =>
    (await t.as(t.tenant.owner.token).get(`/v1/orgs/${organizationId}/invitations`)).body.invitations.map(
      (i: { email: string }) => i.email,
    );
  assert.ok((await listed()).includes(invitee), 'cancel keeps the invitation');

  await revoke.click();
  await dialog.getByRole('button', { name: 'Revoke invitation' }).click();
  await table.getByRole('cell', { name: invitee, exact: true }).waitFor({ state: 'detached' });
  assert.ok(!(await listed()).includes(invitee), 'the invitation was revoked on the server');
});

test('sign out ends the session on the server and returns to sign-in', { skip: skipWithoutChromium }, async () => {
  const token = await ui.page.evaluate(() => sessionStorage.getItem('orgplane.session'));
  await ui.page.getByRole('button', { name: 'Sign out' }).click();
  await ui.page.getByRole('heading', { name: 'Sign in to orgplane' }).waitFor();
  assert.equal(await ui.page.evaluate(() => sessionStorage.getItem('orgplane.session')), null);
  assert.equal((await t.as(token!).get('/v1/me')).status, 401);
});

test('sign-up shows the API message beside the field it names, then creates the account', {
  skip: skipWithoutChromium,
}, async () => {
  await ui.page.getByRole('button', { name: 'Create one' }).click();
  await ui.page.getByRole('heading', { name: 'Create your orgplane account' }).waitFor();
  const email = uniqueEmail('console');
  await ui.page.getByLabel('Name').fill('Console Person');
  await ui.page.getByLabel('Email').fill(email);
  await ui.page.getByLabel('Password').fill('short');
  await ui.page.getByRole('button', { name: 'Create account' }).click();
  const password = ui.page.getByLabel('Password');
  await waitUntil(
    async () => (await password.getAttribute('aria-invalid')) === 'true',
    'the password field is marked invalid',
  );
  const describedBy = await password.getAttribute('aria-describedby');
  assert.ok(describedBy);
  assert.match(await ui.page.locator(`#${describedBy}`).innerText(), /\S/);
  await assertAccessible(ui.page, 'sign-up with an error');

  await password.fill('a-long-enough-password-1');
  await ui.page.getByRole('button', { name: 'Create account' }).click();
  await ui.page.getByText(/not a member of any organization yet/).waitFor();
  await assertAccessible(ui.page, 'no organization');
});
