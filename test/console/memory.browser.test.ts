// The memory page in Chromium against the real server on this run's backend, as a member (memory is
// everyone's own): the empty state, the API's messages beside their fields, add, search with the
// matching words marked, delete after a confirmation, 390×844, and another person who sees none of it.
// axe-core scans every state it reaches.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useTenantApp } from '../support/harness.ts';
import { assertAccessible, screenshot, skipWithoutChromium, useConsolePage } from './browser.ts';
import { assertFitsPhone, cancelThenConfirm, signInAs, signOut, waitUntil } from './session.ts';

const t = useTenantApp();
const ui = useConsolePage(() => t.ready);

async function contentsOnServer(token = t.tenant.member.token): Promise<string[]> {
  const listed = await t.as(token).get('/v1/memory?limit=100');
  assert.equal(listed.status, 200);
  return listed.body.memories.map((memory: { content: string }) => memory.content);
}

async function add(content: string, tags = '') {
  await ui.page.getByRole('textbox', { name: 'Memory', exact: true }).fill(content);
  await ui.page.getByRole('textbox', { name: /^Tags/ }).fill(tags);
  await ui.page.getByRole('button', { name: 'Add memory' }).click();
  await ui.page.getByRole('status').filter({ hasText: 'Memory added.' }).waitFor();
}

test('with no memory yet the page says what to do; a blank memory and a bad tag are refused beside their fields', {
  skip: skipWithoutChromium,
}, async () => {
  await signInAs(ui.page, t.app.url, t.tenant.member, '/memory');
  await ui.page.getByRole('heading', { name: 'Memory', level: 1 }).waitFor();
  await ui.page.getByText(/No memories yet\. Add one above/).waitFor();
  await assertAccessible(ui.page, 'memory, empty');
  await screenshot(ui.page, 'memory-empty');

  const content = ui.page.getByRole('textbox', { name: 'Memory', exact: true });
  await ui.page.getByRole('button', { name: 'Add memory' }).click();
  await waitUntil(
    async () => (await content.getAttribute('aria-invalid')) === 'true',
    'the blank memory is marked invalid',
  );
  assert.match(await ui.page.locator(`#${await content.getAttribute('aria-describedby')}`).innerText(), /\S/);

  await content.fill('Uses a very long tag');
  const tags = ui.page.getByRole('textbox', { name: /^Tags/ });
  await tags.fill(`ok, ${'x'.repeat(65)}`);
  await ui.page.getByRole('button', { name: 'Add memory' }).click();
  await waitUntil(async () => (await tags.getAttribute('aria-invalid')) === 'true', 'the long tag is marked invalid');
  assert.match(await ui.page.locator(`#${await tags.getAttribute('aria-describedby')}`).innerText(), /^Tag 2: /);
  assert.deepEqual(await contentsOnServer(), [], 'nothing was stored');
});

test('memories are added and listed newest first with their tags', { skip: skipWithoutChromium }, async () => {
  await add('The release freezes on Thursdays', 'process, release');
  await add('Prefers answers in French');
  await add(
    'Connected the billing service to the staging database\nIt took two tries because the firewall was closed',
    'infra',
  );
  const list = ui.page.getByRole('list', { name: 'Your memories, newest first' });
  await waitUntil(async () => (await list.locator(':scope > li').count()) === 3, 'three memories are listed');
  assert.match(await list.locator(':scope > li').first().innerText(), /^Connected the billing service/);
  await list.getByRole('list', { name: 'Tags' }).getByText('release', { exact: true }).waitFor();
  assert.deepEqual(await contentsOnServer(), [
    'Connected the billing service to the staging database\nIt took two tries because the firewall was closed',
    'Prefers answers in French',
    'The release freezes on Thursdays',
  ]);
  await assertAccessible(ui.page, 'memory list');
  await screenshot(ui.page, 'memory');
});

test('a search lists the matching memories with the matching words marked, stems included; no match says so', {
  skip: skipWithoutChromium,
}, async () => {
  const search = ui.page.getByRole('search', { name: 'Memory search' });
  await search.getByLabel('Search your memories').fill('connecting the databases');
  await search.getByRole('button', { name: 'Search' }).click();
  const results = ui.page.getByRole('list', { name: 'Search results, most relevant first' });
  await results.waitFor();
  assert.equal(await results.locator(':scope > li').count(), 1);
  // "connecting" matches "Connected" and "databases" matches "database" (the same Porter2 stems); "the" is a stop word.
  assert.deepEqual(await results.locator('mark').allInnerTexts(), ['Connected', 'database']);
  await assertAccessible(ui.page, 'memory search results');
  await screenshot(ui.page, 'memory-search');

  await search.getByLabel('Search your memories').fill('holidays');
  await search.getByRole('button', { name: 'Search' }).click();
  await ui.page.getByText('No memory matches “holidays”. Try other words, or show all memories.').waitFor();
  await search.getByRole('button', { name: 'Show all memories' }).click();
  await ui.page.getByRole('list', { name: 'Your memories, newest first' }).waitFor();
});

test('a memory is deleted after a confirmation; cancelling keeps it', { skip: skipWithoutChromium }, async () => {
  const remove = ui.page.getByRole('button', { name: 'Delete the memory “Prefers answers in French”' });
  await cancelThenConfirm(ui.page, remove, 'Delete this memory?', 'Delete memory', async () => {
    assert.ok((await contentsOnServer()).includes('Prefers answers in French'), 'cancel keeps the memory');
  });
  await ui.page
    .getByRole('status')
    .filter({ hasText: /was deleted/ })
    .waitFor();
  await remove.waitFor({ state: 'detached' });
  assert.ok(!(await contentsOnServer()).includes('Prefers answers in French'));
  const found = await t.as(t.tenant.member.token).get('/v1/memory/search?q=french');
  assert.deepEqual(found.body.results, [], 'the deleted memory is no longer found');
});

test('the page works by keyboard and fits 390×844', { skip: skipWithoutChromium }, async () => {
  await ui.page.setViewportSize({ width: 390, height: 844 });
  await ui.page.getByLabel('Search your memories').focus();
  await ui.page.keyboard.type('release');
  await ui.page.keyboard.press('Enter');
  const results = ui.page.getByRole('list', { name: 'Search results, most relevant first' });
  await results.locator('mark').first().waitFor();
  assert.deepEqual(await results.locator('mark').allInnerTexts(), ['release']);
  await results.scrollIntoViewIfNeeded();
  await assertFitsPhone(ui.page, 'memory', 'memory-phone');
  await ui.page.setViewportSize({ width: 1280, height: 800 });
});

test("memories are their writer's own: the owner of the same organization sees none of the member's", {
  skip: skipWithoutChromium,
}, async () => {
  await signOut(ui.page);
  await signInAs(ui.page, t.app.url, t.tenant.owner, '/memory');
  await ui.page.getByText(/No memories yet\./).waitFor();
  await ui.page.getByLabel('Search your memories').fill('release');
  await ui.page.getByRole('button', { name: 'Search' }).click();
  await ui.page.getByText('No memory matches “release”. Try other words, or show all memories.').waitFor();
  assert.equal(await ui.page.getByText('The release freezes on Thursdays').count(), 0);
});

test('a long bank is listed 50 at a time, with the older ones on request', { skip: skipWithoutChromium }, async () => {
  const memories = Array.from({ length: 51 }, (_, i) => ({ content: `Note number ${i + 1}` }));
  assert.equal((await t.as(t.tenant.owner.token).post('/v1/memory/batch', { memories })).status, 201);
  await ui.page.getByRole('button', { name: 'Show all memories' }).click();
  const list = ui.page.getByRole('list', { name: 'Your memories, newest first' });
  await waitUntil(async () => (await list.locator(':scope > li').count()) === 50, 'the first 50 are listed');
  await ui.page.getByRole('button', { name: 'Load older memories' }).click();
  await waitUntil(async () => (await list.locator(':scope > li').count()) === 51, 'the 51st is listed');
  assert.equal(await ui.page.getByRole('button', { name: 'Load older memories' }).count(), 0);
});
