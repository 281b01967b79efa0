// The console's audit log page, clicked through in Chromium against the real server on this run's
// backend: the events of real changes, filters, paging, both exports, chain verification (also of a
// chain changed behind the API's back), and a member's refusal; axe-core scans each state.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { useTenantApp } from '../support/harness.ts';
import { assertAccessible, screenshot, skipWithoutChromium, useConsolePage } from './browser.ts';
import { horizontalOverflow, signInAs, signOut, waitUntil } from './session.ts';

const t = useTenantApp();
const ui = useConsolePage(() => t.ready, { acceptDownloads: true });

const events = () => ui.page.getByRole('table', { name: 'Audit events, newest first' });
// One row per event; each has a hidden details row after it, which is not counted.
const eventRows = () => ui.page.locator('table.audit tbody tr:not(.event-details)');

test('an owner sees the events of real changes, newest first, in words, with the raw values on hover and in the details', {
  skip: skipWithoutChromium,
}, async () => {
  const { owner, orgId } = t.tenant;
  for (const name of ['Design', 'Research', 'Support']) {
    const created = await t.as(owner.token).post(`/v1/orgs/${orgId}/teams`, { name });
    assert.equal(created.status, 201, created.text);
  }
  const supportId = (await t.as(owner.token).get(`/v1/orgs/${orgId}/teams`)).body.teams.find(
    (team: { name: string }) => team.name === 'Support',
  ).id;
  // A role change names the member as they were then; an install link's events record no name: its id is shown.
  const role = await t
    .as(owner.token)
    .patch(`/v1/orgs/${orgId}/members/${t.tenant.member.memberId}`, { role: 'admin' });
  assert.equal(role.status, 200, role.text);
  const back = await t
    .as(owner.token)
    .patch(`/v1/orgs/${orgId}/members/${t.tenant.member.memberId}`, { role: 'member' });
  assert.equal(back.status, 200, back.text);
  const link = await t.as(owner.token).post(`/v1/orgs/${orgId}/install-links`, {});
  assert.equal(link.status, 201, link.text);
  await signInAs(ui.page, t.app.url, owner, '/audit-log');
  await ui.page.getByRole('heading', { name: 'Audit log' }).waitFor();
  const rows = events().getByRole('row');
  const teamRows = rows.filter({ hasText: 'created the team' });
  await teamRows.first().waitFor();
  // Newest first: the last team created is the first team row.
  const newest = teamRows.first();
  assert.match(await newest.innerText(), /Support/);
  // Words and names where the row used to show identifiers; the identifiers are on hover.
  const action = newest.locator('[data-action]');
  assert.equal(await action.innerText(), 'created the team');
  assert.equal(await action.getAttribute('title'), 'team.created');
  assert.equal(await newest.getByText('Support', { exact: true }).getAttribute('title'), `team ${supportId}`);
  assert.equal(
    await newest.getByText(/^Owner Person/).getAttribute('title'),
    `user ${owner.userId}`,
    "the actor's id on hover",
  );
  const roleRow = rows.filter({ hasText: 'changed the role of' }).first();
  assert.ok((await roleRow.innerText()).includes(t.tenant.member.email), 'the member as they were then');
  const linkRow = rows.filter({ hasText: 'created an install link' }).first();
  assert.match(await linkRow.innerText(), /install link inl_/, 'an event without a recorded name shows the id');

  const toggle = rows
    .filter({ hasText: 'Support' })
    .first()
    .getByRole('button', { name: /^Details of team\.created/ });
  await toggle.click();
  assert.equal(await toggle.getAttribute('aria-expanded'), 'true');
  const details = ui.page.locator(`#${await toggle.getAttribute('aria-controls')}`);
  const shown = await details.innerText();
  assert.match(shown, /"name": "Support"/);
  assert.match(shown, /team\.created/, 'the action as recorded');
  assert.ok(shown.includes(supportId), "the target's id");
  const overflow = await horizontalOverflow(ui.page);
  assert.ok(overflow <= 0, `the page scrolls sideways by ${overflow}px at 1280 wide`);
  await assertAccessible(ui.page, 'audit log');
  await screenshot(ui.page, 'audit-log');
});

test('filters narrow the list and say so when nothing matches; clearing brings every event back', {
  skip: skipWithoutChromium,
}, async () => {
  await ui.page.getByLabel('Action or prefix').fill('team.');
  await ui.page.getByRole('button', { name: 'Apply filters' }).click();
  const rows = events().getByRole('row');
  // A header row and the three team events.
  await waitUntil(async () => (await eventRows().count()) === 3, 'the three team events are listed');
  for (const text of await rows.allInnerTexts())
    if (!text.startsWith('When') && text.trim()) assert.match(text, /created the team/);

  await ui.page.getByLabel('Outcome').selectOption('denied');
  await ui.page.getByRole('button', { name: 'Apply filters' }).click();
  await ui.page.getByText('No event matches these filters').waitFor();
  await assertAccessible(ui.page, 'audit log, nothing matches');

  await ui.page.getByRole('button', { name: 'Clear' }).click();
  await events().waitFor();
  assert.equal(await ui.page.getByLabel('Action or prefix').inputValue(), '');
});

test('a filter the API refuses is shown beside its field, and the list stays', {
  skip: skipWithoutChromium,
}, async () => {
  const actor = ui.page.getByLabel('Actor (id or e-mail)');
  await actor.fill('x'.repeat(600));
  await ui.page.getByRole('button', { name: 'Apply filters' }).click();
  await waitUntil(
    async () => (await actor.getAttribute('aria-invalid')) === 'true',
    'the actor field is marked invalid',
  );
  assert.match(await ui.page.locator('#field-actor-error').innerText(), /\S/);
  assert.ok((await events().getByRole('row').count()) > 1, 'the events shown before stay');
  await actor.fill('');
});

test('older events load page by page', { skip: skipWithoutChromium }, async () => {
  const { owner, orgId } = t.tenant;
  for (let i = 0; i < 50; i++) await t.as(owner.token).post(`/v1/orgs/${orgId}/teams`, { name: `Paged ${i}` });
  await ui.page.getByRole('button', { name: 'Apply filters' }).click();
  await waitUntil(async () => (await eventRows().count()) === 50, 'the first page of 50 events is listed');
  await ui.page.getByRole('button', { name: 'Load older events' }).click();
  await waitUntil(async () => (await eventRows().count()) > 50, 'older events are appended');
  // Each event's id (in its hidden details row, so read as text content).
  const ids = await ui.page
    .locator('table.audit tbody tr.event-details')
    .evaluateAll((rows) => rows.map((row) => row.querySelector('dd')?.textContent));
  assert.equal(new Set(ids).size, ids.length, 'no event twice');
});

test('exports download the filtered range as CSV and NDJSON', { skip: skipWithoutChromium }, async () => {
  for (const [button, format] of [
    ['Export CSV', 'csv'],
    ['Export NDJSON', 'ndjson'],
  ] as const) {
    const [download] = await Promise.all([
      ui.page.waitForEvent('download'),
      ui.page.getByRole('button', { name: button }).click(),
    ]);
    assert.equal(download.suggestedFilename(), `audit-events.${format}`);
    const text = await readFile((await download.path())!, 'utf8');
    assert.match(text, /team\.created/);
    if (format === 'csv') assert.match(text, /^id,occurredAt,organizationId,action,/);
    else assert.equal(JSON.parse(text.split('\n')[0]!).organizationId, t.tenant.orgId);
  }
});

test("verification reports an intact chain, then the event changed behind the API's back", {
  skip: skipWithoutChromium,
}, async () => {
  await ui.page.getByRole('button', { name: 'Verify the chain' }).click();
  await ui.page.getByText(/^The chain verifies: \d+ events/).waitFor();

  const { rows } = await t.app.db.query<{ id: string }>(
    `SELECT id FROM audit_events WHERE organization_id = $1 AND action = 'team.created' ORDER BY seq LIMIT 1`,
    [t.tenant.orgId],
  );
  await t.app.db.query(`UPDATE audit_events SET target_name = 'Forged' WHERE id = $1`, [rows[0]!.id]);
  await ui.page.getByRole('button', { name: 'Verify the chain' }).click();
  await ui.page.getByText(`The chain is broken at event ${rows[0]!.id}`).waitFor();
  await assertAccessible(ui.page, 'audit log, broken chain');
});

test('a member is told the log is for owners and admins, at 390×844 too', { skip: skipWithoutChromium }, async () => {
  await signOut(ui.page);
  await signInAs(ui.page, t.app.url, t.tenant.member, '/audit-log');
  await ui.page.getByRole('heading', { name: 'Audit log' }).waitFor();
  await ui.page.getByRole('alert').filter({ hasText: 'Only owners and admins can read the audit log.' }).waitFor();
  assert.equal(await events().count(), 0);
  await ui.page.setViewportSize({ width: 390, height: 844 });
  const overflow = await horizontalOverflow(ui.page);
  assert.ok(overflow <= 0, `the page scrolls sideways by ${overflow}px at 390 wide`);
  await assertAccessible(ui.page, 'audit log as a member, phone');
});
