// The bots pages in Chromium against the real server on this run's backend, with the stand-in bot
// platform (test/support/bot-platform.ts: the real one cannot run here) sending updates to the
// webhook as the platform does, and a delivery receiver started by the test: connect (the API's
// refusals beside their fields, the delivery secret shown once and really the signing key), updates
// followed until delivered, a dead letter, 390×844, disconnect after a confirmation, and a member's
// view. axe-core scans every state it reaches.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Bot } from '../support/bot-platform.ts';
import { api } from '../support/http.ts';
import { eventually, expectedSignature, startMessengerEnv, type MessengerEnv } from '../messenger/support.ts';
import { assertAccessible, screenshot, skipWithoutChromium, useConsolePage } from './browser.ts';
import { ageSession } from '../identity/reauth-support.ts';
import {
  assertFitsPhone,
  cancelThenConfirm,
  confirmItIsYou,
  consoleToken,
  signInAs,
  signOut,
  waitUntil,
} from './session.ts';

let env: MessengerEnv;
let bot: Bot;
let deliverySecret = '';
const ui = useConsolePage(async () => {
  env = await startMessengerEnv();
});
after(async () => {
  await env?.close();
});

const admin = () => api(env.app.url, env.tenant.admin.token);
const field = (name: string) => ui.page.getByRole('textbox', { name, exact: true });
async function describedText(name: string) {
  return ui.page.locator(`#${await ui.page.locator(`#field-${name}`).getAttribute('aria-describedby')}`).innerText();
}

test('with no bot yet the page says what to do; a token the platform refuses and a bad URL are shown beside their fields', {
  skip: skipWithoutChromium,
}, async () => {
  await signInAs(ui.page, env.app.url, env.tenant.admin, '/bots');
  await ui.page.getByRole('heading', { name: 'Bots', level: 1 }).waitFor();
  await ui.page.getByText(/No bots connected yet\. Create a bot/).waitFor();
  await assertAccessible(ui.page, 'bots, empty');

  // A password input has no textbox role: the token field is found by its label.
  const token = ui.page.getByLabel('Bot token');
  await token.fill(env.platform.unknownToken());
  await field('Delivery URL').fill(env.receiver.url);
  await ui.page.getByRole('button', { name: 'Connect bot' }).click();
  await waitUntil(
    async () => (await token.getAttribute('aria-invalid')) === 'true',
    'the refused token is marked invalid',
  );
  assert.match(await describedText('botToken'), /did not accept this bot token/);

  bot = env.platform.addBot();
  await token.fill(bot.token);
  await field('Delivery URL').fill('ftp://receiver.example.test/updates');
  await ui.page.getByRole('button', { name: 'Connect bot' }).click();
  await waitUntil(
    async () => (await field('Delivery URL').getAttribute('aria-invalid')) === 'true',
    'the URL is marked invalid',
  );
  assert.match(await describedText('deliveryUrl'), /http\(s\)/);
  assert.equal(await token.getAttribute('aria-invalid'), 'false');
  assert.deepEqual((await admin().get('/v1/messenger/connections')).body.connections, [], 'nothing was connected');
});

test('a bot is connected: its webhook is registered and the delivery secret is shown once', {
  skip: skipWithoutChromium,
}, async () => {
  await field('Delivery URL').fill(env.receiver.url);
  await ui.page.getByRole('button', { name: 'Connect bot' }).click();
  const shown = ui.page.getByRole('region', { name: 'New bot connection' });
  await shown.getByText(/you will not see it again/).waitFor();
  deliverySecret = await shown.getByRole('textbox', { name: 'Delivery secret' }).inputValue();
  assert.ok(deliverySecret.length >= 40);
  const table = ui.page.getByRole('table', { name: 'Connected bots' });
  await table.getByRole('link', { name: `@${bot.username}` }).waitFor();
  assert.equal(env.platform.webhookOf(bot.token)?.url.startsWith(`${env.app.url}/v1/webhooks/messenger/emc_`), true);
  await assertAccessible(ui.page, 'bot connected, secret shown');
  await screenshot(ui.page, 'bots');

  await shown.getByRole('button', { name: 'I have stored it' }).click();
  await shown.waitFor({ state: 'detached' });
  await ui.page.reload();
  await table.getByRole('link', { name: `@${bot.username}` }).waitFor();
  assert.ok(!(await ui.page.content()).includes(deliverySecret), 'the secret is never shown again');
});

test("the bot's updates are followed until delivered (signed with the secret shown); a failing receiver ends in a dead letter", {
  skip: skipWithoutChromium,
}, async () => {
  await ui.page.getByRole('link', { name: `@${bot.username}` }).click();
  await ui.page.getByRole('heading', { name: `@${bot.username}`, level: 1 }).waitFor();
  await ui.page.getByText(/No updates yet\. Send/).waitFor();
  await ui.page.getByText(/No dead letters/).waitFor();
  await assertAccessible(ui.page, 'bot without updates');

  const hello = env.platform.messageUpdate(bot.token, { chatId: 501, text: 'hello' });
  assert.equal((await env.platform.deliver(bot.token, hello)).status, 200);
  const delivery = await eventually(
    () => env.receiver.received.find((d) => d.json?.update?.update_id === hello.update_id),
    { what: 'the delivery' },
  );
  assert.equal(
    delivery.headers['x-orgplane-signature'],
    expectedSignature(deliverySecret, delivery.body),
    'the secret shown is the signing key',
  );
  await ui.page.getByRole('button', { name: 'Refresh' }).click();
  const updates = ui.page.getByRole('table', { name: `Recent updates of @${bot.username}, newest first` });
  const helloRow = updates
    .getByRole('row')
    .filter({ has: ui.page.getByRole('cell', { name: String(hello.update_id), exact: true }) });
  await helloRow.getByRole('cell', { name: 'Delivered', exact: true }).waitFor();

  env.receiver.respond = (_delivery, res) => {
    res.writeHead(503);
    res.end();
  };
  const lost = env.platform.messageUpdate(bot.token, { chatId: 502, text: 'lost' });
  assert.equal((await env.platform.deliver(bot.token, lost)).status, 200);
  // Clicked once: the page then reads the list again by itself while the update is queued or retrying.
  await ui.page.getByRole('button', { name: 'Refresh' }).click();
  const lostRow = updates
    .getByRole('row')
    .filter({ has: ui.page.getByRole('cell', { name: String(lost.update_id), exact: true }) });
  await lostRow.getByRole('cell', { name: 'Dead letter', exact: true }).waitFor({ timeout: 30_000 });
  const letters = ui.page.getByRole('list', { name: `Dead letters of @${bot.username}` });
  const letter = letters.getByRole('listitem').filter({ hasText: `Update ${lost.update_id}` });
  await letter.getByText(/gave up after 3 attempts: delivery answered HTTP 503/).waitFor();
  assert.equal(await letters.getByRole('listitem').count(), 1, 'the delivered update is no dead letter');
  await assertAccessible(ui.page, 'bot with updates and a dead letter');
  await screenshot(ui.page, 'bot');
});

test('the bot page and the list fit 390×844', { skip: skipWithoutChromium }, async () => {
  await ui.page.setViewportSize({ width: 390, height: 844 });
  await ui.page.getByRole('heading', { name: 'Dead letters' }).scrollIntoViewIfNeeded();
  await assertFitsPhone(ui.page, 'bot', 'bot-phone');

  await ui.page.getByRole('link', { name: '← All bots' }).click();
  const link = ui.page.getByRole('table', { name: 'Connected bots' }).getByRole('link', { name: `@${bot.username}` });
  await link.waitFor();
  await assertFitsPhone(ui.page, 'bots', 'bots-phone');
  await link.click();
  await ui.page.setViewportSize({ width: 1280, height: 800 });
});

test("settings: a bad delivery URL is refused beside its field, a good one saved (a stale session confirms first); disabled after a confirmation (no prompt), the platform's updates are refused until enabled again", {
  skip: skipWithoutChromium,
}, async () => {
  const connectionId = new URL(ui.page.url()).pathname.split('/').pop()!;
  const stored = async () => (await admin().get(`/v1/messenger/connections/${connectionId}`)).body.connection;
  const url = field('Delivery URL');
  await url.fill('http://user:secret@receiver.example.test/updates');
  await ui.page.getByRole('button', { name: 'Save delivery URL' }).click();
  await waitUntil(async () => (await url.getAttribute('aria-invalid')) === 'true', 'the URL is marked invalid');
  assert.match(await describedText('deliveryUrl'), /user:password/);
  assert.equal((await stored()).deliveryUrl, env.receiver.url);
  await ageSession(env.app, await consoleToken(ui.page));
  await url.fill(`${env.receiver.url}?fixed=1`);
  await ui.page.getByRole('button', { name: 'Save delivery URL' }).click();
  await ui.page.getByRole('dialog', { name: 'Confirm it is you' }).waitFor();
  assert.equal((await stored()).deliveryUrl, env.receiver.url, 'the URL stays until the re-authentication');
  await confirmItIsYou(ui.page, env.tenant.admin.password);
  await ui.page.getByRole('status').filter({ hasText: 'The delivery URL was saved' }).waitFor();
  assert.equal((await stored()).deliveryUrl, `${env.receiver.url}?fixed=1`);
  await ui.page.getByText(`${env.receiver.url}?fixed=1`, { exact: true }).waitFor();

  // Enabling and disabling change no destination: a stale session does them without the prompt.
  await ageSession(env.app, await consoleToken(ui.page));
  await cancelThenConfirm(
    ui.page,
    ui.page.getByRole('button', { name: 'Disable the bot' }),
    `Disable @${bot.username}?`,
    'Disable bot',
    async () => {
      assert.equal((await stored()).status, 'active', 'cancel keeps the bot active');
    },
  );
  await ui.page.getByText('Disabled: updates are refused').waitFor();
  assert.equal((await stored()).status, 'disabled');
  const refused = await env.platform.deliver(
    bot.token,
    env.platform.messageUpdate(bot.token, { chatId: 503, text: 'while disabled' }),
  );
  assert.deepEqual(refused.json, { ok: true, accepted: false, reason: 'connection_disabled' });
  await ui.page.getByRole('button', { name: 'Enable the bot' }).click();
  await ui.page.getByText('Active: updates are accepted').waitFor();
  assert.equal((await stored()).status, 'active');
  assert.equal(await ui.page.getByRole('dialog', { name: 'Confirm it is you' }).count(), 0);
  await assertAccessible(ui.page, 'bot settings');
});

test('a bot is disconnected after a confirmation (the session, still stale, confirms it is its person first); cancelling keeps it', {
  skip: skipWithoutChromium,
}, async () => {
  const connectionId = new URL(ui.page.url()).pathname.split('/').pop()!;
  await cancelThenConfirm(
    ui.page,
    ui.page.getByRole('button', { name: `Disconnect @${bot.username}` }),
    `Disconnect @${bot.username}?`,
    'Disconnect bot',
    async () => {
      assert.equal(
        (await admin().get(`/v1/messenger/connections/${connectionId}`)).status,
        200,
        'cancel keeps the bot',
      );
      assert.equal(env.platform.callsTo('deleteWebhook', bot.token).length, 0);
    },
  );
  await ui.page.getByRole('dialog', { name: 'Confirm it is you' }).waitFor();
  assert.equal(
    (await admin().get(`/v1/messenger/connections/${connectionId}`)).status,
    200,
    'kept until the re-authentication',
  );
  await confirmItIsYou(ui.page, env.tenant.admin.password);
  await ui.page.getByText(/No bots connected yet\./).waitFor();
  assert.equal((await admin().get(`/v1/messenger/connections/${connectionId}`)).status, 404);
  assert.equal(env.platform.callsTo('deleteWebhook', bot.token).length, 1, 'the webhook was removed from the platform');
});

test('a member is told who connects bots, and is offered nothing', { skip: skipWithoutChromium }, async () => {
  await signOut(ui.page);
  await signInAs(ui.page, env.app.url, env.tenant.member, '/bots');
  await ui.page.getByText(/Only owners and admins connect messaging bots/).waitFor();
  assert.equal(await ui.page.getByLabel('Bot token').count(), 0);
  assert.equal(await ui.page.getByRole('button', { name: 'Connect bot' }).count(), 0);
  await assertAccessible(ui.page, 'bots as a member');
});
