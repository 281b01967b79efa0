// The console's instance administration, clicked through in Chromium against the real server on this
// run's backend: the admin navigation only for instance administrators, the overview, searching people
// and organizations, changing a plan (read back through the API), adding and removing an administrator
// (the last one cannot be), an old session asked to confirm it is them, and the same pages at 390 px.
// axe-core scans each state.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ageSession } from '../identity/reauth-support.ts';
import { signUp, type TestUser } from '../support/fixtures.ts';
import { useTenantApp } from '../support/harness.ts';
import { assertAccessible, screenshot, skipWithoutChromium, useConsolePage } from './browser.ts';
import { assertFitsPhone, confirmItIsYou, consoleToken, signInAs, signOut, waitUntil } from './session.ts';

const t = useTenantApp();
let operator: TestUser;
const ui = useConsolePage(async () => {
  await t.ready;
  operator = await signUp(t.app.url, 'operator');
  await t.app.db.query('/* test */ UPDATE users SET is_instance_admin = true WHERE id = $1', [operator.userId]);
});
const nav = () => ui.page.getByRole('navigation', { name: 'Console' });
const instanceLinks = () => nav().getByRole('list', { name: 'Instance' }).getByRole('link').allInnerTexts();

test("an organization's owner who is not an instance administrator sees no admin area, and is told so at its address", {
  skip: skipWithoutChromium,
}, async () => {
  await signInAs(ui.page, t.app.url, t.tenant.owner);
  assert.equal(await nav().getByRole('list', { name: 'Instance' }).count(), 0);
  await ui.page.goto(`${t.app.url}/admin/people`);
  await ui.page.getByText('Only instance administrators use this area.').waitFor();
  await assertAccessible(ui.page, 'admin page refused');
  await signOut(ui.page);
});

test('an instance administrator: the overview with the counts the API gives', {
  skip: skipWithoutChromium,
}, async () => {
  await signInAs(ui.page, t.app.url, operator, '/admin');
  assert.deepEqual(await instanceLinks(), ['Overview', 'People', 'Organizations', 'Administrators']);
  await ui.page.getByRole('heading', { name: 'Instance overview' }).waitFor();
  const overview = (await t.as(operator.token).get('/v1/admin/overview')).body;
  const figure = (label: string) => ui.page.locator('.figures div', { hasText: label }).locator('dd').innerText();
  assert.equal(await figure('People'), String(overview.people));
  assert.equal(await figure('Organizations'), String(overview.organizations));
  await ui.page.getByText('The instance has one administrator').waitFor();
  await assertAccessible(ui.page, 'overview');
  await screenshot(ui.page, 'admin-overview');
});

test('people: the list, and a search by the start of an e-mail', { skip: skipWithoutChromium }, async () => {
  await nav().getByRole('link', { name: 'People' }).click();
  await ui.page.getByRole('heading', { name: 'People' }).waitFor();
  await ui.page.getByRole('cell', { name: t.tenant.member.email }).waitFor();
  await ui.page.getByLabel('E-mail or name starts with').fill(t.tenant.member.email.slice(0, 10));
  await ui.page.getByRole('button', { name: 'Search' }).click();
  await waitUntil(async () => (await ui.page.locator('tbody tr').count()) === 1, 'one person found');
  assert.equal(await ui.page.locator('tbody tr td').nth(1).innerText(), t.tenant.member.email);
  await ui.page.getByLabel('E-mail or name starts with').fill('nobody-here');
  await ui.page.getByRole('button', { name: 'Search' }).click();
  await ui.page.getByText("Nobody's e-mail or name starts with “nobody-here”.").waitFor();
  await assertAccessible(ui.page, 'people');
  await screenshot(ui.page, 'admin-people');
});

test("organizations: a plan changed from the list is the organization's plan", {
  skip: skipWithoutChromium,
}, async () => {
  await nav().getByRole('link', { name: 'Organizations' }).click();
  await ui.page.getByRole('heading', { name: 'Organizations' }).waitFor();
  await ui.page.getByLabel('Name starts with, or id').fill('acm');
  await ui.page.getByRole('button', { name: 'Search' }).click();
  await waitUntil(async () => (await ui.page.locator('tbody tr').count()) === 1, 'Acme found');
  await ui.page.getByLabel('Plan of Acme').selectOption('enterprise');
  await ui.page.getByText('Acme is on the enterprise plan.').waitFor();
  const org = await t.as(t.tenant.owner.token).get('/v1/org');
  assert.equal(org.body.organization.plan, 'enterprise');
  await assertAccessible(ui.page, 'organizations');
  await screenshot(ui.page, 'admin-organizations');
});

test('administrators: add one by e-mail, remove them; the last one cannot be removed', {
  skip: skipWithoutChromium,
}, async () => {
  await nav().getByRole('link', { name: 'Administrators' }).click();
  await ui.page.getByRole('heading', { name: 'Administrators' }).waitFor();
  assert.equal(await ui.page.getByRole('button', { name: `Remove ${operator.email}` }).isDisabled(), true);
  await ui.page.getByLabel('E-mail of an existing account').fill('nobody@example.test');
  await ui.page.getByRole('button', { name: 'Add administrator' }).click();
  await ui.page.getByText('No account has this e-mail address').first().waitFor();
  await ui.page.getByLabel('E-mail of an existing account').fill(t.tenant.admin.email);
  await ui.page.getByRole('button', { name: 'Add administrator' }).click();
  await ui.page.getByText(`${t.tenant.admin.email} is an instance administrator.`).waitFor();
  await assertAccessible(ui.page, 'administrators');
  await screenshot(ui.page, 'admin-administrators');
  await ui.page.getByRole('button', { name: `Remove ${t.tenant.admin.email}` }).click();
  const dialog = ui.page.getByRole('dialog', { name: 'Remove an administrator' });
  await assertAccessible(ui.page, 'remove an administrator');
  await dialog.getByRole('button', { name: 'Remove' }).click();
  await ui.page.getByText(`${t.tenant.admin.email} is no longer an instance administrator.`).waitFor();
  const admins = (await t.as(operator.token).get('/v1/admin/admins')).body.admins;
  assert.deepEqual(
    admins.map((admin: { userId: string }) => admin.userId),
    [operator.userId],
  );
});

test('an old session is asked to confirm it is them, then the page shows', { skip: skipWithoutChromium }, async () => {
  await ageSession(t.app, await consoleToken(ui.page));
  await nav().getByRole('link', { name: 'Overview' }).click();
  await confirmItIsYou(ui.page, operator.password);
  await ui.page.getByRole('heading', { name: 'Instance overview' }).waitFor();
  await ui.page.locator('.figures').waitFor();
});

test('the admin pages fit a phone (390 px)', { skip: skipWithoutChromium }, async () => {
  await ui.page.setViewportSize({ width: 390, height: 844 });
  for (const [path, heading, name] of [
    ['/admin', 'Instance overview', 'admin-overview-phone'],
    ['/admin/people', 'People', 'admin-people-phone'],
    ['/admin/organizations', 'Organizations', 'admin-organizations-phone'],
    ['/admin/administrators', 'Administrators', 'admin-administrators-phone'],
  ] as const) {
    await ui.page.goto(`${t.app.url}${path}`);
    await ui.page.getByRole('heading', { name: heading, exact: true }).waitFor();
    await ui.page.locator('table, .figures, ul.admins').first().waitFor();
    await assertFitsPhone(ui.page, path, name);
  }
});
