// Organizations in the console: anyone signed in creates one and switches between theirs; the picker
// follows what the API says without a reload; the settings page renames (owners and admins), lets a
// member leave, and tells the owner why they cannot; the navigation lists only what a role may use.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useTenantApp } from '../support/harness.ts';
import { addMember, signUp, type TestUser } from '../support/fixtures.ts';
import { ageSession } from '../identity/reauth-support.ts';
import { assertAccessible, screenshot, skipWithoutChromium, useConsolePage } from './browser.ts';
import {
  assertFitsPhone,
  cancelThenConfirm,
  confirmItIsYou,
  consoleToken,
  signInAs,
  signOut,
  waitUntil,
} from './session.ts';

const t = useTenantApp();
let newcomer: TestUser;
let member: TestUser;
const ui = useConsolePage(async () => {
  await t.ready;
  newcomer = await signUp(t.app.url, 'newcomer');
  member = await signUp(t.app.url, 'plain');
  await addMember(t.app.url, t.tenant.owner, t.tenant.orgId, member, 'member');
});

const picker = () => ui.page.getByRole('combobox', { name: 'Organization' });
const chosen = () => picker().locator('option:checked').innerText();
const options = () => picker().locator('option:not([disabled])').allInnerTexts();
const nav = () => ui.page.getByRole('navigation', { name: 'Console' });
// What the browser does when the person comes back to the tab.
const returnToTab = () => ui.page.evaluate("dispatchEvent(new Event('focus'))");

test('a person without an organization is offered to create one; it shows at once, active', {
  skip: skipWithoutChromium,
}, async () => {
  await signInAs(ui.page, t.app.url, newcomer, '/');
  await ui.page.getByRole('heading', { name: 'Create your first organization' }).waitFor();
  await assertAccessible(ui.page, 'no organization yet');
  await screenshot(ui.page, 'organization-first');
  const name = ui.page.getByLabel('Organization name');
  await name.fill('   ');
  await ui.page.getByRole('button', { name: 'Create organization' }).click();
  await waitUntil(async () => (await name.getAttribute('aria-invalid')) === 'true', 'a blank name is refused');
  await name.fill('Newco');
  await ui.page.getByRole('button', { name: 'Create organization' }).click();
  await ui.page.getByRole('heading', { name: 'Members' }).waitFor();
  assert.equal(await chosen(), 'Newco');
  assert.match(await ui.page.getByText(/^Plan:/).innerText(), /your role: owner/);
});

test('another organization from the header link; the picker switches between them', {
  skip: skipWithoutChromium,
}, async () => {
  await ui.page.getByRole('link', { name: 'New organization' }).click();
  await ui.page.getByRole('heading', { name: 'New organization' }).waitFor();
  await assertAccessible(ui.page, 'new organization');
  await ui.page.getByLabel('Organization name').fill('Second co');
  await ui.page.getByRole('button', { name: 'Create organization' }).click();
  await ui.page.getByRole('heading', { name: 'Members' }).waitFor();
  await waitUntil(async () => (await chosen()) === 'Second co', 'the new one is active');
  assert.deepEqual(await options(), ['Newco', 'Second co']);
  await picker().selectOption({ label: 'Newco' });
  await waitUntil(async () => (await chosen()) === 'Newco', 'switched back');
  const me = await t.as(await consoleToken(ui.page)).get('/v1/me');
  assert.equal(me.body.organizations.find((o: { id: string }) => o.id === me.body.activeOrganizationId).name, 'Newco');
});

test('one created through the API elsewhere is listed when the person comes back to the tab, without a reload', {
  skip: skipWithoutChromium,
}, async () => {
  const created = await t.as(newcomer.token).post('/v1/orgs', { name: 'Made by curl' });
  assert.equal(created.status, 201, created.text);
  await returnToTab();
  await waitUntil(async () => (await options()).includes('Made by curl'), 'the picker lists it');
  assert.equal(await chosen(), 'Newco', "the tab's own session stays where it was");
});

test('a person whose organizations were all made elsewhere chooses one instead of a blank picker', {
  skip: skipWithoutChromium,
}, async () => {
  await signOut(ui.page);
  const late = await signUp(t.app.url, 'late');
  await signInAs(ui.page, t.app.url, late, '/');
  await ui.page.getByRole('heading', { name: 'Create your first organization' }).waitFor();
  // Another session of theirs (curl, another tab) makes one: this session has no active organization.
  const created = await t.as(late.token).post('/v1/orgs', { name: 'Elsewhere' });
  assert.equal(created.status, 201, created.text);
  await returnToTab();
  await ui.page.getByRole('heading', { name: 'Choose an organization' }).waitFor();
  assert.equal(await chosen(), 'Choose…');
  await assertAccessible(ui.page, 'choose an organization');
  await screenshot(ui.page, 'organization-choose');
  await ui.page.getByRole('button', { name: 'Elsewhere' }).click();
  await ui.page.getByRole('heading', { name: 'Members' }).waitFor();
  assert.equal(await chosen(), 'Elsewhere');
  await signOut(ui.page);
});

test('the owner renames the organization (a stale session confirms first); the picker shows the new name', {
  skip: skipWithoutChromium,
}, async () => {
  await signInAs(ui.page, t.app.url, t.tenant.owner, '/settings');
  await ui.page.getByRole('heading', { name: 'Organization settings' }).waitFor();
  const before = await chosen();
  const name = ui.page.getByLabel('Organization name');
  assert.equal(await name.inputValue(), before);
  await name.fill('');
  await ui.page.getByRole('button', { name: 'Rename' }).click();
  await waitUntil(async () => (await name.getAttribute('aria-invalid')) === 'true', 'a blank name is refused');
  await ageSession(t.app, await consoleToken(ui.page));
  await name.fill('Acme Renamed');
  await ui.page.getByRole('button', { name: 'Rename' }).click();
  await confirmItIsYou(ui.page, t.tenant.owner.password);
  await ui.page.getByRole('status').filter({ hasText: 'Renamed to Acme Renamed.' }).waitFor();
  await waitUntil(async () => (await chosen()) === 'Acme Renamed', 'the picker shows the new name');
  const org = await t.as(t.tenant.member.token).get('/v1/org');
  assert.equal(org.body.organization.name, 'Acme Renamed');
  // The owner cannot leave, and is told why and what to do.
  await ui.page.getByText('The owner cannot leave').waitFor();
  assert.equal(await ui.page.getByRole('button', { name: 'Leave organization' }).count(), 0);
  await assertAccessible(ui.page, 'settings as the owner');
  await screenshot(ui.page, 'organization-settings');
});

test('a member sees only what a member may use, cannot rename, and leaves after a confirmation', {
  skip: skipWithoutChromium,
}, async () => {
  await signOut(ui.page);
  await signInAs(ui.page, t.app.url, member, '/');
  await ui.page.getByRole('heading', { name: 'Members' }).waitFor();
  const links = await nav().getByRole('link').allInnerTexts();
  assert.deepEqual(links, [
    'Members',
    'Teams',
    'Roles',
    'Install links',
    'MCP connections',
    'Memory',
    'Organization settings',
  ]);
  // What the API refuses a member is what the navigation leaves out.
  const token = await consoleToken(ui.page);
  for (const refused of [
    `/v1/orgs/${t.tenant.orgId}/api-keys`,
    `/v1/orgs/${t.tenant.orgId}/invitations`,
    `/v1/orgs/${t.tenant.orgId}/audit-events`,
    '/v1/messenger/connections',
  ])
    assert.equal((await t.as(token).get(refused)).status, 403, refused);

  await nav().getByRole('link', { name: 'Organization settings' }).click();
  await ui.page.getByRole('heading', { name: 'Organization settings' }).waitFor();
  await ui.page.getByText('Only owners and admins rename the organization.').waitFor();
  assert.equal(await ui.page.getByLabel('Organization name').count(), 0);
  await assertAccessible(ui.page, 'settings as a member');
  await ui.page.setViewportSize({ width: 390, height: 844 });
  await assertFitsPhone(ui.page, 'settings as a member', 'organization-settings-phone');
  await ui.page.setViewportSize({ width: 1280, height: 800 });

  const stillMember = async () => {
    const members = await t.as(t.tenant.owner.token).get(`/v1/orgs/${t.tenant.orgId}/members`);
    assert.ok(members.body.members.some((m: { id: string }) => m.id === member.memberId));
  };
  await cancelThenConfirm(
    ui.page,
    ui.page.getByRole('button', { name: 'Leave organization' }),
    'Leave Acme Renamed?',
    'Leave organization',
    stillMember,
  );
  await ui.page.getByRole('heading', { name: 'Create your first organization' }).waitFor();
  assert.equal(await picker().count(), 0, 'no organization left to pick');
  const members = await t.as(t.tenant.owner.token).get(`/v1/orgs/${t.tenant.orgId}/members`);
  assert.ok(!members.body.members.some((m: { id: string }) => m.id === member.memberId), 'the member left');
});

test('an admin sees the managers sections and renames too', { skip: skipWithoutChromium }, async () => {
  await signOut(ui.page);
  await signInAs(ui.page, t.app.url, t.tenant.admin, '/settings');
  await ui.page.getByRole('heading', { name: 'Organization settings' }).waitFor();
  for (const name of ['Invitations', 'API keys', 'SSO', 'SCIM', 'Audit stream', 'Audit log', 'Bots'])
    await nav().getByRole('link', { name }).waitFor();
  await ui.page.getByLabel('Organization name').fill('Acme by admin');
  await ui.page.getByRole('button', { name: 'Rename' }).click();
  await ui.page.getByRole('status').filter({ hasText: 'Renamed to Acme by admin.' }).waitFor();
  await waitUntil(async () => (await chosen()) === 'Acme by admin', 'the picker shows the new name');
  await ui.page.getByRole('button', { name: 'Leave organization' }).waitFor();
});
