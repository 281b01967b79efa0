// Bad input to the audit-log stream routes: 400 invalid_request with details, nothing stored; a URL the
// outbound policy would never dial is refused when it is set; no stream is 404.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { useTenantApp } from '../support/harness.ts';

// No ALLOWED_PRIVATE_NETWORKS here: loopback is an address outbound calls may not reach.
const t = useTenantApp({ config: { logLevel: 'warn' } });
const path = () => `/v1/orgs/${t.tenant.orgId}/audit-stream`;

test('bad bodies are 400 with details naming the field, and store nothing', async () => {
  await t.ready;
  const { owner } = t.tenant;
  const cases: [unknown, string][] = [
    [{ url: 'ftp://siem.example.test/intake', enabled: true }, 'url'],
    [{ url: 'not a url', enabled: true }, 'url'],
    [{ url: 'https://user:secret@siem.example.test/intake', enabled: true }, 'url'],
    [{ url: `https://siem.example.test/${'a'.repeat(2100)}`, enabled: true }, 'url'],
    [{ url: 'https://siem.example.test/intake' }, 'enabled'],
    [{ url: 'https://siem.example.test/intake', enabled: 'yes' }, 'enabled'],
    [{ enabled: true }, 'url'],
    [{ url: 'https://siem.example.test/intake', enabled: true, rotateSecret: 1 }, 'rotateSecret'],
  ];
  for (const [body, field] of cases) {
    const response = await t.as(owner.token).put(path(), body);
    assert.equal(response.status, 400, JSON.stringify(body));
    assert.equal(response.body.error, 'invalid_request');
    assert.ok(
      response.body.details.some((detail: any) => detail.path.includes(field)),
      `${JSON.stringify(body)}: ${response.text}`,
    );
  }
  const extra = await t
    .as(owner.token)
    .put(path(), { url: 'https://siem.example.test/intake', enabled: true, secret: 'mine' });
  assert.equal(extra.status, 400);
  const raw = await t
    .as(owner.token)
    .put(path(), undefined, { raw: '{"url": ', headers: { 'content-type': 'application/json' } });
  assert.equal(raw.status, 400);
  assert.equal((await t.as(owner.token).get(path())).status, 404, 'nothing was stored');
});

test('a URL whose host is loopback, private or metadata is refused when set (400), unless ALLOWED_PRIVATE_NETWORKS lists it', async () => {
  await t.ready;
  const { owner } = t.tenant;
  for (const url of [
    'http://127.0.0.1:9/intake',
    'http://[::1]/intake',
    'http://169.254.169.254/latest',
    'https://10.0.0.8/intake',
  ]) {
    const response = await t.as(owner.token).put(path(), { url, enabled: true });
    assert.equal(response.status, 400, url);
    assert.deepEqual(
      response.body.details.map((d: any) => d.path),
      [['url']],
    );
  }
  assert.equal((await t.as(owner.token).get(path())).status, 404);
});

test('no stream: GET and DELETE are 404 audit_stream_not_found; a malformed organization id is 400', async () => {
  await t.ready;
  const { owner } = t.tenant;
  const read = await t.as(owner.token).get(path());
  assert.equal(read.status, 404);
  assert.equal(read.body.error, 'audit_stream_not_found');
  assert.equal((await t.as(owner.token).delete(path())).body.error, 'audit_stream_not_found');
  assert.equal((await t.as(owner.token).get('/v1/orgs/org_bad/audit-stream')).status, 400);
  assert.equal(
    (
      await t
        .as(owner.token)
        .put('/v1/orgs/org_bad/audit-stream', { url: 'https://siem.example.test/x', enabled: true })
    ).status,
    400,
  );
});

test('an unresolvable host is accepted (DNS may come later) and its deliveries fail visibly, not silently', async () => {
  await t.ready;
  const { owner } = t.tenant;
  const put = await t.as(owner.token).put(path(), { url: 'https://siem.invalid/intake', enabled: true });
  assert.equal(put.status, 200, put.text);
  const { eventually } = await import('./stream-support.ts');
  const stream = await eventually(
    async () => {
      const read = (await t.as(owner.token).get(path())).body.stream;
      return read.failedAttempts >= 1 && read;
    },
    { what: 'a failed attempt' },
  );
  assert.match(stream.lastError, /^attempt 1: delivery failed/);
  assert.equal(stream.state, 'retrying');
  assert.equal((await t.as(owner.token).delete(path())).status, 204);
});
