// The install page in a real browser (headless Chromium from Debian's `chromium` package).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { startTestApp, type TestApp } from '../support/app.ts';
import { createTenant, createOrganization, signUp, type Tenant } from '../support/fixtures.ts';
import { api } from '../support/http.ts';

const chromiumPath = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p));
const skip = chromiumPath
  ? false
  : 'Chromium is not installed (apt-get install -y chromium); the install page browser test cannot run';

let app: TestApp;
let tenant: Tenant;
let browser: Browser;
before(async () => {
  if (skip) return;
  app = await startTestApp({ desktopDownloadUrl: 'https://downloads.example.test/orgplane/latest' });
  tenant = await createTenant(app.url);
  browser = await chromium.launch({ executablePath: chromiumPath!, args: ['--no-sandbox', '--disable-gpu'] });
});
after(async () => {
  await browser?.close();
  await app?.close();
});

const mint = async (token: string, orgId: string, rotate = false) => {
  const response = await api(app.url, token).post(`/v1/orgs/${orgId}/install-links`, { rotate });
  assert.equal(response.status, 201, response.text);
  return response.body as { token: string; installPageUrl: string };
};

test('the page shows the organization with download and open-in-app actions', { skip }, async () => {
  const link = await mint(tenant.member.token, tenant.orgId);
  const page = await browser.newPage();
  try {
    const response = await page.goto(link.installPageUrl);
    assert.equal(response!.status(), 200);
    assert.match(response!.headers()['content-type']!, /^text\/html/);
    assert.equal(response!.headers()['referrer-policy'], 'no-referrer');
    assert.match(response!.headers()['content-security-policy']!, /default-src 'none'/);
    assert.equal(await page.title(), 'Join Acme on orgplane');
    assert.equal(await page.locator('#organization-name').textContent(), 'Acme');
    const download = page.getByRole('link', { name: 'Download the desktop app' });
    assert.equal(await download.getAttribute('href'), 'https://downloads.example.test/orgplane/latest');
    const open = page.getByRole('link', { name: 'Open in the app' });
    const href = new URL((await open.getAttribute('href'))!);
    assert.equal(href.protocol, 'orgplane:');
    assert.equal(href.searchParams.get('server'), app.config.publicUrl);
    assert.equal(href.searchParams.get('token'), link.token);
    // the configuration link on the page serves the desktop configuration
    const configHref = await page.locator('#config').getAttribute('href');
    const config = await api(app.url).get(new URL(configHref!).pathname);
    assert.equal(config.body.organization.id, tenant.orgId);
  } finally {
    await page.close();
  }
});

test('a rotated link shows the "no longer valid" page with 404', { skip }, async () => {
  const old = await mint(tenant.member.token, tenant.orgId);
  await mint(tenant.admin.token, tenant.orgId, true);
  const page = await browser.newPage();
  try {
    const response = await page.goto(old.installPageUrl);
    assert.equal(response!.status(), 404);
    assert.equal(await page.locator('h1').textContent(), 'This link is no longer valid');
    assert.equal(await page.getByRole('link', { name: 'Open in the app' }).count(), 0);
    assert.ok(!(await page.content()).includes('Acme'));
    const unknown = await page.goto(`${app.url}/install/opl_${'x'.repeat(43)}`);
    assert.equal(unknown!.status(), 404);
    assert.equal(await page.locator('h1').textContent(), 'This link is no longer valid');
    // An address cut short is a person's link too: the same page, not a JSON error (found by the fuzz).
    const cut = await page.goto(`${app.url}/install/`);
    assert.equal(cut!.status(), 404);
    assert.match(cut!.headers()['content-type'] ?? '', /^text\/html/);
    assert.equal(await page.locator('h1').textContent(), 'This link is no longer valid');
  } finally {
    await page.close();
  }
});

test('a hostile organization name is shown as text and runs nothing', { skip }, async () => {
  const evilName = `<img src=x onerror="document.title='pwned'"><script>document.title='pwned'</script>"'&`;
  const owner = await signUp(app.url, 'evil');
  const orgId = await createOrganization(app.url, owner, evilName);
  const link = await mint(owner.token, orgId);
  const page = await browser.newPage();
  const dialogs: string[] = [];
  page.on('dialog', (dialog) => {
    dialogs.push(dialog.message());
    void dialog.dismiss();
  });
  try {
    await page.goto(link.installPageUrl);
    assert.equal(await page.locator('#organization-name').textContent(), evilName);
    assert.equal(await page.locator('main img').count(), 0);
    assert.equal(await page.locator('main script').count(), 0);
    assert.notEqual(await page.title(), 'pwned');
    assert.deepEqual(dialogs, []);
  } finally {
    await page.close();
  }
});
