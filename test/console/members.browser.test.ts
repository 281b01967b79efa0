// The members page in Chromium against the real server on this run's backend: role changes (a stale
// session is asked for its password by the re-authentication prompt and the change resumes), removal
// and ownership transfer after a confirmation (each privileged too: a stale session walks through the
// same prompt), and a member who sees the list only. axe-core scans
// every state it reaches.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useTenantApp } from '../support/harness.ts';
import { addMember, signUp, type TestUser } from '../support/fixtures.ts';
import { ageSession } from '../identity/reauth-support.ts';
import { assertAccessible, screenshot, skipWithoutChromium, useConsolePage } from './browser.ts';
import { confirmItIsYou, consoleToken, horizontalOverflow, signInAs, waitUntil, signOut } from './session.ts';

const t = useTenantApp();
let leaving: TestUser;
const ui = useConsolePage(async () => {
  await t.ready;
  leaving = await signUp(t.app.url, 'leaving');
  await addMember(t.app.url, t.tenant.owner, t.tenant.orgId, leaving, 'member');
});

const table = () => ui.page.getByRole('table', { name: 'Members of this organization' });
async function roleOnServer(memberId: string): Promise<string | undefined> {
  const listed = await t.as(t.tenant.owner.token).get(`/v1/orgs/${t.tenant.orgId}/members`);
  return listed.body.members.find((member: { id: string }) => member.id === memberId)?.role;
}

test('the owner is offered role changes, removal and transfer on every member but the owner', {
  skip: skipWithoutChromium,
}, async () => {
  await signInAs(ui.page, t.app.url, t.tenant.owner);
  await table().getByRole('cell', { name: t.tenant.member.email, exact: true }).waitFor();
  for (const person of [t.tenant.admin, t.tenant.member, leaving]) {
    await ui.page.getByRole('combobox', { name: `Role of ${person.email}` }).waitFor();
    await ui.page.getByRole('button', { name: `Transfer ownership to ${person.email}` }).waitFor();
    await ui.page.getByRole('button', { name: `Remove ${person.email}` }).waitFor();
  }
  assert.equal(await ui.page.getByRole('combobox', { name: `Role of ${t.tenant.owner.email}` }).count(), 0);
  assert.equal(await ui.page.getByRole('button', { name: `Remove ${t.tenant.owner.email}` }).count(), 0);
  await assertAccessible(ui.page, 'members as the owner');
  await screenshot(ui.page, 'members-manage');
});

test('a role change on a stale session asks for the password, refuses a wrong one, then resumes the change', {
  skip: skipWithoutChromium,
}, async () => {
  await ageSession(t.app, await consoleToken(ui.page));
  await ui.page.getByRole('combobox', { name: `Role of ${t.tenant.member.email}` }).selectOption('admin');
  await ui.page.getByRole('button', { name: `Save the role of ${t.tenant.member.email}` }).click();

  const prompt = ui.page.getByRole('dialog', { name: 'Confirm it is you' });
  await prompt.waitFor();
  assert.equal(await roleOnServer(t.tenant.member.memberId), 'member', 'nothing changes before the re-authentication');
  const password = prompt.getByLabel('Your password');
  await password.fill('not-the-password');
  await prompt.getByRole('button', { name: 'Confirm and continue' }).click();
  await waitUntil(
    async () =>
      (await password.getAttribute('aria-invalid')) === 'true' || (await prompt.getByRole('alert').count()) > 0,
    'the wrong password is refused',
  );
  assert.ok(await prompt.isVisible(), 'the prompt stays open after a wrong password');
  await assertAccessible(ui.page, 're-authentication prompt');
  await screenshot(ui.page, 'reauth');

  await password.fill(t.tenant.owner.password);
  await prompt.getByRole('button', { name: 'Confirm and continue' }).click();
  await prompt.waitFor({ state: 'detached' });
  await ui.page
    .getByRole('status')
    .filter({ hasText: `${t.tenant.member.email} is now an admin.` })
    .waitFor();
  assert.equal(
    await roleOnServer(t.tenant.member.memberId),
    'admin',
    'the same request was re-sent after the re-authentication',
  );
  const me = await t.as(await consoleToken(ui.page)).get('/v1/me');
  assert.equal(me.status, 200, 'the console keeps its session');

  // Fresh now: the next change goes straight through, without a prompt.
  await ui.page.getByRole('combobox', { name: `Role of ${t.tenant.member.email}` }).selectOption('member');
  await ui.page.getByRole('button', { name: `Save the role of ${t.tenant.member.email}` }).click();
  await ui.page
    .getByRole('status')
    .filter({ hasText: `${t.tenant.member.email} is now a member.` })
    .waitFor();
  assert.equal(await ui.page.getByRole('dialog', { name: 'Confirm it is you' }).count(), 0);
  assert.equal(await roleOnServer(t.tenant.member.memberId), 'member');
});

test('cancelling the prompt leaves the role as it was and says why', { skip: skipWithoutChromium }, async () => {
  await ageSession(t.app, await consoleToken(ui.page));
  await ui.page.getByRole('combobox', { name: `Role of ${t.tenant.member.email}` }).selectOption('admin');
  await ui.page.getByRole('button', { name: `Save the role of ${t.tenant.member.email}` }).click();
  const prompt = ui.page.getByRole('dialog', { name: 'Confirm it is you' });
  await prompt.waitFor();
  await ui.page.keyboard.press('Escape');
  await prompt.waitFor({ state: 'detached' });
  await ui.page.getByRole('alert').filter({ hasText: /\S/ }).waitFor();
  assert.equal(await roleOnServer(t.tenant.member.memberId), 'member');
});

test('removing a member asks first; cancel keeps them, confirming on a stale session asks for the password, then removes them', {
  skip: skipWithoutChromium,
}, async () => {
  await ui.page.reload();
  // Stale since the cancelled prompt above: removing another member is privileged too.
  await ageSession(t.app, await consoleToken(ui.page));
  const remove = ui.page.getByRole('button', { name: `Remove ${leaving.email}` });
  await remove.click();
  const dialog = ui.page.getByRole('dialog', { name: `Remove ${leaving.name}?` });
  await dialog.waitFor();
  await assertAccessible(ui.page, 'remove confirmation');
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await dialog.waitFor({ state: 'hidden' });
  assert.equal(await roleOnServer(leaving.memberId), 'member', 'cancel keeps the member');

  await remove.click();
  await dialog.getByRole('button', { name: 'Remove member' }).click();
  await ui.page.getByRole('dialog', { name: 'Confirm it is you' }).waitFor();
  assert.equal(await roleOnServer(leaving.memberId), 'member', 'nothing changes before the re-authentication');
  await confirmItIsYou(ui.page, t.tenant.owner.password);
  await table().getByRole('cell', { name: leaving.email, exact: true }).waitFor({ state: 'detached' });
  assert.equal(await roleOnServer(leaving.memberId), undefined, 'removed on the server');
});

test('transferring ownership (stale session: prompt, then resumed) makes the owner an admin and withdraws the transfer', {
  skip: skipWithoutChromium,
}, async () => {
  await ageSession(t.app, await consoleToken(ui.page));
  await ui.page.getByRole('button', { name: `Transfer ownership to ${t.tenant.admin.email}` }).click();
  const dialog = ui.page.getByRole('dialog', { name: 'Transfer ownership?' });
  await dialog.waitFor();
  await dialog.getByRole('button', { name: 'Transfer ownership' }).click();
  const prompt = ui.page.getByRole('dialog', { name: 'Confirm it is you' });
  await prompt.waitFor();
  await prompt.getByLabel('Your password').fill(t.tenant.owner.password);
  await ui.page.keyboard.press('Enter');
  await ui.page
    .getByRole('status')
    .filter({ hasText: /is now the owner/ })
    .waitFor();
  assert.equal(await roleOnServer(t.tenant.admin.memberId), 'owner');
  assert.equal(await roleOnServer(t.tenant.owner.memberId), 'admin');
  // An admin now: role changes stay, transfers go.
  await waitUntil(
    async () => (await ui.page.getByRole('button', { name: /^Transfer ownership to / }).count()) === 0,
    'the transfer buttons go',
  );
  await ui.page.getByRole('combobox', { name: `Role of ${t.tenant.member.email}` }).waitFor();
  assert.equal(
    await ui.page.getByRole('combobox', { name: `Role of ${t.tenant.admin.email}` }).count(),
    0,
    "the new owner's role is fixed",
  );
});

test('a member sees the list only, at 1280×800 and 390×844', { skip: skipWithoutChromium }, async () => {
  await signOut(ui.page);
  await signInAs(ui.page, t.app.url, t.tenant.member);
  await table().getByRole('cell', { name: t.tenant.admin.email, exact: true }).waitFor();
  assert.equal(await ui.page.getByRole('combobox', { name: /^Role of / }).count(), 0);
  assert.equal(await ui.page.getByRole('button', { name: /^(Remove|Transfer ownership) / }).count(), 0);
  await assertAccessible(ui.page, 'members as a member');
  // Stacked at 390 wide, the rows lose their column headings: each cell names its column instead.
  const emailLabel = () =>
    ui.page.evaluate<string>(
      `getComputedStyle(document.querySelector('table.members td[data-label="Email"]'), '::before').content`,
    );
  assert.equal(await emailLabel(), 'none', 'beside a column heading a cell names nothing');
  await ui.page.setViewportSize({ width: 390, height: 844 });
  assert.ok((await horizontalOverflow(ui.page)) <= 0, 'no sideways scrolling at 390 wide');
  assert.equal(await emailLabel(), '"Email: "');
  await ui.page.setViewportSize({ width: 1280, height: 800 });
});

test("the owner's actions work by keyboard and fit 390×844", { skip: skipWithoutChromium }, async () => {
  await signOut(ui.page);
  await signInAs(ui.page, t.app.url, t.tenant.admin);
  await ui.page.setViewportSize({ width: 390, height: 844 });
  const remove = ui.page.getByRole('button', { name: `Remove ${t.tenant.member.email}` });
  await remove.focus();
  await ui.page.keyboard.press('Enter');
  const dialog = ui.page.getByRole('dialog', { name: `Remove ${t.tenant.member.name}?` });
  await dialog.waitFor();
  await ui.page.keyboard.press('Escape');
  await dialog.waitFor({ state: 'hidden' });
  assert.ok((await horizontalOverflow(ui.page)) <= 0, 'no sideways scrolling at 390 wide');
  await assertAccessible(ui.page, 'members as the owner at 390×844');
  await screenshot(ui.page, 'members-manage-phone');
  await ui.page.setViewportSize({ width: 1280, height: 800 });
});
