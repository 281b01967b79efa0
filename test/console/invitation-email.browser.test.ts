// End to end: an admin invites through the API with SMTP_URL pointing at a real SMTP server on loopback;
// the invitee's message is read as a mail client parses it, its link followed in Chromium by someone
// with no account yet, who signs up with the prefilled address and joins; the member then appears, to
// the API and on the members page.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../support/app.ts';
import { createTenant, uniqueEmail, type Tenant } from '../support/fixtures.ts';
import { api } from '../support/http.ts';
import { startSmtpServer, type TestSmtpServer } from '../support/smtp-server.ts';
import { assertAccessible, skipWithoutChromium, useConsolePage } from './browser.ts';
import { signInAs, signOut } from './session.ts';

let smtp: TestSmtpServer;
let app: TestApp;
let tenant: Tenant;
const started = Promise.withResolvers<void>();
started.promise.catch(() => {});
before(async () => {
  try {
    smtp = await startSmtpServer();
    app = await startTestApp({ mail: { smtpUrl: smtp.url, from: 'orgplane <noreply@orgplane.example.test>' } });
    tenant = await createTenant(app.url);
    started.resolve();
  } catch (error) {
    started.reject(error);
    throw error;
  }
});
after(async () => {
  await app?.close();
  await smtp?.close();
});
const ui = useConsolePage(() => started.promise);

test('invited through the API, the e-mail arrives; its link signs the invitee up and joins them', {
  skip: skipWithoutChromium,
}, async () => {
  const invitee = uniqueEmail('newcomer');
  const already = smtp.received.length;
  const sent = await api(app.url, tenant.admin.token).post(`/v1/orgs/${tenant.orgId}/invitations`, {
    email: invitee,
    role: 'member',
  });
  assert.equal(sent.status, 201, sent.text);
  assert.deepEqual(sent.body.delivery, { email: 'sent' });
  const mail = await smtp.next(already);
  assert.deepEqual(mail.envelopeTo, [invitee]);
  // The link as the message's HTML part gives it to a reader's click.
  const href = String(mail.parsed.html)
    .match(/href="([^"]+)"/)?.[1]
    ?.replaceAll('&amp;', '&');
  assert.ok(href, 'the HTML part links to the accept page');
  assert.ok(mail.parsed.text?.includes(href), 'the text part carries the same link');

  await ui.page.goto(href);
  await ui.page.getByText(/You were invited to an organization on orgplane as/).waitFor();
  assert.equal(await ui.page.getByLabel('Email').inputValue(), invitee);
  await ui.page.getByRole('button', { name: 'Create one' }).click();
  await ui.page.getByLabel('Name').fill('Nia Newcomer');
  await ui.page.getByLabel('Password').fill('a-long-enough-password-2');
  await ui.page.getByRole('button', { name: 'Create account' }).click();
  await ui.page.getByRole('button', { name: 'Accept and join' }).click();
  await ui.page.getByRole('button', { name: 'Sign out' }).waitFor();
  const members = await api(app.url, tenant.owner.token).get(`/v1/orgs/${tenant.orgId}/members?limit=100`);
  const joined = members.body.members.find((member: { email: string }) => member.email === invitee);
  assert.equal(joined?.role, 'member', members.text);
  assert.equal(joined?.name, 'Nia Newcomer');
  const pending = await api(app.url, tenant.owner.token).get(`/v1/orgs/${tenant.orgId}/invitations`);
  assert.ok(!pending.text.includes(invitee), 'the invitation is no longer pending');

  // The admin sees the newcomer on the members page.
  await signOut(ui.page);
  await signInAs(ui.page, app.url, tenant.admin, '/members');
  await ui.page
    .getByRole('table', { name: 'Members of this organization' })
    .getByRole('cell', { name: invitee, exact: true })
    .waitFor();
  await assertAccessible(ui.page, 'members with the newcomer');
});
