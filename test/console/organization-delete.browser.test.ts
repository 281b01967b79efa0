// Deleting an organization in the console: only its owner is offered it, on the settings page, and only
// once they typed its name; a stale session confirms first; the console then leaves the organization
// behind (picker, pages) without a reload.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useTenantApp } from '../support/harness.ts';
import { addMember, createOrganization, signUp, type TestUser } from '../support/fixtures.ts';
import { ageSession } from '../identity/reauth-support.ts';
import { assertAccessible, screenshot, skipWithoutChromium, useConsolePage } from './browser.ts';
import { assertFitsPhone, confirmItIsYou, consoleToken, signInAs, signOut, waitUntil } from './session.ts';

const t = useTenantApp();
let founder: TestUser;
let helper: TestUser;
let doomedId: string;
const ui = useConsolePage(async () => {
  await t.ready;
  founder = await signUp(t.app.url, 'founder');
  helper = await signUp(t.app.url, 'helper');
  await createOrganization(t.app.url, founder, 'Keepco');
  doomedId = await createOrganization(t.app.url, founder, 'Doomed Co');
  await addMember(t.app.url, founder, doomedId, helper, 'admin');
});

const picker = () => ui.page.getByRole('combobox', { name: 'Organization' });
const options = () => picker().locator('option:not([disabled])').allInnerTexts();
const deleteButton = () => ui.page.getByRole('button', { name: 'Delete organization' });

test('an admin is not offered to delete', { skip: skipWithoutChromium }, async () => {
  await signInAs(ui.page, t.app.url, helper, '/settings');
  await ui.page.getByRole('heading', { name: 'Organization settings' }).waitFor();
  await ui.page.getByRole('button', { name: 'Leave organization' }).waitFor();
  assert.equal(await deleteButton().count(), 0);
  await signOut(ui.page);
});

test('the owner deletes after typing the name (a stale session confirms first); the console moves on', {
  skip: skipWithoutChromium,
}, async () => {
  await signInAs(ui.page, t.app.url, founder, '/settings');
  await picker().selectOption({ label: 'Doomed Co' });
  await ui.page.getByRole('heading', { name: 'Delete organization' }).waitFor();
  const confirm = ui.page.getByLabel('Type Doomed Co to confirm');
  assert.equal(await deleteButton().isDisabled(), true, 'nothing typed yet');
  await confirm.fill('Doomed');
  assert.equal(await deleteButton().isDisabled(), true, 'not the whole name');
  await confirm.fill('doomed co');
  assert.equal(await deleteButton().isDisabled(), true, 'the name as written');
  await confirm.fill('Doomed Co');
  assert.equal(await deleteButton().isDisabled(), false);
  await assertAccessible(ui.page, 'settings with the delete section');
  await screenshot(ui.page, 'organization-delete');
  await ui.page.setViewportSize({ width: 390, height: 844 });
  await deleteButton().scrollIntoViewIfNeeded();
  await assertFitsPhone(ui.page, 'delete section', 'organization-delete-phone');
  await ui.page.setViewportSize({ width: 1280, height: 800 });

  await ageSession(t.app, await consoleToken(ui.page));
  await deleteButton().click();
  await confirmItIsYou(ui.page, founder.password);
  await waitUntil(async () => !(await options()).includes('Doomed Co'), 'the picker forgets the deleted organization');
  assert.deepEqual(await options(), ['Keepco']);
  const gone = await t.as(helper.token).get(`/v1/orgs/${doomedId}/members`);
  assert.equal(gone.status, 404, gone.text);
  const kept = await t.as(founder.token).get('/v1/me');
  assert.deepEqual(
    kept.body.organizations.map((o: { name: string }) => o.name),
    ['Keepco'],
  );
});
