// The export across many pages, and the text of its lines: every event of the range once, oldest first,
// whatever the number of pages it is read in, each line the event as the list gives it. (Events are also
// inserted with SQL, as the bench does: the export does not verify the chain, and this file's app is its own.)
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { useTenantApp } from '../support/harness.ts';
import { allEvents } from './helpers.ts';
import { checkTenantRouting } from '../db/tenant-routing.ts';

const t = useTenantApp();
const tenantRouting = checkTenantRouting();

test('an exported line is the event as the list gives it (every field, nulls, changes, odd characters); CSV cells are quoted and defused', async () => {
  await t.ready;
  const { owner, orgId } = t.tenant;
  const odd = '=HYPERLINK("x") "quoted", tab\t, newline\n, é 🧪 \u0001 \\ back';
  assert.equal(
    (
      await t
        .as(owner.token)
        .post(`/v1/orgs/${orgId}/teams`, { name: odd }, { headers: { 'user-agent': '+ua "agent"' } })
    ).status,
    201,
  );
  const listed = (await allEvents(t.app, owner.token, orgId)).reverse();
  const exported = (await t.as(owner.token).get(`/v1/orgs/${orgId}/audit-events/export`)).text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));
  assert.deepEqual(exported, listed);
  const created = exported.at(-1);
  assert.equal(created.target.name, odd);
  assert.equal(created.changes.name, odd);
  assert.match(created.occurredAt, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  const csv = (await t.as(owner.token).get(`/v1/orgs/${orgId}/audit-events/export?format=csv`)).text;
  const last = csv.slice(csv.lastIndexOf(`"${created.id}"`));
  assert.ok(last.includes(`,"'${odd.replaceAll('"', '""')}",`), 'the name defused and its quotes doubled');
  assert.ok(last.includes(`,"'+ua ""agent""",`), 'the user agent defused');
  assert.ok(
    last.startsWith(
      `"${created.id}","${created.occurredAt}","${orgId}","team.created","success","user","${owner.userId}",`,
    ),
  );
  assert.ok(last.endsWith('\r\n'));
});

test('an export of 2,345 events (several pages) gives each once, in order, in NDJSON and CSV', async () => {
  await t.ready;
  const { owner, orgId } = t.tenant;
  const { rows } = await t.app.db.query<{ head: number }>(
    'SELECT max(seq) AS head FROM audit_events WHERE chain_id = $1',
    [orgId],
  );
  const head = Number(rows[0]!.head);
  await t.app.db.query(
    `INSERT INTO audit_events (id, chain_id, seq, organization_id, occurred_at, action, outcome, actor_type, actor_id, target_type, target_id, changes, prev_hash, hash)
     SELECT 'aud_export_' || n, $1, $2::int + n, $1, now(), 'team.created', 'success', 'user', 'usr_x', 'team', 'tm_' || n, jsonb_build_object('n', n), repeat('0', 64), repeat('1', 64)
       FROM generate_series(1, 2345) AS n`,
    [orgId, head],
  );
  // Where the app's own appends would have left the chain's head (they continue after it).
  await t.app.db.query('UPDATE audit_chain_heads SET seq = $2::int + 2345 WHERE chain_id = $1', [orgId, head]);
  const ndjson = await t.as(owner.token).get(`/v1/orgs/${orgId}/audit-events/export`);
  assert.equal(ndjson.status, 200);
  const events = ndjson.text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));
  const inserted = events.filter((event) => event.id.startsWith('aud_export_'));
  assert.deepEqual(
    inserted.map((event) => event.changes.n),
    Array.from({ length: 2345 }, (_, i) => i + 1),
  );
  assert.equal(events.length, head + 2345);
  assert.equal(new Set(events.map((event) => event.id)).size, events.length);
  const csv = await t.as(owner.token).get(`/v1/orgs/${orgId}/audit-events/export?format=csv`);
  const lines = csv.text.split('\r\n').filter(Boolean);
  assert.equal(lines.length, 1 + head + 2345);
  assert.match(lines.at(-1)!, /^"aud_export_2345",/);
});

// These flows' statements stay on one tenant (test/db/tenant-routing.ts): on a database distributed by
// tenant, each runs on one node.
test('their statements stay on one tenant', async () => {
  await tenantRouting.assertStatementsStayOnOneTenant(t.app.db, 10);
});
