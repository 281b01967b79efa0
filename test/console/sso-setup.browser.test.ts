// The SSO setup page in Chromium against the real server on this run's backend, with a real DNS server
// (dns2) and real identity providers (oidc-provider, samlify) on loopback: an OIDC connection made with
// a refused field first, the DNS record copied, verification failing three ways and then passing, a
// test sign-in refused and then passed in a second window, SSO required after a confirmation (members'
// password sessions end) and released, a SAML connection with orgplane's side to copy, a member told
// who manages SSO, and the page at 390×844. axe-core scans each state.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { startDnsServer } from '../support/dns-server.ts';
import { useTenantApp } from '../support/harness.ts';
import { setPlanAsOperator } from '../support/identity.ts';
import { startTestIdp, type TestIdp } from '../support/oidc-idp.ts';
import { startSamlIdp, type TestSamlIdp } from '../support/saml-idp.ts';
import { assertAccessible, screenshot, skipWithoutChromium, useConsolePage } from './browser.ts';
import { assertFitsPhone, dismissWithEscape, expectToldWhoManages, signInAs, waitUntil } from './session.ts';

const dns = await startDnsServer();
const t = useTenantApp({ config: { dnsServers: [dns.address], allowedPrivateNetworks: ['127.0.0.1/32'] } });
let idp: TestIdp;
let samlIdp: TestSamlIdp;
const ui = useConsolePage(
  async () => {
    await t.ready;
    await setPlanAsOperator(t.app, t.tenant.orgId, 'enterprise');
    idp = await startTestIdp({ redirectUri: `${t.app.config.publicUrl}/v1/auth/sso/oidc/callback` });
    samlIdp = await startSamlIdp();
  },
  { permissions: ['clipboard-read', 'clipboard-write'] },
);
after(async () => {
  await idp?.close();
  await samlIdp?.close();
  await dns.close();
});

const clipboard = () => ui.page.evaluate<string>('navigator.clipboard.readText()');
const connectionOnServer = async () => (await t.as(t.tenant.owner.token).get('/v1/sso/connection')).body.connection;
const card = (name: string) => ui.page.getByRole('region', { name });

test('an owner sets up OIDC: a refused domain beside its field, then the connection with a write-only secret', {
  skip: skipWithoutChromium,
}, async () => {
  await signInAs(ui.page, t.app.url, t.tenant.owner, '/sso');
  await ui.page.getByText('No SSO connection yet.').waitFor();
  await assertAccessible(ui.page, 'SSO setup, empty');

  await ui.page.getByLabel('Domain', { exact: true }).fill('co.uk');
  await ui.page.getByLabel('Issuer URL').fill(idp.issuer);
  await ui.page.getByLabel('Client ID').fill(idp.clientId);
  await ui.page.getByLabel('Client secret').fill(idp.clientSecret);
  await ui.page.getByRole('button', { name: 'Create connection' }).click();
  const domain = ui.page.getByLabel('Domain', { exact: true });
  await waitUntil(async () => (await domain.getAttribute('aria-invalid')) === 'true', 'the domain is marked invalid');
  assert.match(await ui.page.locator('#field-domain-error').innerText(), /public suffix/);
  await assertAccessible(ui.page, 'SSO setup, refused domain');

  await domain.fill('example.test');
  await ui.page.getByRole('button', { name: 'Create connection' }).click();
  await ui.page.getByRole('status').filter({ hasText: 'publish the DNS record' }).waitFor();
  const saved = await connectionOnServer();
  assert.equal(saved.issuer, idp.issuer);
  assert.equal(saved.clientSecretSet, true);
  assert.equal(await ui.page.getByLabel('Client secret').inputValue(), '', 'the secret is never shown back');
  await ui.page.getByText('A secret is stored; it is never shown.').waitFor();
  assert.equal(
    await ui.page.getByRole('textbox', { name: 'Redirect URI' }).inputValue(),
    `${t.app.config.publicUrl}/v1/auth/sso/oidc/callback`,
  );
});

test("an owner chooses how e-mail addresses are trusted: the provider's email_verified by default, or the verified domain (Entra)", {
  skip: skipWithoutChromium,
}, async () => {
  const form = ui.page.getByRole('form', { name: 'SSO connection settings' });
  const trust = form.getByRole('group', { name: 'Trust e-mail addresses' });
  assert.equal(await trust.getByLabel(/When the provider says they are verified/).isChecked(), true, 'the default');
  assert.equal((await connectionOnServer()).emailTrust, 'verified_claim');
  await trust.getByLabel(/When they are in the verified domain/).check();
  await form.getByRole('button', { name: 'Save connection' }).click();
  await waitUntil(async () => (await connectionOnServer()).emailTrust === 'verified_domain', 'the choice is saved');
  assert.equal(await ui.page.getByLabel('Client secret').inputValue(), '', 'the stored secret was kept, not shown');
  assert.equal((await connectionOnServer()).clientSecretSet, true);
  await assertAccessible(ui.page, 'SSO setup, e-mail trust');
  await trust.evaluate((element) => element.scrollIntoView({ block: 'center' }));
  await screenshot(ui.page, 'sso-email-trust');
});

test('verification explains a missing record, a wrong one and a DNS failure, then passes (by keyboard)', {
  skip: skipWithoutChromium,
}, async () => {
  const { recordName, recordValue } = (await connectionOnServer()).verification;
  const dnsCard = card('Domain verification');
  assert.equal(await dnsCard.getByRole('textbox', { name: 'TXT record name' }).inputValue(), recordName);
  await dnsCard.getByRole('button', { name: 'Copy txt record value' }).click();
  await dnsCard.getByRole('status').filter({ hasText: 'Copied.' }).waitFor();
  assert.equal(await clipboard(), recordValue);
  await dnsCard.getByRole('button', { name: 'Copy txt record name' }).click();
  await waitUntil(async () => (await clipboard()) === recordName, 'the record name is on the clipboard');

  const verify = dnsCard.getByRole('button', { name: 'Verify domain' });
  await verify.click();
  const failure = dnsCard.getByRole('alert');
  await failure.getByRole('heading', { name: 'The TXT record was not found' }).waitFor();
  assert.match(await failure.innerText(), new RegExp(recordValue));
  assert.match(await failure.innerText(), /Publish a TXT record at exactly that name/);
  await assertAccessible(ui.page, 'SSO setup, record missing');
  await screenshot(ui.page, 'sso-verify-failed');

  dns.setTxt(recordName, ['orgplane-domain-verification=not-this-one']);
  await verify.click();
  await failure.getByRole('heading', { name: 'The TXT record has another value' }).waitFor();
  assert.match(await failure.innerText(), /not-this-one/);

  dns.setBehaviour(recordName, { kind: 'servfail' });
  await verify.click();
  await failure.getByRole('heading', { name: 'The DNS lookup failed' }).waitFor();
  assert.match(await failure.innerText(), /try again in a minute/);

  dns.setTxt(recordName, [recordValue]);
  await verify.focus();
  await ui.page.keyboard.press('Enter');
  await dnsCard.getByRole('status').filter({ hasText: 'example.test is verified' }).waitFor();
  assert.equal(await failure.count(), 0, 'the failure is gone');
  assert.equal((await connectionOnServer()).domainVerified, true);
});

test('a test sign-in in a second window: refused for a stranger with what to do, then passed; only then may SSO be required', {
  skip: skipWithoutChromium,
  timeout: 60_000,
}, async () => {
  const testCard = card('Test sign-in');
  const requireButton = ui.page.getByRole('button', { name: 'Require SSO' });
  assert.equal(await requireButton.isDisabled(), true, 'not before a sign-in has worked');
  const email = testCard.getByLabel('Sign in as (e-mail)');
  assert.equal(
    await email.inputValue(),
    t.tenant.owner.email,
    'the owner, whose address is in the domain, is proposed',
  );

  idp.signInAs({ sub: 'stranger', email: 'stranger@example.test', email_verified: true, name: 'Stranger' });
  await email.fill('stranger@example.test');
  const refusedWindow = ui.context.waitForEvent('page');
  await testCard.getByRole('button', { name: 'Test sign-in' }).click();
  const refusedPage = await refusedWindow;
  await refusedPage.getByRole('heading', { name: 'Sign-in refused' }).waitFor();
  await testCard.getByRole('status').filter({ hasText: 'The test sign-in was refused' }).waitFor();
  const refusal = testCard.getByRole('group', { name: 'Last refused sign-in' });
  assert.match(await refusal.innerText(), /not_a_member/);
  assert.match(await refusal.innerText(), /invite them, or turn on just-in-time provisioning/);
  await refusedPage.close();

  idp.signInAs({ sub: 'owner', email: t.tenant.owner.email, email_verified: true, name: t.tenant.owner.name });
  await email.fill(t.tenant.owner.email);
  const passedWindow = ui.context.waitForEvent('page');
  await testCard.getByRole('button', { name: 'Test sign-in' }).click();
  const passedPage = await passedWindow;
  await passedPage.getByRole('heading', { name: 'Test sign-in passed' }).waitFor();
  assert.equal(new URL(passedPage.url()).search, '', 'the one-time code left the address bar');
  assert.equal(
    await passedPage.evaluate(() => sessionStorage.getItem('orgplane.sso.verifier')),
    null,
    'nothing could exchange the code',
  );
  await testCard.getByRole('status').filter({ hasText: 'The test sign-in passed' }).waitFor();
  await testCard.getByText('Last successful SSO sign-in:').waitFor();
  await assertAccessible(passedPage, 'SSO test sign-in window');
  const closed = passedPage.waitForEvent('close');
  // The window closes itself during the click, which Playwright may report as the click failing: the close is what counts.
  await passedPage
    .getByRole('button', { name: 'Close this window' })
    .click()
    .catch(() => {});
  await closed;
  assert.equal((await connectionOnServer()).ssoReady, true);
  await waitUntil(async () => !(await requireButton.isDisabled()), 'Require SSO is offered');
  await assertAccessible(ui.page, 'SSO setup, tested');
  await testCard.evaluate((element) => element.scrollIntoView());
  await screenshot(ui.page, 'sso-setup');
});

test("requiring SSO asks first, then ends the members' password sessions; it can be released", {
  skip: skipWithoutChromium,
}, async () => {
  await ui.page.getByRole('button', { name: 'Require SSO' }).click();
  const dialog = ui.page.getByRole('dialog', { name: 'Require SSO for example.test?' });
  await dismissWithEscape(ui.page, dialog);
  assert.equal((await connectionOnServer()).ssoRequired, false, 'Escape changed nothing');

  await ui.page.getByRole('button', { name: 'Require SSO' }).click();
  await dialog.getByRole('button', { name: 'Require SSO' }).click();
  await ui.page.getByRole('status').filter({ hasText: 'SSO is now required for example.test.' }).waitFor();
  assert.equal((await connectionOnServer()).ssoRequired, true);
  assert.equal((await t.as(t.tenant.member.token).get('/v1/me')).status, 401, "the member's password session ended");
  assert.equal((await t.as(t.tenant.owner.token).get('/v1/me')).status, 200, 'the owner keeps theirs (break-glass)');

  await ui.page.getByRole('button', { name: 'Stop requiring SSO' }).click();
  await ui.page.getByRole('status').filter({ hasText: 'SSO is no longer required' }).waitFor();
  assert.equal((await connectionOnServer()).ssoRequired, false);
});

test("SAML: a certificate that is not one is refused beside its field; metadata gives orgplane's side to copy; a test sign-in passes", {
  skip: skipWithoutChromium,
}, async () => {
  const form = ui.page.getByRole('form', { name: 'SSO connection settings' });
  await form.getByLabel('SAML 2.0').check();
  await form.getByLabel('Entity ID, sign-on URL and certificate').check();
  await form.getByLabel('IdP entity ID').fill(samlIdp.entityId);
  await form.getByLabel('IdP single sign-on URL').fill(samlIdp.ssoUrl);
  await form.getByLabel('IdP signing certificate (PEM)').fill('not a certificate');
  await form.getByRole('button', { name: 'Save connection' }).click();
  const certificate = form.getByLabel('IdP signing certificate (PEM)');
  await waitUntil(
    async () => (await certificate.getAttribute('aria-invalid')) === 'true',
    'the certificate is marked invalid',
  );
  assert.match(await ui.page.locator('[id="field-idpCertificates.0-error"]').innerText(), /X\.509 certificate/);
  assert.equal((await connectionOnServer()).protocol, 'oidc', 'nothing was saved');

  await form.getByLabel('Metadata document (XML)').check();
  await form.getByLabel('IdP metadata XML').fill(samlIdp.metadataXml);
  await form.getByRole('button', { name: 'Save connection' }).click();
  await form.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
  const saved = await connectionOnServer();
  assert.equal(saved.protocol, 'saml');
  assert.equal(saved.issuer, samlIdp.entityId);
  assert.equal(saved.ssoReady, false, 'another provider must be tested again');
  const settings = ui.page.getByRole('group', { name: 'Give these to your identity provider' });
  assert.equal(await settings.getByRole('textbox', { name: 'ACS URL' }).inputValue(), saved.acsUrl);
  assert.equal(await settings.getByRole('textbox', { name: 'SP entity ID' }).inputValue(), saved.spEntityId);
  await settings.getByRole('button', { name: 'Copy sp metadata url' }).click();
  assert.equal(await clipboard(), saved.spMetadataUrl);
  await settings.getByText('signing certificate expires on').waitFor();
  await assertAccessible(ui.page, 'SSO setup, SAML');

  // The SAML provider's test sign-in: its form posts to the ACS, which sends the window to /sso/test-done.
  samlIdp.signInAs({ nameId: t.tenant.owner.email, email: t.tenant.owner.email, name: t.tenant.owner.name });
  const testWindow = ui.context.waitForEvent('page');
  await card('Test sign-in').getByRole('button', { name: 'Test sign-in' }).click();
  const passed = await testWindow;
  await passed.getByRole('heading', { name: 'Test sign-in passed' }).waitFor();
  await card('Test sign-in').getByRole('status').filter({ hasText: 'The test sign-in passed' }).waitFor();
  assert.equal((await connectionOnServer()).ssoReady, true);
  await passed.close();
});

test('at 390×844 nothing scrolls sideways', { skip: skipWithoutChromium }, async () => {
  await ui.page.setViewportSize({ width: 390, height: 844 });
  await ui.page.evaluate('scrollTo(0, 0)');
  await assertFitsPhone(ui.page, 'SSO setup', 'sso-setup-phone');
  await ui.page.setViewportSize({ width: 1280, height: 800 });
});

test('a member is told who manages SSO, and gets no form', { skip: skipWithoutChromium }, async () => {
  const { owner, admin, member } = t.tenant;
  await expectToldWhoManages(ui.page, t.app.url, member, '/sso', 'single sign-on', [
    { ...owner, role: 'owner' },
    { ...admin, role: 'admin' },
  ]);
  assert.equal(await ui.page.getByRole('form', { name: 'SSO connection settings' }).count(), 0);
});
