// The teams page in Chromium against the real server on this run's backend: create (the API's message
// beside the name field), add and remove members (after a confirmation; on a stale session, after the
// re-authentication prompt), and a member's read-only view.
// axe-core scans every state it reaches.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useTenantApp } from '../support/harness.ts';
import { assertAccessible, screenshot, skipWithoutChromium, useConsolePage } from './browser.ts';
import { ageSession } from '../identity/reauth-support.ts';
import { confirmItIsYou, consoleToken, horizontalOverflow, signInAs, waitUntil, signOut } from './session.ts';

const t = useTenantApp();
const ui = useConsolePage(() => t.ready);

async function teamOnServer(name: string): Promise<{ id: string; memberIds: string[] } | undefined> {
  const listed = await t.as(t.tenant.owner.token).get(`/v1/orgs/${t.tenant.orgId}/teams?limit=100`);
  return listed.body.teams.find((team: { name: string }) => team.name === name);
}

test('with no team yet the page says what to do; a blank name is refused beside the field', {
  skip: skipWithoutChromium,
}, async () => {
  await signInAs(ui.page, t.app.url, t.tenant.admin, '/teams');
  await ui.page.getByRole('heading', { name: 'Teams', level: 1 }).waitFor();
  await ui.page.getByText(/No teams yet\. Create one above/).waitFor();
  await assertAccessible(ui.page, 'teams, empty');
  const name = ui.page.getByLabel('Team name');
  await name.fill('   ');
  await ui.page.getByRole('button', { name: 'Create team' }).click();
  await waitUntil(async () => (await name.getAttribute('aria-invalid')) === 'true', 'the blank name is marked invalid');
  assert.match(await ui.page.locator(`#${await name.getAttribute('aria-describedby')}`).innerText(), /\S/);
});

test('a team is created (no prompt, on a stale session too), a member added (the prompt first), then removed after a confirmation', {
  skip: skipWithoutChromium,
}, async () => {
  // Creating an empty team is not privileged; changing who is in one is.
  await ageSession(t.app, await consoleToken(ui.page));
  await ui.page.getByLabel('Team name').fill('Platform');
  await ui.page.keyboard.press('Enter');
  const card = ui.page.getByRole('region', { name: 'Platform', exact: true });
  await card.waitFor();
  await card.getByText('No members yet. Add one below.').waitFor();
  assert.ok(await teamOnServer('Platform'));

  // A second team with the same name: the API's conflict message is shown.
  await ui.page.getByLabel('Team name').fill('Platform');
  await ui.page.getByRole('button', { name: 'Create team' }).click();
  await ui.page.getByRole('alert').filter({ hasText: /\S/ }).waitFor();

  await card
    .getByLabel('Add to Platform')
    .selectOption({ label: `${t.tenant.member.name} (${t.tenant.member.email})` });
  await card.getByRole('button', { name: 'Add the chosen member to Platform' }).click();
  await ui.page.getByRole('dialog', { name: 'Confirm it is you' }).waitFor();
  assert.deepEqual((await teamOnServer('Platform'))!.memberIds, [], 'nobody is added before the re-authentication');
  await confirmItIsYou(ui.page, t.tenant.admin.password);
  const list = card.getByRole('list', { name: 'Members of Platform' });
  await list.getByText(t.tenant.member.email).waitFor();
  assert.deepEqual((await teamOnServer('Platform'))!.memberIds, [t.tenant.member.memberId]);
  await card.getByLabel('Add to Platform').selectOption({ label: `${t.tenant.owner.name} (${t.tenant.owner.email})` });
  await card.getByRole('button', { name: 'Add the chosen member to Platform' }).click();
  await list.getByText(t.tenant.owner.email).waitFor();
  await assertAccessible(ui.page, 'teams with members');
  await screenshot(ui.page, 'teams');

  const remove = card.getByRole('button', { name: `Remove ${t.tenant.member.email} from Platform` });
  await remove.click();
  const dialog = ui.page.getByRole('dialog', { name: `Remove ${t.tenant.member.name} from Platform?` });
  await dialog.waitFor();
  await assertAccessible(ui.page, 'remove from team confirmation');
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await dialog.waitFor({ state: 'hidden' });
  assert.ok(
    (await teamOnServer('Platform'))!.memberIds.includes(t.tenant.member.memberId),
    'cancel keeps the member in the team',
  );
  await remove.click();
  await dialog.getByRole('button', { name: 'Remove from team' }).click();
  await list.getByText(t.tenant.member.email).waitFor({ state: 'detached' });
  assert.deepEqual((await teamOnServer('Platform'))!.memberIds, [t.tenant.owner.memberId]);
});

test('the page works by keyboard and fits 390×844', { skip: skipWithoutChromium }, async () => {
  await ui.page.setViewportSize({ width: 390, height: 844 });
  // The refused duplicate is still in the field, as typed: the person corrects it.
  await ui.page.getByLabel('Team name').fill('');
  await ui.page.getByLabel('Team name').focus();
  await ui.page.keyboard.type('Design');
  await ui.page.keyboard.press('Enter');
  await ui.page.getByRole('region', { name: 'Design', exact: true }).waitFor();
  assert.ok((await horizontalOverflow(ui.page)) <= 0, 'no sideways scrolling at 390 wide');
  await assertAccessible(ui.page, 'teams at 390×844');
  await screenshot(ui.page, 'teams-phone');
  await ui.page.setViewportSize({ width: 1280, height: 800 });
});

test('a member sees the teams and who is in them, and no way to change them', {
  skip: skipWithoutChromium,
}, async () => {
  await signOut(ui.page);
  await signInAs(ui.page, t.app.url, t.tenant.member, '/teams');
  const card = ui.page.getByRole('region', { name: 'Platform', exact: true });
  await card.getByRole('list', { name: 'Members of Platform' }).getByText(t.tenant.owner.email).waitFor();
  assert.equal(await ui.page.getByLabel('Team name').count(), 0);
  assert.equal(await ui.page.getByRole('button', { name: /^(Remove|Add)/ }).count(), 0);
  await assertAccessible(ui.page, 'teams as a member');
});
