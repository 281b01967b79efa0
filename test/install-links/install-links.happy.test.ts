// Install links: minting, rotation and the desktop configuration, over real HTTP.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { useTenantApp } from '../support/harness.ts';
import { checkTenantRouting } from '../db/tenant-routing.ts';

const t = useTenantApp();
const tenantRouting = checkTenantRouting();

const mint = (token: string, body?: unknown) => t.as(token).post(`/v1/orgs/${t.tenant.orgId}/install-links`, body);
const config = (token: string) => t.as().get(`/v1/install-links/${token}`);

test('a member mints a link: 256-bit URL-safe token, page URL under PUBLIC_URL, rate-limit headers', async () => {
  const response = await mint(t.tenant.member.token, {});
  assert.equal(response.status, 201, response.text);
  const { token, installPageUrl } = response.body;
  assert.deepEqual(Object.keys(response.body).sort(), ['installPageUrl', 'token']);
  // URL-safe: RFC 3986 unreserved characters only ('.' separates the organization's id, which the token names).
  assert.match(token, /^[A-Za-z0-9_.-]+$/);
  const random = token.replace(`opl_${t.tenant.orgId}.`, '');
  assert.ok(Buffer.from(random, 'base64url').length >= 32, 'at least 256 random bits');
  assert.equal(installPageUrl, `${t.app.config.publicUrl}/install/${token}`);
  assert.equal(response.headers.get('ratelimit-limit'), '20');
  assert.equal(response.headers.get('ratelimit-remaining'), '19');
  assert.ok(Number(response.headers.get('ratelimit-reset')) > 0);
});

test('rotate defaults to false, and the body may be omitted: older links stay valid', async () => {
  const first = await mint(t.tenant.member.token);
  const second = await mint(t.tenant.admin.token, { rotate: false });
  const third = await mint(t.tenant.owner.token, {});
  for (const created of [first, second, third]) {
    assert.equal(created.status, 201, created.text);
    assert.equal((await config(created.body.token)).status, 200);
  }
});

test('the desktop configuration names the organization and the server', async () => {
  const { body } = await mint(t.tenant.member.token);
  const response = await config(body.token);
  assert.equal(response.status, 200, response.text);
  assert.deepEqual(response.body, {
    organization: { id: t.tenant.orgId, name: 'Acme' },
    serverUrl: t.app.config.publicUrl,
    installPageUrl: body.installPageUrl,
  });
  assert.equal(response.headers.get('cache-control'), 'no-store');
  assert.ok(response.headers.get('ratelimit-remaining'));
});

for (const role of ['admin', 'owner'] as const) {
  test(`an ${role} rotates: every older link stops working, the new one works`, async () => {
    const older = await Promise.all([
      mint(t.tenant.member.token),
      mint(t.tenant.admin.token),
      mint(t.tenant.owner.token),
    ]);
    const rotated = await mint(t.tenant[role].token, { rotate: true });
    assert.equal(rotated.status, 201, rotated.text);
    for (const link of older) {
      const response = await config(link.body.token);
      assert.equal(response.status, 404);
      assert.equal(response.body.error, 'install_link_not_found');
    }
    assert.equal((await config(rotated.body.token)).status, 200);
    // and a link minted after the rotation without rotating coexists with it
    const later = await mint(t.tenant.member.token);
    assert.equal((await config(later.body.token)).status, 200);
    assert.equal((await config(rotated.body.token)).status, 200);
  });
}

test('only a hash of the token is stored', async () => {
  const { body } = await mint(t.tenant.member.token);
  const hash = createHash('sha256').update(body.token).digest('hex');
  const { rows } = await t.app.db.query('SELECT * FROM install_links WHERE token_hash = $1', [hash]);
  assert.equal(rows.length, 1);
  assert.equal(rows[0].organization_id, t.tenant.orgId);
  const dump = JSON.stringify((await t.app.db.query('/* test */ SELECT * FROM install_links')).rows);
  assert.ok(!dump.includes(body.token.slice(4)), 'the token itself is nowhere in the table');
});

// A request body's default is written in its description rather than as `default` (src/http/openapi.ts:
// client generators read `default` as "always present" and would make integrators send it).
test('the OpenAPI document describes rotate as optional with default false', async () => {
  const { body } = await t.as().get('/openapi.json');
  const operation = body.paths['/v1/orgs/{organizationId}/install-links'].post;
  assert.equal(operation.operationId, 'createInstallLink');
  const schema = operation.requestBody.content['application/json'].schema;
  assert.equal(schema.type, 'object');
  assert.equal(schema.properties.rotate.type, 'boolean');
  assert.match(schema.properties.rotate.description, /Default (when left out: `)?false/);
  assert.ok(!(schema.required ?? []).includes('rotate'));
  assert.ok(operation.responses['429']);
  assert.ok(body.paths['/v1/install-links/{token}'].get.responses['404']);
});

test('without DESKTOP_DOWNLOAD_URL (the default) the page says the download is not configured, and offers no made-up link', async () => {
  assert.equal(t.app.config.desktopDownloadUrl, null);
  const { body } = await mint(t.tenant.member.token);
  const page = await fetch(body.installPageUrl);
  assert.equal(page.status, 200);
  const html = await page.text();
  assert.match(html, /id="download-not-configured"/);
  assert.match(html, /The desktop app download is not configured on this server yet/);
  assert.match(html, /DESKTOP_DOWNLOAD_URL/);
  assert.doesNotMatch(html, /id="download"/);
  assert.doesNotMatch(html, /github\.com/);
  // the rest of the page is there
  assert.match(html, /id="open-in-app"/);
  // the server said so as it started
  assert.ok(
    t.app.logLines.some((line) => line.level === 40 && /DESKTOP_DOWNLOAD_URL is not set/.test(String(line.msg))),
  );
});

// These flows' statements stay on one tenant (test/db/tenant-routing.ts): on a database distributed by
// tenant, each runs on one node.
test('their statements stay on one tenant', async () => {
  await tenantRouting.assertStatementsStayOnOneTenant(t.app.db, 5);
});
