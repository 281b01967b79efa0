// An unknown console path: a "Page not found" page inside the shell with a way home, not another page;
// known paths, their parameters and Back still route.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useTenantApp } from '../support/harness.ts';
import { assertAccessible, skipWithoutChromium, useConsolePage } from './browser.ts';
import { signInAs } from './session.ts';

const t = useTenantApp();
const ui = useConsolePage(() => t.ready);

test('an unknown path shows Not found with a link home; known pages and parameters still route', {
  skip: skipWithoutChromium,
}, async () => {
  await signInAs(ui.page, t.app.url, t.tenant.owner, '/no/such/page');
  await ui.page.getByRole('heading', { name: 'Page not found', level: 1 }).waitFor();
  await assertAccessible(ui.page, 'not found');
  await ui.page.getByRole('link', { name: "Go to the console's home page" }).click();
  await ui.page.getByRole('heading', { name: 'Members', level: 1 }).waitFor();
  assert.equal(new URL(ui.page.url()).pathname, '/');
  await ui.page.goto(`${t.app.url}/bots/`);
  await ui.page.getByRole('heading', { name: 'Bots', level: 1 }).waitFor();
  await ui.page.goto(`${t.app.url}/mcp-connections/nope`);
  await ui.page.getByText('← All connections').waitFor();
  await ui.page.getByText('Loading the connection', { exact: false }).waitFor({ state: 'hidden' });
  await ui.page.goBack();
  await ui.page.getByRole('heading', { name: 'Bots', level: 1 }).waitFor();
  await ui.page.goto(`${t.app.url}/memory`);
  await ui.page.getByRole('search', { name: 'Memory search' }).waitFor();
});
