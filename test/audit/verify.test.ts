// Tamper evidence: rows changed, deleted or reordered directly in the database make verification fail
// at that event (the route reports the first broken link).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createOrganization, signUp } from '../support/fixtures.ts';
import { useTenantApp } from '../support/harness.ts';

const t = useTenantApp();

/** An organization of its own with a few events; its events in chain order. */
async function organizationWithEvents(label: string) {
  const user = await signUp(t.app.url, label);
  const organizationId = await createOrganization(t.app.url, user, `${label} org`);
  for (const name of ['a', 'b', 'c', 'd'])
    assert.equal((await t.as(user.token).post(`/v1/orgs/${organizationId}/teams`, { name })).status, 201);
  const { rows } = await t.app.db.query<{ id: string; seq: number }>(
    'SELECT id, seq FROM audit_events WHERE chain_id = $1 ORDER BY seq',
    [organizationId],
  );
  assert.ok(rows.length >= 5);
  const verify = () => t.as(user.token).get(`/v1/orgs/${organizationId}/audit-events/verify`);
  assert.deepEqual((await verify()).body, { ok: true, checked: rows.length });
  return { rows, verify };
}

test('a changed event breaks the chain at that event', async () => {
  await t.ready;
  const { rows, verify } = await organizationWithEvents('changed');
  await t.app.db.query(`UPDATE audit_events SET changes = '{"name": "z"}' WHERE id = $1`, [rows[2]!.id]);
  const result = (await verify()).body;
  assert.equal(result.ok, false);
  assert.equal(result.brokenAt, rows[2]!.id);
  assert.equal(result.checked, 2);
  assert.match(result.reason, /content/);
});

test('a changed actor, time or outcome breaks it too', async () => {
  await t.ready;
  for (const change of [
    `actor_email = 'someone@else.test'`,
    `occurred_at = occurred_at + interval '1 second'`,
    `outcome = 'failure'`,
  ]) {
    const { rows, verify } = await organizationWithEvents('fields');
    await t.app.db.query(`UPDATE audit_events SET ${change} WHERE id = $1`, [rows[1]!.id]);
    const result = (await verify()).body;
    assert.equal(result.brokenAt, rows[1]!.id, change);
  }
});

test('a deleted event breaks the chain at the event after it', async () => {
  await t.ready;
  const { rows, verify } = await organizationWithEvents('deleted');
  await t.app.db.query('DELETE FROM audit_events WHERE id = $1', [rows[1]!.id]);
  const result = (await verify()).body;
  assert.equal(result.ok, false);
  assert.equal(result.brokenAt, rows[2]!.id);
  assert.match(result.reason, /missing or out of order/);
});

test('reordered events break the chain at the first moved one', async () => {
  await t.ready;
  const { rows, verify } = await organizationWithEvents('reordered');
  const [second, third] = [rows[1]!, rows[2]!];
  await t.app.db.query('UPDATE audit_events SET seq = -1 WHERE id = $1', [second.id]);
  await t.app.db.query('UPDATE audit_events SET seq = $2 WHERE id = $1', [third.id, second.seq]);
  await t.app.db.query('UPDATE audit_events SET seq = $2 WHERE id = $1', [second.id, third.seq]);
  const result = (await verify()).body;
  assert.equal(result.ok, false);
  assert.equal(result.brokenAt, third.id);
  assert.match(result.reason, /link/);
});

test("a rewritten hash does not hide a change: the next event's link no longer matches", async () => {
  await t.ready;
  const { rows, verify } = await organizationWithEvents('rehashed');
  await t.app.db.query(`UPDATE audit_events SET action = 'team.renamed', hash = repeat('a', 64) WHERE id = $1`, [
    rows[2]!.id,
  ]);
  const result = (await verify()).body;
  assert.equal(result.brokenAt, rows[2]!.id);
});

test('retention prunes old events and leaves a checkpoint: what remains still verifies, new events chain on, tampering still shows', async () => {
  await t.ready;
  const { pruneAuditEvents } = await import('../../src/modules/audit/index.ts');
  const { rows, verify } = await organizationWithEvents('retained');
  const { rows: times } = await t.app.db.query<{ id: string; occurred_at: Date }>(
    'SELECT id, occurred_at FROM audit_events WHERE id = $1',
    [rows[3]!.id],
  );
  // "Now" as seen 30 days of retention after the fourth event: the events before it are older than that.
  const cutoff = times[0]!.occurred_at;
  const result = await pruneAuditEvents(t.app.db, 30, new Date(cutoff.getTime() + 30 * 24 * 60 * 60 * 1000));
  assert.ok(result.pruned >= 1);
  const { rows: left } = await t.app.db.query<{ id: string }>(
    'SELECT id FROM audit_events WHERE chain_id = (SELECT chain_id FROM audit_events WHERE id = $1) ORDER BY seq',
    [rows[4]!.id],
  );
  assert.ok(left.length < rows.length && left.some((row) => row.id === rows[4]!.id));
  assert.deepEqual((await verify()).body, { ok: true, checked: left.length });
  // Pruning again prunes nothing more.
  const again = await pruneAuditEvents(t.app.db, 30, new Date(cutoff.getTime() + 30 * 24 * 60 * 60 * 1000));
  assert.equal(again.pruned, 0);
  // Removing the first event kept is still seen.
  await t.app.db.query('DELETE FROM audit_events WHERE id = $1', [left[0]!.id]);
  const broken = (await verify()).body;
  assert.equal(broken.ok, false);
  assert.equal(broken.brokenAt, left[1]!.id);
});

test('a chain pruned to its checkpoint goes on from it', async () => {
  await t.ready;
  const { pruneAuditEvents } = await import('../../src/modules/audit/index.ts');
  const user = await signUp(t.app.url, 'emptied');
  const organizationId = await createOrganization(t.app.url, user, 'emptied org');
  await pruneAuditEvents(t.app.db, 1, new Date(Date.now() + 3 * 24 * 60 * 60 * 1000));
  const { rows } = await t.app.db.query('SELECT 1 FROM audit_events WHERE chain_id = $1', [organizationId]);
  assert.equal(rows.length, 0);
  assert.equal((await t.as(user.token).post(`/v1/orgs/${organizationId}/teams`, { name: 'after' })).status, 201);
  assert.deepEqual((await t.as(user.token).get(`/v1/orgs/${organizationId}/audit-events/verify`)).body, {
    ok: true,
    checked: 1,
  });
});
