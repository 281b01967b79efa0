// Plugins in the console, in Chromium against the real server on this run's backend and a real MCP
// server (the official SDK's, on loopback): a manifest that is not JSON and one the API refuses are
// explained beside the field and install nothing; a manifest read from a file installs the plugin and
// lists its connections; the connection's page names the plugin and uninstalls it after a
// confirmation (the connection stays); a member is told who installs plugins. axe-core scans each state.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { useTenantApp } from '../support/harness.ts';
import { startStreamableServer, type RunningServer } from '../support/mcp-servers.ts';
import { assertAccessible, screenshot, skipWithoutChromium, useConsolePage } from './browser.ts';
import { ageSession } from '../identity/reauth-support.ts';
import { confirmItIsYou, consoleToken, horizontalOverflow, signInAs, signOut, waitUntil } from './session.ts';

const t = useTenantApp({ config: { allowedPrivateNetworks: ['127.0.0.0/8', '::1/128'] } });
let wiki: RunningServer;
const ui = useConsolePage(async () => {
  await t.ready;
  wiki = await startStreamableServer({ tools: ['search'] });
});
after(async () => {
  await wiki?.close();
});

const admin = () => t.as(t.tenant.admin.token);
const connectionsOnServer = async () =>
  (await admin().get('/v1/mcp-connections?limit=100')).body.connections as {
    id: string;
    name: string;
    requiredBy: unknown[];
    identityManagedBy: unknown[];
  }[];
const manifestField = () => ui.page.getByLabel('Plugin manifest (JSON)');
/** The message tied to the manifest field (empty while it has none). */
async function fieldError(): Promise<string> {
  const id = await manifestField().getAttribute('aria-describedby');
  return id ? ui.page.locator(`[id="${id}"]`).innerText() : '';
}
const manifest = () => ({
  name: 'Wiki plugin',
  version: '1.2.0',
  mcpConnections: [{ name: 'Wiki', url: wiki.url, authType: 'none', credentialMode: 'shared', manageIdentity: true }],
});

test('a manifest that is not JSON, or that the API refuses, is explained beside the field and installs nothing', {
  skip: skipWithoutChromium,
}, async () => {
  await signInAs(ui.page, t.app.url, t.tenant.admin, '/mcp-connections');
  await ui.page.getByRole('link', { name: 'Install a plugin' }).click();
  await ui.page.getByRole('heading', { name: 'Install a plugin' }).waitFor();
  await assertAccessible(ui.page, 'plugin install');

  await manifestField().fill('{ "name": "Wiki plugin",');
  await ui.page.getByRole('button', { name: 'Install plugin' }).click();
  await waitUntil(
    async () => (await manifestField().getAttribute('aria-invalid')) === 'true',
    'the manifest field is marked invalid',
  );
  assert.match(await fieldError(), /^This is not JSON/);

  await manifestField().fill(
    JSON.stringify({ ...manifest(), mcpConnections: [{ ...manifest().mcpConnections[0], url: 'not a url' }] }),
  );
  await ui.page.getByRole('button', { name: 'Install plugin' }).click();
  await waitUntil(
    async () => /^mcpConnections\.0\.url: /.test(await fieldError()),
    "the API's message names the connection's url",
  ).catch(async (error) => {
    throw new Error(
      `${error.message}; the field says: ${await fieldError()}; the page says: ${await ui.page.locator('main').innerText()}`,
    );
  });
  await assertAccessible(ui.page, 'plugin install refused');
  assert.deepEqual(await connectionsOnServer(), [], 'nothing was installed');
});

test('a manifest read from its file installs the plugin (a stale session confirms first), which lists the connection it manages', {
  skip: skipWithoutChromium,
}, async () => {
  await ageSession(t.app, await consoleToken(ui.page));
  await ui.page.getByLabel('Or read it from a file').setInputFiles({
    name: 'wiki-plugin.json',
    mimeType: 'application/json',
    buffer: Buffer.from(JSON.stringify(manifest(), null, 2)),
  });
  await waitUntil(
    async () => (await manifestField().inputValue()).includes('"Wiki plugin"'),
    'the file is read into the field',
  );
  await ui.page.getByRole('button', { name: 'Install plugin' }).click();
  await ui.page.getByRole('dialog', { name: 'Confirm it is you' }).waitFor();
  assert.deepEqual(await connectionsOnServer(), [], 'nothing is installed before the re-authentication');
  await confirmItIsYou(ui.page, t.tenant.admin.password);
  await ui.page.getByRole('status').filter({ hasText: 'Wiki plugin 1.2.0 is installed.' }).waitFor();
  const [created] = await connectionsOnServer();
  assert.equal(created?.name, 'Wiki');
  assert.equal(created.identityManagedBy.length, 1);
  const link = ui.page.getByRole('link', { name: 'Wiki' });
  assert.match(await ui.page.getByRole('listitem').filter({ has: link }).innerText(), /managed by the plugin/);
  await assertAccessible(ui.page, 'plugin installed');
  await screenshot(ui.page, 'plugin-installed');
  await link.click();
  await ui.page.getByRole('heading', { name: 'Wiki', level: 1 }).waitFor();
});

test("the connection's page uninstalls the plugin after a confirmation; the connection stays, no longer managed", {
  skip: skipWithoutChromium,
}, async () => {
  const uninstall = ui.page.getByRole('button', { name: 'Uninstall the plugin Wiki plugin' });
  await uninstall.click();
  const dialog = ui.page.getByRole('dialog', { name: 'Uninstall Wiki plugin?' });
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await dialog.waitFor({ state: 'hidden' });
  assert.equal((await connectionsOnServer())[0]?.requiredBy.length, 1, 'cancel keeps the plugin');

  await uninstall.click();
  await assertAccessible(ui.page, 'uninstall confirmation');
  await dialog.getByRole('button', { name: 'Uninstall' }).click();
  await uninstall.waitFor({ state: 'detached' });
  const [kept] = await connectionsOnServer();
  assert.equal(kept?.name, 'Wiki', 'the connection stays');
  assert.deepEqual([kept.requiredBy, kept.identityManagedBy], [[], []]);
  assert.equal(
    await ui.page.getByRole('form', { name: 'Connection settings' }).getByLabel('Server URL').getAttribute('readonly'),
    null,
    'its URL is editable again',
  );
});

test('a member is told who installs plugins, at 390×844 too; nothing is installed', {
  skip: skipWithoutChromium,
}, async () => {
  await signOut(ui.page);
  await signInAs(ui.page, t.app.url, t.tenant.member, '/mcp-connections/install-plugin');
  await manifestField().fill(JSON.stringify({ ...manifest(), name: 'Member plugin' }));
  await ui.page.getByRole('button', { name: 'Install plugin' }).click();
  const alert = ui.page.getByRole('alert');
  await alert.waitFor();
  assert.match(await alert.innerText(), /\S/);
  assert.equal((await connectionsOnServer()).length, 1, 'no connection was added');
  await ui.page.setViewportSize({ width: 390, height: 844 });
  assert.ok((await horizontalOverflow(ui.page)) <= 0, 'no sideways scrolling at 390 wide');
  await assertAccessible(ui.page, 'plugin install as a member, phone');
  await ui.page.setViewportSize({ width: 1280, height: 800 });
});
