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

/**
 * Answers the re-authentication prompt a stale session meets on a privileged action with `password`,
 * and waits until it closes (the console then re-sends the refused request).
 */
export async function confirmItIsYou(page: Page, password: string) {
  const prompt = page.getByRole('dialog', { name: 'Confirm it is you' });
  await prompt.waitFor();
  await prompt.getByLabel('Your password').fill(password);
  await prompt.getByRole('button', { name: 'Confirm and continue' }).click();
  await prompt.waitFor({ state: 'detached' });
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

/** The checks of a page at 390×844 (the caller sets the viewport): no sideways scrolling, axe-core, the screenshot. */
export async function assertFitsPhone(page: Page, label: string, screenshotName: string) {
  assert.ok((await horizontalOverflow(page)) <= 0, `${label}: no sideways scrolling at 390 wide`);
  await assertAccessible(page, `${label} at 390×844`);
  await screenshot(page, screenshotName);
}

/**
 * A destructive action's confirmation: `open` shows the dialog (scanned by axe-core), Cancel closes it
 * and `kept` checks that nothing changed, then `open` again and `confirmLabel` goes ahead.
 */
export async function cancelThenConfirm(
  page: Page,
  open: Locator,
  dialogName: string,
  confirmLabel: string,
  kept: () => Promise<void>,
) {
  await open.click();
  const dialog = page.getByRole('dialog', { name: dialogName });
  await dialog.waitFor();
  await assertAccessible(page, `${dialogName} (confirmation)`);
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await dialog.waitFor({ state: 'hidden' });
  await kept();
  await open.click();
  await dialog.getByRole('button', { name: confirmLabel }).click();
}

/**
 * Signs the shown person out and `member` in at `path` of a page only owners and admins use, and waits
 * until it says so, naming each of `managers` with their role; axe-core scans it.
 */
export async function expectToldWhoManages(
  page: Page,
  baseUrl: string,
  member: TestUser,
  path: string,
  what: string,
  managers: Array<TestUser & { role: string }>,
) {
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
