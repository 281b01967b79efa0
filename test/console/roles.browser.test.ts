// The Roles page in Chromium against the real server on this run's backend: the owner creates a custom
// role with two keys (audit.view and roles.manage; a stale session confirms it is them first), renames
// it, gives it to a member from the members page and is refused its deletion while it is in use (the
// page names what uses it); the member then sees the navigation their keys allow (Audit log, not API
// keys), the "why" view names the role that grants each key, and the editor disables the keys they do
// not hold. axe-core scans every state.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useTenantApp } from '../support/harness.ts';
import { assertAccessible, screenshot, skipWithoutChromium, useConsolePage } from './browser.ts';
import { ageSession } from '../identity/reauth-support.ts';
import { assertFitsPhone, confirmItIsYou, consoleToken, signInAs, signOut, waitUntil } from './session.ts';

const t = useTenantApp();
const ui = useConsolePage(() => t.ready);
const nav = () => ui.page.getByRole('navigation', { name: 'Console' });
const status = (text: string | RegExp) => ui.page.getByRole('status').filter({ hasText: text });

interface RoleOnServer {
  id: string;
  name: string;
  permissions: string[];
  memberCount: number;
}
async function roleOnServer(name: string): Promise<RoleOnServer | undefined> {
  const listed = await t.as(t.tenant.owner.token).get(`/v1/orgs/${t.tenant.orgId}/roles`);
  assert.equal(listed.status, 200);
  return listed.body.roles.find((role: RoleOnServer) => role.name === name);
}
async function memberRoleOnServer(memberId: string): Promise<string | undefined> {
  const listed = await t.as(t.tenant.owner.token).get(`/v1/orgs/${t.tenant.orgId}/members`);
  return listed.body.members.find((member: { id: string }) => member.id === memberId)?.role;
}

test('the owner reads the catalog by area and the built-in roles, which offer no edit', {
  skip: skipWithoutChromium,
}, async () => {
  await signInAs(ui.page, t.app.url, t.tenant.owner, '/roles');
  await ui.page.getByRole('heading', { name: 'Roles', level: 1 }).waitFor();
  for (const name of ['owner', 'admin', 'member']) {
    await ui.page.getByRole('heading', { name, level: 2, exact: true }).waitFor();
    assert.equal(await ui.page.getByRole('button', { name: `Edit ${name}` }).count(), 0, `${name} is read-only`);
  }
  const catalog = ui.page.getByRole('region', { name: 'Permission catalog' });
  for (const area of ['Members', 'Roles', 'API keys', 'Audit'])
    await catalog.getByRole('heading', { name: area, level: 3, exact: true }).waitFor();
  // The catalog's sensitive keys carry the mark, the others do not.
  const sensitiveMarks = await catalog.getByText('sensitive', { exact: true }).count();
  const served = await t.as(t.tenant.owner.token).get('/v1/permissions');
  const sensitive = served.body.permissions.filter((permission: { sensitive: boolean }) => permission.sensitive);
  assert.equal(sensitiveMarks, sensitive.length);
  // A built-in role's keys are listed as the API gives them.
  const member = ui.page
    .getByRole('listitem')
    .filter({ has: ui.page.getByRole('heading', { name: 'member', exact: true }) });
  await member.getByText(/keys of member/).click();
  const listed = await member.getByRole('list', { name: 'Keys of member' }).getByRole('listitem').allInnerTexts();
  assert.deepEqual(listed, (await roleOnServer('member'))!.permissions);
  await assertAccessible(ui.page, 'roles as the owner');
  await screenshot(ui.page, 'roles');
});

test('the owner creates a role with two keys, then renames it', { skip: skipWithoutChromium }, async () => {
  await ui.page.getByRole('button', { name: 'New role' }).click();
  const editor = ui.page.getByRole('form', { name: 'New role' });
  await editor.getByLabel('Role name').fill('Auditor');
  await editor
    .getByRole('group', { name: 'Audit', exact: true })
    .getByRole('checkbox', { name: /^audit\.view/ })
    .check();
  await editor.getByRole('checkbox', { name: /^roles\.manage/ }).check();
  assert.equal(await editor.getByRole('checkbox', { disabled: true }).count(), 0, 'the owner holds every key');
  await assertAccessible(ui.page, 'the role editor');
  await editor.getByLabel('Role name').focus();
  await screenshot(ui.page, 'roles-editor');
  // Creating a role is privileged: a stale session confirms first, and the same request then goes on.
  await ageSession(t.app, await consoleToken(ui.page));
  await editor.getByRole('button', { name: 'Create role' }).click();
  await ui.page.getByRole('dialog', { name: 'Confirm it is you' }).waitFor();
  assert.equal(await roleOnServer('Auditor'), undefined, 'nothing is created before the re-authentication');
  await confirmItIsYou(ui.page, t.tenant.owner.password);
  await status('Auditor is saved').waitFor();
  const created = await roleOnServer('Auditor');
  assert.deepEqual(created?.permissions, ['audit.view', 'roles.manage']);

  await ui.page.getByRole('button', { name: 'Edit Auditor' }).click();
  const edit = ui.page.getByRole('form', { name: 'Edit Auditor' });
  // Opened above the list: focus goes to its first field.
  const nameField = edit.getByLabel('Role name');
  const nameId = await nameField.getAttribute('id');
  await waitUntil(
    async () => (await ui.page.evaluate<string | undefined>('document.activeElement?.id')) === nameId,
    'the editor takes the focus',
  );
  assert.equal(await edit.getByRole('checkbox', { name: /^audit\.view/ }).isChecked(), true, 'its keys are ticked');
  await nameField.fill('Log reader');
  await edit.getByRole('button', { name: 'Save role' }).click();
  await status('Log reader is saved').waitFor();
  const renamed = await roleOnServer('Log reader');
  assert.equal(renamed?.id, created!.id, 'the same role, renamed');
  assert.deepEqual(renamed.permissions, ['audit.view', 'roles.manage']);
});

test('the owner gives the role to a member from the members page; deleting it is then refused, naming the use', {
  skip: skipWithoutChromium,
}, async () => {
  await nav().getByRole('link', { name: 'Members' }).click();
  const picker = ui.page.getByRole('combobox', { name: `Role of ${t.tenant.member.email}` });
  await waitUntil(
    async () => (await picker.getByRole('option').allInnerTexts()).includes('Log reader'),
    'the custom role is offered',
  );
  await picker.selectOption({ label: 'Log reader' });
  await ui.page.getByRole('button', { name: `Save the role of ${t.tenant.member.email}` }).click();
  await status(`${t.tenant.member.email} now has the role Log reader.`).waitFor();
  const role = await roleOnServer('Log reader');
  assert.equal(await memberRoleOnServer(t.tenant.member.memberId), role!.id);
  // The other pickers offer it by name too.
  await nav().getByRole('link', { name: 'API keys' }).click();
  await waitUntil(
    async () => (await ui.page.getByLabel('Key role').getByRole('option').allInnerTexts()).includes('Log reader'),
    'the key role picker offers the custom role',
  );

  await nav().getByRole('link', { name: 'Roles' }).click();
  const card = ui.page.getByRole('listitem').filter({ has: ui.page.getByRole('heading', { name: 'Log reader' }) });
  await card.getByText('Custom · 1 member', { exact: true }).waitFor();
  await ui.page.getByRole('button', { name: 'Delete Log reader' }).click();
  await ui.page
    .getByRole('dialog', { name: 'Delete Log reader?' })
    .getByRole('button', { name: 'Delete role' })
    .click();
  await ui.page.getByRole('alert').filter({ hasText: 'It is still given to 1 member.' }).waitFor();
  assert.ok(await roleOnServer('Log reader'), 'the role stays');

  // "Why": the owner picks the member and sees each key with the role that grants it.
  await ui.page
    .getByLabel('Member', { exact: true })
    .selectOption({ label: `${t.tenant.member.name} (${t.tenant.member.email})` });
  const why = ui.page.getByRole('table', { name: `Keys of ${t.tenant.member.email} and where each comes from` });
  await why.getByRole('row').filter({ hasText: 'audit.view' }).getByText('role Log reader').waitFor();
  assert.equal(await why.getByRole('row').count(), 3, 'a heading row and the two keys');
  await assertAccessible(ui.page, 'roles with the why view');
  await ui.page.getByRole('heading', { name: 'Why can this person do this?' }).scrollIntoViewIfNeeded();
  await screenshot(ui.page, 'roles-why');
});

test('the member sees what their keys allow, why, and the keys they cannot give disabled; at 390 wide too', {
  skip: skipWithoutChromium,
}, async () => {
  await signOut(ui.page);
  await signInAs(ui.page, t.app.url, t.tenant.member, '/members');
  await ui.page.getByText('your role: Log reader').waitFor();
  await waitUntil(
    async () => (await nav().getByRole('link', { name: 'Audit log' }).count()) === 1,
    'Audit log is listed',
  );
  assert.deepEqual(await nav().getByRole('link').allInnerTexts(), [
    'Members',
    'Teams',
    'Roles',
    'Install links',
    'MCP connections',
    'Audit log',
    'Memory',
    'Organization settings',
  ]);

  await nav().getByRole('link', { name: 'Roles' }).click();
  const why = ui.page.getByRole('table', { name: `Keys of ${t.tenant.member.email} and where each comes from` });
  await why.waitFor();
  const rows = (await why.getByRole('row').allInnerTexts()).slice(1).sort();
  assert.equal(rows.length, 2);
  assert.match(rows[0]!, /^audit\.view\s.*role Log reader$/);
  assert.match(rows[1]!, /^roles\.manage\s.*role Log reader$/);

  await ui.page.getByRole('button', { name: 'New role' }).click();
  const editor = ui.page.getByRole('form', { name: 'New role' });
  assert.equal(await editor.getByRole('checkbox', { name: /^audit\.view/ }).isDisabled(), false);
  assert.equal(await editor.getByRole('checkbox', { name: /^api_keys\.manage/ }).isDisabled(), true);
  await editor.getByText('Keys you do not hold yourself are disabled').waitFor();
  const disabled = await editor.getByRole('checkbox', { disabled: true }).count();
  const catalog = (await t.as(t.tenant.owner.token).get('/v1/permissions')).body.permissions.length;
  assert.equal(disabled, catalog - 2, 'every key but the two they hold');
  await assertAccessible(ui.page, 'the role editor as the member');

  await ui.page.setViewportSize({ width: 390, height: 844 });
  await assertFitsPhone(ui.page, 'the role editor', 'roles-editor-phone');
  await editor.getByRole('button', { name: 'Cancel' }).click();
  await why.scrollIntoViewIfNeeded();
  await assertFitsPhone(ui.page, 'roles as the member', 'roles-phone');
  await ui.page.setViewportSize({ width: 1280, height: 800 });
});
