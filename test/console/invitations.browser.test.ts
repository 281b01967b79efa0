// Invitations in Chromium against the real server on this run's backend (no SMTP_URL here: the page says
// nothing was e-mailed, and the link to pass on is shown once). Resend shows a new link and voids the
// old one; revoke after a confirmation. The accept page, from the link's fragment: signed in as the
// invited address, one click joins and lands in the organization; signed out, sign up with the address
// prefilled, then join; signed in as someone else, told so and offered to sign out; a dead or cut link
// is explained. axe-core scans each state; the accept page is checked at 390 px.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useTenantApp } from '../support/harness.ts';
import { signUp, uniqueEmail } from '../support/fixtures.ts';
import { assertAccessible, screenshot, skipWithoutChromium, useConsolePage } from './browser.ts';
import { assertFitsPhone, cancelThenConfirm, signInAs, signOut, waitUntil } from './session.ts';

const t = useTenantApp();
const ui = useConsolePage(() => t.ready, { permissions: ['clipboard-read', 'clipboard-write'] });

const pendingOnServer = async (): Promise<{ id: string; email: string; expiresAt: string }[]> =>
  (await t.as(t.tenant.owner.token).get(`/v1/orgs/${t.tenant.orgId}/invitations`)).body.invitations;
const membersOnServer = async (): Promise<string[]> =>
  (await t.as(t.tenant.owner.token).get(`/v1/orgs/${t.tenant.orgId}/members?limit=100`)).body.members.map(
    (member: { email: string }) => member.email,
  );
const tokenOf = (link: string) => new URLSearchParams(new URL(link).hash.slice(1)).get('token')!;
/** Opens an accept link as a new document (a link followed from a mail client), not as a fragment change. */
async function follow(link: string) {
  await ui.page.goto('about:blank');
  await ui.page.goto(link);
}
const signedOutInTab = () => ui.page.evaluate(() => sessionStorage.clear());

const invitee = uniqueEmail('invitee');
let firstLink = '';
let secondLink = '';

test('after inviting, the link is shown once with what became of the e-mail; resend shows a new one', {
  skip: skipWithoutChromium,
}, async () => {
  await signInAs(ui.page, t.app.url, t.tenant.admin, '/invitations');
  await ui.page.getByLabel('Email to invite').fill(invitee);
  await ui.page.getByRole('button', { name: 'Invite', exact: true }).click();
  const shown = ui.page.getByRole('region', { name: 'Invitation link' });
  await shown.getByText(/E-mail is not set up on this instance/).waitFor();
  await shown.getByText(/you will not see it again/).waitFor();
  firstLink = await shown.getByRole('textbox', { name: 'Invitation link' }).inputValue();
  assert.match(firstLink, new RegExp(`^${t.app.url}/invitations/accept#token=opi_`));
  await shown.getByRole('button', { name: 'Copy invitation link' }).click();
  await shown.getByRole('status').filter({ hasText: 'Copied.' }).waitFor();
  assert.equal(await ui.page.evaluate<string>('navigator.clipboard.readText()'), firstLink);
  const row = ui.page.getByRole('row').filter({ hasText: invitee });
  await row.waitFor();
  await assertAccessible(ui.page, 'invitation link shown once');
  await screenshot(ui.page, 'invitations');
  await shown.getByRole('button', { name: 'Done' }).click();
  await shown.waitFor({ state: 'detached' });
  await ui.page.reload();
  await row.waitFor();
  assert.ok(!(await ui.page.content()).includes(tokenOf(firstLink)), 'the link is never shown again');

  const before = (await pendingOnServer()).find((each) => each.email === invitee)!;
  await ui.page.getByRole('button', { name: `Resend the invitation of ${invitee}` }).click();
  await shown.getByText(/The link sent before no longer works/).waitFor();
  secondLink = await shown.getByRole('textbox', { name: 'Invitation link' }).inputValue();
  assert.notEqual(secondLink, firstLink);
  await ui.page.getByText(`The invitation of ${invitee} has a new link.`).waitFor();
  const after = (await pendingOnServer()).find((each) => each.email === invitee)!;
  assert.equal(after.id, before.id);
  assert.ok(Date.parse(after.expiresAt) > Date.parse(before.expiresAt), 'a new expiry');
  await assertAccessible(ui.page, 'resent invitation link');
});

test('revoke asks first; cancel keeps the invitation, confirming ends it', { skip: skipWithoutChromium }, async () => {
  const doomed = uniqueEmail('doomed');
  await ui.page.getByLabel('Email to invite').fill(doomed);
  await ui.page.getByRole('button', { name: 'Invite', exact: true }).click();
  await ui.page.getByRole('row').filter({ hasText: doomed }).waitFor();
  await cancelThenConfirm(
    ui.page,
    ui.page.getByRole('button', { name: `Revoke the invitation of ${doomed}` }),
    'Revoke this invitation?',
    'Revoke invitation',
    async () => assert.ok((await pendingOnServer()).some((each) => each.email === doomed)),
  );
  await ui.page.getByText(`The invitation of ${doomed} was revoked.`).waitFor();
  assert.ok(!(await pendingOnServer()).some((each) => each.email === doomed));
});

test('signed in as someone else, the accept page says so and offers to sign out; then sign up prefilled and join', {
  skip: skipWithoutChromium,
}, async () => {
  // Still the admin's tab: the link is for another address.
  await follow(secondLink);
  await ui.page.getByRole('heading', { name: 'This invitation is for another account' }).waitFor();
  await ui.page.getByText(`You are signed in as ${t.tenant.admin.email}`).waitFor();
  await assertAccessible(ui.page, 'accept page, another account');
  await ui.page.getByRole('button', { name: 'Sign out and continue' }).click();

  await ui.page.getByRole('heading', { name: 'Sign in to orgplane' }).waitFor();
  await ui.page.getByText(/You were invited to an organization on orgplane as/).waitFor();
  assert.equal(await ui.page.getByLabel('Email').inputValue(), invitee, 'the invited address is prefilled');
  await ui.page.setViewportSize({ width: 390, height: 844 });
  await assertFitsPhone(ui.page, 'accept page, signed out', 'invitation-accept-phone');
  await ui.page.setViewportSize({ width: 1280, height: 800 });
  await ui.page.getByRole('button', { name: 'Create one' }).click();
  assert.equal(await ui.page.getByLabel('Email').inputValue(), invitee, 'still prefilled for sign-up');
  await ui.page.getByLabel('Name').fill('Ivy Invitee');
  await ui.page.getByLabel('Password').fill('a-long-enough-password-1');
  await ui.page.getByRole('button', { name: 'Create account' }).click();

  await ui.page.getByRole('heading', { name: 'Join an organization' }).waitFor();
  await ui.page.getByText(`You are signed in as ${invitee}`).waitFor();
  await assertAccessible(ui.page, 'accept page, signed in as the invitee');
  await screenshot(ui.page, 'invitation-accept');
  await ui.page.getByRole('button', { name: 'Accept and join' }).click();
  // Lands in the organization joined: the shell, with it active.
  await ui.page.getByRole('button', { name: 'Sign out' }).waitFor();
  await waitUntil(async () => new URL(ui.page.url()).pathname === '/', 'the console opens');
  const organization = (await t.as(t.tenant.owner.token).get('/v1/org')).body.organization.name;
  assert.equal(
    await ui.page.getByRole('combobox', { name: 'Organization' }).locator('option:checked').textContent(),
    organization,
  );
  assert.ok((await membersOnServer()).includes(invitee), 'the invitee is a member');
});

test('a used, replaced or cut link is explained, not a blank page; an ended session signs in again here', {
  skip: skipWithoutChromium,
}, async () => {
  // The first link was replaced by the resend; the second was used just now.
  for (const link of [firstLink, secondLink]) {
    await follow(link);
    await ui.page.getByRole('button', { name: 'Accept and join' }).click();
    await ui.page
      .getByRole('alert')
      .filter({ hasText: /This invitation link no longer works/ })
      .waitFor();
  }
  await assertAccessible(ui.page, 'accept page, dead link');
  await follow(`${t.app.url}/invitations/accept#email=${encodeURIComponent(invitee)}`);
  await ui.page
    .getByRole('alert')
    .filter({ hasText: /This invitation link is incomplete/ })
    .waitFor();
  // A session that ended meanwhile (here, one the server never issued): sign in again, on this page.
  await ui.page.evaluate(() => sessionStorage.setItem('orgplane.session', 'ended-session'));
  await follow(secondLink);
  await ui.page.getByRole('heading', { name: 'Sign in to orgplane' }).waitFor();
  assert.equal(await ui.page.getByLabel('Email').inputValue(), invitee);
  await signedOutInTab();
});

test('signed in as the invited address already: one click joins, and the organization becomes the active one', {
  skip: skipWithoutChromium,
}, async () => {
  // A person with an organization of their own, whose session has it active.
  const person = await signUp(t.app.url, 'joiner');
  const own = await t.as(person.token).post('/v1/orgs', { name: 'Joiner Co' });
  assert.equal(own.status, 201, own.text);
  const sent = await t
    .as(t.tenant.owner.token)
    .post(`/v1/orgs/${t.tenant.orgId}/invitations`, { email: person.email, role: 'member' });
  assert.equal(sent.status, 201, sent.text);
  await signInAs(ui.page, t.app.url, person);
  await ui.page.getByRole('combobox', { name: 'Organization' }).waitFor();
  await follow(sent.body.acceptUrl);
  await ui.page.getByRole('button', { name: 'Accept and join' }).click();
  await waitUntil(async () => new URL(ui.page.url()).pathname === '/', 'the console opens');
  const organization = (await t.as(t.tenant.owner.token).get('/v1/org')).body.organization.name;
  await waitUntil(
    async () =>
      (await ui.page.getByRole('combobox', { name: 'Organization' }).locator('option:checked').textContent()) ===
      organization,
    'the joined organization is the active one',
  );
  assert.ok((await membersOnServer()).includes(person.email));
  await signOut(ui.page);
});
