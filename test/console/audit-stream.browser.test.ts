// The audit stream's settings in Chromium against the real server on this run's backend, delivering to a
// SIEM stand-in on loopback: a refused URL beside its field, the stream created with its signing secret
// shown once (the receiver's batches verify under it), a receiver that fails until the stream stops and
// is resumed, the secret rotated and the stream removed after confirmations, a member told who manages
// it, 390×844. axe-core scans each state.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { useTenantApp } from '../support/harness.ts';
import {
  eventually,
  expectedSignature,
  startSiemReceiver,
  streamConfig,
  type SiemReceiver,
} from '../audit/stream-support.ts';
import { assertAccessible, screenshot, skipWithoutChromium, useConsolePage } from './browser.ts';
import { assertFitsPhone, dismissWithEscape, expectToldWhoManages, signInAs, waitUntil } from './session.ts';

const t = useTenantApp({ config: streamConfig({ maxAttempts: 2 }) });
let receiver: SiemReceiver;
const ui = useConsolePage(
  async () => {
    await t.ready;
    receiver = await startSiemReceiver();
  },
  { permissions: ['clipboard-read', 'clipboard-write'] },
);
after(async () => {
  await receiver?.close();
});

const streamOnServer = async () => await t.as(t.tenant.owner.token).get(`/v1/orgs/${t.tenant.orgId}/audit-stream`);
const delivery = () => ui.page.getByRole('region', { name: 'Delivery' });
let secret = '';

test('an owner creates the stream: a refused URL beside its field, then the secret shown once, which signs the batches', {
  skip: skipWithoutChromium,
}, async () => {
  await signInAs(ui.page, t.app.url, t.tenant.owner, '/audit-stream');
  await ui.page.getByText('No stream yet.').waitFor();
  await assertAccessible(ui.page, 'Audit stream, none');
  const url = ui.page.getByLabel('Receiver URL');
  await url.fill('ftp://siem.example.test/intake');
  await ui.page.getByRole('button', { name: 'Create stream' }).click();
  await waitUntil(async () => (await url.getAttribute('aria-invalid')) === 'true', 'the URL is marked invalid');
  assert.match(await ui.page.locator('#field-url-error').innerText(), /http/);
  assert.equal((await streamOnServer()).status, 404, 'nothing was created');

  await url.fill(receiver.url);
  await ui.page.getByRole('button', { name: 'Create stream' }).click();
  const shown = ui.page.getByRole('region', { name: 'New signing secret' });
  secret = await shown.getByRole('textbox', { name: 'Signing secret' }).inputValue();
  await shown.getByRole('button', { name: 'Copy signing secret' }).click();
  await waitUntil(
    async () => (await ui.page.evaluate<string>('navigator.clipboard.readText()')) === secret,
    'the secret is on the clipboard',
  );
  await eventually(() => receiver.accepted().some((event) => event.action === 'audit_stream.created'), {
    what: 'the first batch',
  });
  const batch = receiver.batches[0]!;
  assert.equal(
    batch.headers['x-orgplane-signature'],
    expectedSignature(secret, batch.body),
    'the shown secret is the one that signs',
  );
  await ui.page.getByRole('button', { name: 'Refresh' }).click();
  await delivery()
    .getByText(/^Delivering/)
    .waitFor();
  await assertAccessible(ui.page, 'Audit stream, created');
  await screenshot(ui.page, 'audit-stream');
  await shown.getByRole('button', { name: 'I have stored it' }).click();
  await ui.page.reload();
  await delivery().waitFor();
  assert.ok(!(await ui.page.content()).includes(secret), 'the secret is never shown again');
});

test('a receiver that keeps failing stops the stream, with its error; resuming delivers what waited', {
  skip: skipWithoutChromium,
  timeout: 60_000,
}, async () => {
  receiver.status = 503;
  assert.equal(
    (await t.as(t.tenant.owner.token).post(`/v1/orgs/${t.tenant.orgId}/teams`, { name: 'Streamed while failing' }))
      .status,
    201,
  );
  await eventually(async () => (await streamOnServer()).body.stream.state === 'dead', { what: 'the stream to stop' });
  await ui.page.getByRole('button', { name: 'Refresh' }).click();
  await delivery()
    .getByText(/^Delivery stopped after too many failed attempts/)
    .waitFor();
  assert.match(await delivery().innerText(), /503/);
  await assertAccessible(ui.page, 'Audit stream, stopped');

  receiver.status = 200;
  await ui.page.getByRole('button', { name: 'Resume delivery' }).click();
  await ui.page.getByRole('status').filter({ hasText: 'Delivery resumed' }).waitFor();
  await eventually(
    () =>
      receiver
        .accepted()
        .some((event) => event.action === 'team.created' && event.target?.name === 'Streamed while failing'),
    { what: 'the waiting event' },
  );
});

test('rotating the secret and removing the stream ask first; Escape changes nothing', {
  skip: skipWithoutChromium,
}, async () => {
  await ui.page.getByRole('button', { name: 'Rotate signing secret' }).click();
  const rotate = ui.page.getByRole('dialog', { name: 'Rotate the signing secret?' });
  await dismissWithEscape(ui.page, rotate);
  assert.equal(await ui.page.getByRole('region', { name: 'New signing secret' }).count(), 0);

  await ui.page.getByRole('button', { name: 'Rotate signing secret' }).click();
  await rotate.getByRole('button', { name: 'Rotate secret' }).click();
  const fresh = await ui.page
    .getByRole('region', { name: 'New signing secret' })
    .getByRole('textbox', { name: 'Signing secret' })
    .inputValue();
  assert.notEqual(fresh, secret);

  await ui.page.getByRole('button', { name: 'Remove stream' }).click();
  const remove = ui.page.getByRole('dialog', { name: 'Remove the audit stream?' });
  await remove.getByRole('button', { name: 'Remove stream' }).click();
  await ui.page.getByRole('status').filter({ hasText: 'The stream was removed' }).waitFor();
  assert.equal((await streamOnServer()).status, 404);
  await ui.page.getByText('No stream yet.').waitFor();
});

test('at 390×844 nothing scrolls sideways; a member is told who manages the stream', {
  skip: skipWithoutChromium,
}, async () => {
  await ui.page.setViewportSize({ width: 390, height: 844 });
  await ui.page.evaluate('scrollTo(0, 0)');
  await assertFitsPhone(ui.page, 'Audit stream', 'audit-stream-phone');
  await ui.page.setViewportSize({ width: 1280, height: 800 });
  const { owner, admin, member } = t.tenant;
  await expectToldWhoManages(ui.page, t.app.url, member, '/audit-stream', 'the audit stream', [
    { ...owner, role: 'owner' },
    { ...admin, role: 'admin' },
  ]);
  assert.equal(await ui.page.getByRole('form', { name: 'Audit stream settings' }).count(), 0);
});
