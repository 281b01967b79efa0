// Credentials in the console, in Chromium against the real server. OAuth, with a real OAuth-protected MCP
// server (the SDK's authorization handlers, approving at once): the button starts the authorization
// through the API, the browser follows it in a second window to the callback, and the page shows the
// resulting credential health, for one's own account (per member) and for the organization's (shared).
// API keys, with an SDK server that demands one: a member stores their own (a wrong one is refused with
// the probe's diagnostic) and disconnects after a confirmation.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { useTenantApp } from '../support/harness.ts';
import { startStreamableServer, type RunningServer } from '../support/mcp-servers.ts';
import { startOAuthMcpServer, type OAuthMcpServer } from '../support/oauth-mcp-server/index.ts';
import { assertAccessible, screenshot, skipWithoutChromium, useConsolePage } from './browser.ts';
import { ageSession } from '../identity/reauth-support.ts';
import { confirmItIsYou, consoleToken, waitUntil } from './session.ts';

const LOOPBACK = ['127.0.0.0/8', '::1/128'];
const t = useTenantApp({ config: { allowedPrivateNetworks: LOOPBACK } });

let oauthServer: OAuthMcpServer;
let keyed: RunningServer;

const ui = useConsolePage(async () => {
  await t.ready;
  [oauthServer, keyed] = await Promise.all([startOAuthMcpServer(), startStreamableServer({ apiKey: 'the-right-key' })]);
});
after(async () => {
  await Promise.all([oauthServer?.close(), keyed?.close()]);
});

const admin = () => t.as(t.tenant.admin.token);

/**
 * Clicks `button`, follows the authorization window to its end, and returns that window's text. With
 * `password`, the session is stale: the console's re-authentication prompt is answered first, while the
 * window it opened within the click waits for the authorization URL.
 */
async function authorizeIn(buttonName: string, password?: string): Promise<string> {
  const opened = ui.page.context().waitForEvent('page');
  await ui.page.getByRole('button', { name: buttonName }).click();
  const popup = await opened;
  if (password) await confirmItIsYou(ui.page, password);
  await popup.getByRole('heading', { name: 'Connected' }).waitFor();
  const text = await popup.locator('body').innerText();
  await popup.close();
  return text;
}

test('an admin adds an OAuth connection; a scope too long is refused beside its field', {
  skip: skipWithoutChromium,
}, async () => {
  await ui.page.goto(`${t.app.url}/mcp-connections/new`);
  await ui.page.getByLabel('Email').fill(t.tenant.admin.email);
  await ui.page.getByLabel('Password').fill(t.tenant.admin.password);
  await ui.page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await ui.page.getByRole('heading', { name: 'Add an MCP connection' }).waitFor();
  await ui.page.getByLabel('Name').fill('Files');
  await ui.page.getByLabel('Server URL').fill(oauthServer.url);
  await ui.page.getByLabel('Authentication', { exact: true }).selectOption('oauth');
  await ui.page.getByLabel('Credential mode').selectOption('per_member');
  const scopes = ui.page.getByLabel('Requested scopes (separated by spaces)');
  await scopes.fill(`files ${'x'.repeat(256)}`);
  await ui.page.getByRole('button', { name: 'Check and add' }).click();
  await waitUntil(async () => (await scopes.getAttribute('aria-invalid')) === 'true', 'the scopes are marked invalid');
  assert.match(await ui.page.locator('[id="field-requestedScopes-error"]').innerText(), /255/);
  await assertAccessible(ui.page, 'OAuth fields with an error');

  await scopes.fill('');
  await ui.page.getByRole('button', { name: 'Check and add' }).click();
  await ui.page.getByRole('heading', { name: 'Files', level: 1 }).waitFor();
  await ui.page.getByText('Not connected: connect your account').waitFor();
});

test('connect your account: the authorization runs in a second window and the page shows the credential as ready', {
  skip: skipWithoutChromium,
}, async () => {
  const text = await authorizeIn('Connect your account');
  assert.match(text, /authorized/);
  await ui.page.getByRole('status').filter({ hasText: 'Authorization finished. Credential health: Ready.' }).waitFor();
  const connectionId = new URL(ui.page.url()).pathname.split('/').pop()!;
  const stored = (await admin().get(`/v1/mcp-connections/${connectionId}`)).body;
  assert.equal(stored.connectedForMe, true);
  assert.equal(stored.credentialHealth, 'ready');
  assert.equal(oauthServer.stats.tokenRequests.filter((request) => request.outcome === 'issued').length, 1);
  await ui.page.getByRole('button', { name: 'Connect your account again' }).waitFor();
  await assertAccessible(ui.page, 'OAuth connection, connected');
  await screenshot(ui.page, 'mcp-connection-oauth');
});

test("connect the organization's account on a shared connection (a stale session confirms first)", {
  skip: skipWithoutChromium,
}, async () => {
  const created = await admin().post('/v1/mcp-connections', {
    name: 'Shared files',
    url: oauthServer.url,
    authType: 'oauth',
    credentialMode: 'shared',
    access: { orgWide: true },
  });
  assert.equal(created.status, 201, created.text);
  await ui.page.goto(`${t.app.url}/mcp-connections/${created.body.id}`);
  await ui.page.getByText('Not connected: an admin must connect it').waitFor();
  await ageSession(t.app, await consoleToken(ui.page));
  await authorizeIn("Connect the organization's account", t.tenant.admin.password);
  await ui.page.getByRole('status').filter({ hasText: 'Authorization finished. Credential health: Ready.' }).waitFor();
  const stored = (await admin().get(`/v1/mcp-connections/${created.body.id}`)).body;
  assert.equal(stored.connected, true);
  assert.equal(stored.credentialHealth, 'ready');
  // A member sees it connected for them too (the shared identity), and no button to connect it.
  const forMember = (await t.as(t.tenant.member.token).get(`/v1/mcp-connections/${created.body.id}`)).body;
  assert.equal(forMember.connectedForMe, true);
});

test("a client credentials client set up in the form: the test gets the organization's token without a browser, and the secret is not shown again", {
  skip: skipWithoutChromium,
}, async () => {
  const secret = 'console-cc-secret-4b9e2d7a1c';
  oauthServer.addClient({ clientId: 'console-cc', clientSecret: secret, redirectUris: [], clientCredentials: true });
  await ui.page.goto(`${t.app.url}/mcp-connections/new`);
  await ui.page.getByRole('heading', { name: 'Add an MCP connection' }).waitFor();
  await ui.page.getByLabel('Name').fill('Reports');
  await ui.page.getByLabel('Server URL').fill(oauthServer.url);
  await ui.page.getByLabel('Authentication', { exact: true }).selectOption('oauth');
  await ui.page.getByLabel('Credential mode').selectOption('shared');
  await ui.page.getByLabel('Pre-registered client ID').fill('console-cc');
  await ui.page.getByLabel('Client secret').fill(secret);
  await ui.page.getByLabel('Grant').selectOption('client_credentials');
  await ui.page.getByLabel('Token endpoint authentication').selectOption('client_secret_basic');
  await assertAccessible(ui.page, 'client credentials fields');
  await ui.page.getByRole('button', { name: 'Check and add' }).click();
  await ui.page.getByRole('heading', { name: 'Reports', level: 1 }).waitFor();

  await ui.page.getByRole('button', { name: 'Test the connection' }).click();
  await ui.page.getByRole('alert').filter({ hasText: 'The test passed every check' }).waitFor();
  const connectionId = new URL(ui.page.url()).pathname.split('/').pop()!;
  const stored = (await admin().get(`/v1/mcp-connections/${connectionId}`)).body;
  assert.deepEqual(
    [stored.oauthGrantType, stored.oauthTokenEndpointAuthMethod, stored.oauthClientSecretConfigured],
    ['client_credentials', 'client_secret_basic', true],
  );
  const grants = oauthServer.stats.tokenRequests.filter(
    (request) => request.clientId === 'console-cc' && request.grantType === 'client_credentials',
  );
  assert.ok(grants.length >= 1, 'the token came from the client credentials grant');
  assert.equal(
    oauthServer.stats.authorizations.filter((authorization) => authorization.clientId === 'console-cc').length,
    0,
    'no browser authorization',
  );
  const form = ui.page.getByRole('form', { name: 'Connection settings' });
  assert.equal(await form.getByLabel('Grant').inputValue(), 'client_credentials', 'the form shows the stored grant');
  assert.equal(await form.getByLabel(/^Client secret/).inputValue(), '', 'the secret is write-only');
  assert.ok(!(await ui.page.content()).includes(secret), 'nor anywhere in the page');
});

test('a member stores their own API key (a wrong one shows the diagnostic), then disconnects after a confirmation', {
  skip: skipWithoutChromium,
}, async () => {
  const created = await admin().post('/v1/mcp-connections', {
    name: 'Tickets',
    url: keyed.url,
    authType: 'apikey',
    credentialMode: 'per_member',
    access: { orgWide: false, memberIds: [t.tenant.member.memberId] },
  });
  assert.equal(created.status, 201, created.text);
  const connectionId = created.body.id;
  const member = await (await ui.browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
  await member.goto(`${t.app.url}/mcp-connections`);
  await member.getByLabel('Email').fill(t.tenant.member.email);
  await member.getByLabel('Password').fill(t.tenant.member.password);
  await member.getByRole('button', { name: 'Sign in', exact: true }).click();
  await member
    .getByRole('table', { name: 'MCP connections of this organization' })
    .getByRole('link', { name: 'Tickets' })
    .click();
  await member.getByText('Not connected: connect your account').waitFor();
  // A member sees no settings, access or delete: those are for owners and admins.
  assert.equal(await member.getByRole('form', { name: 'Connection settings' }).count(), 0);
  assert.equal(await member.getByRole('button', { name: 'Delete this connection' }).count(), 0);

  const form = member.getByRole('form', { name: 'Your API key' });
  await form.getByLabel('Your API key').fill('a-wrong-key');
  await form.getByRole('button', { name: 'Check and store the key' }).click();
  const diagnostic = member.getByRole('alert', { name: 'The key did not pass the check; nothing was stored' });
  await diagnostic.waitFor();
  assert.match(await diagnostic.innerText(), /Who must act\s+\S/);
  await assertAccessible(member, 'a refused API key');

  await form.getByLabel('Your API key').fill('the-right-key');
  await form.getByRole('button', { name: 'Check and store the key' }).click();
  await form.getByText('The key passed the check and is stored.').waitFor();
  await member.getByText('Ready', { exact: true }).waitFor();
  const stored = await t.as(t.tenant.member.token).get(`/v1/mcp-connections/${connectionId}`);
  assert.equal(stored.body.connectedForMe, true);
  assert.ok(!stored.text.includes('the-right-key'));
  assert.equal(await form.getByLabel('Your API key').inputValue(), '', 'the key is not kept in the page');

  await member.getByRole('button', { name: 'Disconnect your account' }).click();
  const dialog = member.getByRole('dialog', { name: 'Disconnect your account?' });
  await dialog.waitFor();
  await assertAccessible(member, 'disconnect confirmation');
  await dialog.getByRole('button', { name: 'Disconnect' }).click();
  await member.getByText('Not connected: connect your account').waitFor();
  assert.equal(
    (await t.as(t.tenant.member.token).get(`/v1/mcp-connections/${connectionId}`)).body.connectedForMe,
    false,
  );
  await member.close();
});
