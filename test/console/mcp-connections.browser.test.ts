// The console's MCP connection pages, clicked through in Chromium against the real server on this run's
// backend and real MCP servers (the official SDK's, on loopback, which this app's outbound client is
// allowed to reach): the empty list, create, a failed edit with its diagnostic, a passing edit, a
// conflicting edit, access, test with its progress, the tool catalog and policy, a plugin-managed
// connection, delete. axe-core scans every page it reaches.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import type { Page } from 'playwright-core';
import { useTenantApp } from '../support/harness.ts';
import { startStreamableServer, type RunningServer } from '../support/mcp-servers.ts';
import { assertAccessible, screenshot, skipWithoutChromium, useConsolePage } from './browser.ts';
import { ageSession } from '../identity/reauth-support.ts';
import { confirmItIsYou, consoleToken, horizontalOverflow, waitUntil } from './session.ts';

const LOOPBACK = ['127.0.0.0/8', '::1/128'];
const t = useTenantApp({ config: { allowedPrivateNetworks: LOOPBACK } });

// The docs server's catalog is read at every tools/list, so a test can retire a tool.
let docsTools = [
  {
    name: 'search',
    title: 'Search documents',
    description: 'Full-text search',
    inputSchema: { type: 'object' },
    annotations: { readOnlyHint: true },
  },
  {
    name: 'delete_page',
    description: 'Deletes a page',
    inputSchema: { type: 'object' },
    annotations: { destructiveHint: true },
  },
];
// While set, the docs server holds each request until the test releases it (to see the progress shown meanwhile).
let gate: Promise<void> | null = null;
let docs: RunningServer;
let mirror: RunningServer;
let failing: RunningServer;
let connectionId = '';

const ui = useConsolePage(async () => {
  await t.ready;
  [docs, mirror, failing] = await Promise.all([
    startStreamableServer({
      toolDefinitions: () => docsTools,
      onRequest: async (_req: IncomingMessage) => {
        if (gate) await gate;
      },
    }),
    startStreamableServer({ tools: ['search', 'delete_page'] }),
    startStreamableServer({ fault: 'initialize_error' }),
  ]);
});
after(async () => {
  await Promise.all([docs, mirror, failing].map((server) => server?.close()));
});

const admin = () => t.as(t.tenant.admin.token);
const stored = async () => (await admin().get(`/v1/mcp-connections/${connectionId}`)).body;

/** The text of the element that describes `field` (its error), by aria-describedby. */
async function describedText(field: ReturnType<Page['getByLabel']>) {
  const ids = (await field.getAttribute('aria-describedby')) ?? '';
  const texts = await Promise.all(
    ids
      .split(' ')
      .filter(Boolean)
      .map((id) => ui.page.locator(`[id="${id}"]`).innerText()),
  );
  return texts.join(' ');
}

test('an admin signs in; the list is empty and says what to do next', { skip: skipWithoutChromium }, async () => {
  await ui.page.goto(`${t.app.url}/`);
  await ui.page.getByLabel('Email').fill(t.tenant.admin.email);
  await ui.page.getByLabel('Password').fill(t.tenant.admin.password);
  await ui.page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await ui.page.getByRole('heading', { name: 'Members' }).waitFor();
  await ui.page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'MCP connections' }).click();
  await ui.page.getByRole('heading', { name: 'MCP connections' }).waitFor();
  await ui.page.getByText(/No MCP connections yet\. Add one/).waitFor();
  await assertAccessible(ui.page, 'empty connection list');
  await screenshot(ui.page, 'mcp-connections-empty');
});

test('create: a bad URL is refused beside its field; a real server is checked and added', {
  skip: skipWithoutChromium,
}, async () => {
  await ui.page.getByRole('link', { name: 'Add a connection' }).click();
  await ui.page.getByRole('heading', { name: 'Add an MCP connection' }).waitFor();
  await assertAccessible(ui.page, 'new connection form');
  await ui.page.getByLabel('Name').fill('Docs');
  const url = ui.page.getByLabel('Server URL');
  await url.fill('ftp://docs.example.test/mcp');
  await ui.page.getByRole('button', { name: 'Check and add' }).click();
  await waitUntil(async () => (await url.getAttribute('aria-invalid')) === 'true', 'the URL is marked invalid');
  assert.match(await describedText(url), /http or https/);

  await url.fill(docs.url);
  await ui.page.getByRole('button', { name: 'Check and add' }).click();
  await ui.page.getByRole('heading', { name: 'Docs', level: 1 }).waitFor();
  connectionId = new URL(ui.page.url()).pathname.split('/').pop()!;
  const created = await stored();
  assert.equal(created.url, docs.url);
  assert.deepEqual(created.access, { orgWide: true, memberIds: [], teamIds: [] });
  await ui.page.getByText('Ready', { exact: true }).waitFor();
  await assertAccessible(ui.page, 'connection page');
  await screenshot(ui.page, 'mcp-connection');
});

test('an edit to a server that fails shows the diagnostic (phase, who acts, what to do) and changes nothing; a working one is saved', {
  skip: skipWithoutChromium,
}, async () => {
  const settings = ui.page.getByRole('form', { name: 'Connection settings' });
  await settings.getByLabel('Server URL').fill(failing.url);
  await settings.getByRole('button', { name: 'Save settings' }).click();
  const diagnostic = ui.page.getByRole('alert', { name: 'The server did not pass the check; nothing was changed' });
  await diagnostic.waitFor();
  const text = await diagnostic.innerText();
  assert.match(text, /Failed at\s+phase [A-Z_]+/);
  assert.match(text, /Who must act\s+\S/);
  assert.match(text, /What to do\s+\S/);
  assert.equal((await stored()).url, docs.url, 'nothing was written');
  await assertAccessible(ui.page, 'failed edit with its diagnostic');
  await diagnostic.scrollIntoViewIfNeeded();
  await screenshot(ui.page, 'mcp-connection-diagnostic');

  await settings.getByLabel('Server URL').fill(mirror.url);
  await settings.getByRole('button', { name: 'Save settings' }).click();
  await settings.getByText('Saved. The server changed and passed its check.').waitFor();
  assert.equal((await stored()).url, mirror.url);
  await diagnostic.waitFor({ state: 'detached' });
});

test('an edit made on a stale read is a conflict that says so and offers to reload', {
  skip: skipWithoutChromium,
}, async () => {
  const current = await stored();
  const renamed = await admin().put(`/v1/mcp-connections/${connectionId}`, {
    name: 'Docs (renamed elsewhere)',
    url: current.url,
    authType: 'none',
    credentialMode: 'shared',
    access: { orgWide: true },
    expectedUpdatedAt: current.updatedAt,
  });
  assert.equal(renamed.status, 200, renamed.text);
  const settings = ui.page.getByRole('form', { name: 'Connection settings' });
  await settings.getByLabel('Name').fill('Docs (mine)');
  await settings.getByRole('button', { name: 'Save settings' }).click();
  const conflict = settings.getByRole('alert');
  await conflict.getByText(/Someone else changed this connection/).waitFor();
  await assertAccessible(ui.page, 'conflict');
  await conflict.getByRole('button', { name: 'Reload the connection' }).click();
  await waitUntil(
    async () => (await settings.getByLabel('Name').inputValue()) === 'Docs (renamed elsewhere)',
    'the reloaded name shows',
  );
  assert.equal((await stored()).name, 'Docs (renamed elsewhere)');

  // Back to the docs server, which the next tests hold and reshape.
  await settings.getByLabel('Server URL').fill(docs.url);
  await settings.getByRole('button', { name: 'Save settings' }).click();
  await settings.getByText(/^Saved\./).waitFor();
  assert.equal((await stored()).url, docs.url);
});

test('access: by keyboard alone, the connection is limited to one member', { skip: skipWithoutChromium }, async () => {
  const form = ui.page.getByRole('form', { name: 'Access' });
  await form.getByRole('radio', { name: 'Everyone in the organization' }).focus();
  await ui.page.keyboard.press('ArrowDown');
  const member = form.getByRole('checkbox', { name: new RegExp(t.tenant.member.email.replace(/[.]/g, '\\.')) });
  await member.waitFor();
  await member.focus();
  await ui.page.keyboard.press('Space');
  await form.getByRole('button', { name: 'Save access' }).focus();
  await ui.page.keyboard.press('Enter');
  await form.getByText('Access saved.').waitFor();
  assert.deepEqual((await stored()).access, { orgWide: false, memberIds: [t.tenant.member.memberId], teamIds: [] });
  await assertAccessible(ui.page, 'access editor');
});

test('test shows its progress while the server answers, then the result', { skip: skipWithoutChromium }, async () => {
  const release = Promise.withResolvers<void>();
  gate = release.promise;
  await ui.page.getByRole('button', { name: 'Test the connection' }).click();
  await ui.page.getByRole('status').filter({ hasText: 'Testing: reaching the server' }).waitFor();
  assert.equal(await ui.page.getByRole('button', { name: 'Testing…' }).isDisabled(), true);
  gate = null;
  release.resolve();
  const result = ui.page.getByRole('alert').filter({ hasText: 'The test passed every check' });
  await result.waitFor();
  assert.match(await result.innerText(), /2 tools: search, delete_page/);
});

test('tools: the catalog with its annotations; an allow list with approvals is saved; a retired tool shows as absent', {
  skip: skipWithoutChromium,
}, async () => {
  const tools = ui.page.getByRole('table', { name: 'Tools of this connection' });
  const search = tools.getByRole('row').filter({ hasText: 'search' }).filter({ hasText: 'Search documents' });
  await search.waitFor();
  assert.match(await search.innerText(), /Full-text search[\s\S]*read-only[\s\S]*Allowed/);
  const deletePage = tools.getByRole('row').filter({ hasText: 'delete_page' });
  assert.match(await deletePage.innerText(), /may be destructive/);

  const policy = ui.page.getByRole('form', { name: 'Tool policy' });
  await policy.getByRole('radio', { name: /allow list/ }).check();
  await policy.getByRole('checkbox', { name: 'search in the list' }).check();
  await policy.getByRole('checkbox', { name: /needs an approval/ }).check();
  await policy.getByRole('button', { name: 'Save tool policy' }).click();
  await policy.getByText('Tool policy saved.').waitFor();
  const saved = (await stored()).toolPolicy;
  assert.deepEqual(
    { mode: saved.mode, tools: saved.tools, destructiveNeedsApproval: saved.destructiveNeedsApproval },
    { mode: 'allow_list', tools: ['search'], destructiveNeedsApproval: true },
  );
  await waitUntil(async () => /Not allowed/.test(await deletePage.innerText()), 'delete_page shows as not allowed');
  await assertAccessible(ui.page, 'tools and policy');
  await tools.scrollIntoViewIfNeeded();
  await screenshot(ui.page, 'mcp-tools');

  docsTools = docsTools.filter((tool) => tool.name !== 'search');
  await ui.page.getByRole('button', { name: 'Test the connection' }).click();
  await ui.page.getByRole('alert').filter({ hasText: 'The server offers 1 tool: delete_page' }).waitFor();
  await waitUntil(
    async () => /Absent/.test(await tools.getByRole('row').filter({ hasText: 'search' }).innerText()),
    'search shows as absent',
  );
});

test('the connection page fits 390×844 without sideways scrolling', { skip: skipWithoutChromium }, async () => {
  await ui.page.setViewportSize({ width: 390, height: 844 });
  await ui.page.getByRole('heading', { level: 1 }).waitFor();
  // After a resize the browser may take a frame or two to lay the page out again.
  const overflow = () => horizontalOverflow(ui.page);
  await waitUntil(async () => (await overflow()) <= 0, 'the page stops scrolling sideways at 390 wide', 3000).catch(
    async (error) => {
      throw new Error(`${error.message}: it scrolls by ${await overflow()}px`);
    },
  );
  await assertAccessible(ui.page, 'connection page at 390×844');
  await ui.page.evaluate('window.scrollTo(0, 0)');
  await screenshot(ui.page, 'mcp-connection-phone');
  await ui.page.setViewportSize({ width: 1280, height: 800 });
});

test('a plugin-managed connection shows its identity fields locked, saying why', {
  skip: skipWithoutChromium,
}, async () => {
  const installed = await admin().post('/v1/plugins', {
    manifest: {
      name: 'Wiki plugin',
      mcpConnections: [
        { name: 'Wiki', url: mirror.url, authType: 'none', credentialMode: 'shared', manageIdentity: true },
      ],
    },
  });
  assert.equal(installed.status, 201, installed.text);
  const managedId = installed.body.plugin.managesIdentityOf[0];
  await ui.page.goto(`${t.app.url}/mcp-connections`);
  const list = ui.page.getByRole('table', { name: 'MCP connections of this organization' });
  await list.getByRole('link', { name: 'Wiki' }).click();
  await ui.page.getByRole('heading', { name: 'Wiki', level: 1 }).waitFor();
  assert.equal(new URL(ui.page.url()).pathname, `/mcp-connections/${managedId}`);
  const settings = ui.page.getByRole('form', { name: 'Connection settings' });
  const url = settings.getByLabel('Server URL');
  assert.equal(await url.getAttribute('readonly'), '');
  assert.match(await describedText(url), /managed by the plugin Wiki plugin/);
  assert.equal(await settings.getByLabel('Authentication', { exact: true }).isDisabled(), true);
  assert.equal(await settings.getByLabel('Credential mode').isDisabled(), true);
  await assertAccessible(ui.page, 'plugin-managed connection');
  await ui.page.getByRole('link', { name: '← All connections' }).click();
  await list.getByRole('link', { name: 'Docs (renamed elsewhere)' }).waitFor();
  await assertAccessible(ui.page, 'connection list');
  await screenshot(ui.page, 'mcp-connections');
});

test('delete asks first; cancel keeps the connection, confirm (a stale session: after the re-authentication prompt) deletes it', {
  skip: skipWithoutChromium,
}, async () => {
  await ui.page
    .getByRole('table', { name: 'MCP connections of this organization' })
    .getByRole('link', { name: 'Docs (renamed elsewhere)' })
    .click();
  await ui.page.getByRole('button', { name: 'Delete this connection' }).click();
  const dialog = ui.page.getByRole('dialog', { name: 'Delete this connection?' });
  await dialog.waitFor();
  await assertAccessible(ui.page, 'delete confirmation');
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await dialog.waitFor({ state: 'hidden' });
  assert.equal((await admin().get(`/v1/mcp-connections/${connectionId}`)).status, 200);

  await ageSession(t.app, await consoleToken(ui.page));
  await ui.page.getByRole('button', { name: 'Delete this connection' }).click();
  await dialog.getByRole('button', { name: 'Delete connection' }).click();
  await ui.page.getByRole('dialog', { name: 'Confirm it is you' }).waitFor();
  assert.equal(
    (await admin().get(`/v1/mcp-connections/${connectionId}`)).status,
    200,
    'kept until the re-authentication',
  );
  await confirmItIsYou(ui.page, t.tenant.admin.password);
  await ui.page.getByRole('heading', { name: 'MCP connections', level: 1 }).waitFor();
  assert.equal((await admin().get(`/v1/mcp-connections/${connectionId}`)).status, 404);
  assert.equal(await ui.page.getByRole('link', { name: 'Docs (renamed elsewhere)' }).count(), 0);
});
