// What the console's browser tests share: Debian's Chromium launched the way the project launches it,
// an axe-core scan, and screenshots written to docs/console/ when CONSOLE_SCREENSHOTS=1.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { after, before } from 'node:test';
import { chromium, type Browser, type BrowserContext, type BrowserContextOptions, type Page } from 'playwright-core';

export const chromiumPath = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p));
export const skipWithoutChromium = chromiumPath ? false : 'Chromium is not installed (apt-get install -y chromium)';

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath!,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--no-first-run',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

export interface ConsolePage {
  browser: Browser;
  context: BrowserContext;
  page: Page;
}

/**
 * The before/after hooks of a console test file: after `prepare` (the app and whatever servers the file
 * needs), Chromium is launched once and opens one 1280×800 page, which the file's tests share in order;
 * the browser is closed after them. Its fields are set when the tests run.
 */
export function useConsolePage(
  prepare?: () => Promise<unknown>,
  contextOptions: BrowserContextOptions = {},
): ConsolePage {
  const ui = {} as ConsolePage;
  before(async () => {
    if (skipWithoutChromium) return;
    await prepare?.();
    ui.browser = await launchChromium();
    ui.context = await ui.browser.newContext({ viewport: { width: 1280, height: 800 }, ...contextOptions });
    ui.page = await ui.context.newPage();
  });
  after(async () => {
    await ui.browser?.close();
  });
  return ui;
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/**
 * Runs axe-core in the page and fails on any serious or critical violation. It is evaluated through the
 * DevTools protocol, which the page's CSP (no inline script) does not govern.
 */
export async function assertAccessible(page: Page, label: string) {
  await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const result = await (
      globalThis as unknown as {
        axe: { run(): Promise<{ violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }> };
      }
    ).axe.run();
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      targets: v.nodes.map((n) => n.target.join(' ')),
    }));
  });
  const severe = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  assert.deepEqual(severe, [], `${label}: axe-core found serious or critical violations`);
}

export async function screenshot(page: Page, name: string) {
  if (process.env.CONSOLE_SCREENSHOTS !== '1') return;
  await page.screenshot({ path: `docs/console/${name}.png` });
}
