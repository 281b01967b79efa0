// What the console's page tests share beyond the browser: signing a person in through the sign-in
// page, the console's own session token, and waiting for the page to catch up with its API calls.
import assert from 'node:assert/strict';
import type { Locator, Page } from 'playwright-core';
import type { TestUser } from '../support/fixtures.ts';
import { assertAccessible, screenshot } from './browser.ts';

/** Polls `check` until it holds (the page updates after its API call answers). */
export async function waitUntil(check: () => Promise<boolean>, what: string, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Opens the console at `path` and signs `user` in with their password: a fresh session of its own. */
export async function signInAs(page: Page, baseUrl: string, user: TestUser, path = '/members') {
  await page.goto(`${baseUrl}${path}`);
  await page.getByLabel('Email').fill(user.email);
  await page.getByLabel('Password').fill(user.password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}

/** The session token the console keeps in sessionStorage. */
export async function consoleToken(page: Page): Promise<string> {
  const token = await page.evaluate(() => sessionStorage.getItem('orgplane.session'));
  if (!token) throw new Error('the console holds no session');
  return token;
}

/** Asserts nothing scrolls sideways (the 390×844 check). */
export async function horizontalOverflow(page: Page): Promise<number> {
  return page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
}

/** Signs out through the shell and waits until the sign-in page is back (the server ended the session). */
export async function signOut(page: Page) {
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('heading', { name: 'Sign in to orgplane' }).waitFor();
}

/** The 390×844 check: nothing scrolls sideways and axe-core passes (and the screenshot, if named); back to 1280×800 after. */
export async function checkPhoneLayout(page: Page, label: string, screenshotName?: string) {
  await page.setViewportSize({ width: 390, height: 844 });
  try {
    const overflow = await horizontalOverflow(page);
    assert.ok(overflow <= 0, `${label}: the page scrolls sideways by ${overflow}px at 390 wide`);
    await assertAccessible(page, `${label} at 390×844`);
    await page.evaluate('scrollTo(0, 0)');
    if (screenshotName) await screenshot(page, screenshotName);
  } finally {
    await page.setViewportSize({ width: 1280, height: 800 });
  }
}

/**
 * Signs the shown person out and `member` in at `path` of a page only owners and admins use, and waits
 * until it says so, naming each of `managers` with their role; axe-core scans it.
 */
export async function expectToldWhoManages(page: Page, baseUrl: string, member: TestUser, path: string, what: string, managers: Array<TestUser & { role: string }>) {
  await signOut(page);
  await signInAs(page, baseUrl, member, path);
  await page.getByText(`Only owners and admins manage ${what}.`).waitFor();
  for (const manager of managers) await page.getByText(`${manager.name} (${manager.email}), ${manager.role}`).waitFor();
  await assertAccessible(page, `${path} as a member`);
}

/** Closes an open `dialog` with Escape, as a keyboard user would, and waits until it is gone. */
export async function dismissWithEscape(page: Page, dialog: Locator) {
  await dialog.waitFor();
  await page.keyboard.press('Escape');
  await dialog.waitFor({ state: 'detached' });
}
