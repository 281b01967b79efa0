// DELETE /v1/orgs/{organizationId}: what deleting an organization leaves behind, checked on the database
// itself. The reliability world gives organization A data in every module (members, teams, invitations,
// API keys, install links, MCP connections with stored OAuth tokens and plugins, a bot with its routes,
// memory, SSO with a verified domain, SCIM users and groups, an audit stream); after its owner deletes
// it, no column of any table may still name it, but for the one event that records the deletion in the
// instance's log, and organization B is as it was.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Queryable } from '../../src/db/database.ts';
import { api } from '../support/http.ts';
import { startWorld, type World } from '../reliability/world.ts';
import { eventsOfRequest, freshRequestId } from '../audit/helpers.ts';

let world: World;
let starting: Promise<World> | undefined;
const hookTimeout = { timeout: 600_000 };

before(async () => {
  starting = startWorld({ logLevel: 'warn' });
  world = await starting;
}, hookTimeout);

after(async () => {
  await (await starting?.catch(() => undefined))?.close();
}, hookTimeout);

interface Column {
  table: string;
  column: string;
}

/** Every text-like column of every table of the schema (ids are text; changes and bodies are jsonb). */
async function textColumns(db: Queryable): Promise<Column[]> {
  const { rows } = await db.query<{ table_name: string; column_name: string }>(
    `/* test */ SELECT c.table_name, c.column_name
       FROM information_schema.columns c
       JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
      WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE'
        AND c.data_type IN ('text', 'character varying', 'jsonb', 'json')
        AND c.table_name <> 'schema_migrations'
      ORDER BY 1, 2`,
  );
  return rows.map((row) => ({ table: row.table_name, column: row.column_name }));
}

/** The rows of each table that name `id` in any of its text columns, by table. */
async function rowsNaming(db: Queryable, id: string): Promise<Record<string, number>> {
  const byTable = new Map<string, string[]>();
  for (const { table, column } of await textColumns(db)) byTable.set(table, [...(byTable.get(table) ?? []), column]);
  const found: Record<string, number> = {};
  for (const [table, columns] of byTable) {
    const where = columns.map((column) => `strpos("${column}"::text, $1) > 0`).join(' OR ');
    const { rows } = await db.query<{ n: number }>(
      `/* test */ SELECT count(*)::int AS n FROM "${table}" WHERE ${where}`,
      [id],
    );
    if (rows[0]!.n > 0) found[table] = rows[0]!.n;
  }
  return found;
}

test('the owner deletes an organization: no row of any table names it after, the other organization keeps all of its own', {
  timeout: 600_000,
}, async () => {
  const { tenant, app } = world;
  const db = app.db;
  const before = await rowsNaming(db, tenant.orgId);
  // The world really put the organization in every module: otherwise the check below would prove little.
  for (const table of [
    'members',
    'user_memberships',
    'organization_owners',
    'teams',
    'team_members',
    'invitations',
    'api_keys',
    'install_links',
    'mcp_connections',
    'mcp_connection_credentials',
    'mcp_oauth_registered_clients',
    'plugins',
    'messenger_connections',
    'messenger_webhook_routes',
    'memory_banks',
    'memories',
    'sso_connections',
    'scim_connectors',
    'scim_users',
    'scim_groups',
    'scim_group_members',
    'audit_events',
    'audit_chain_heads',
    'sessions',
  ])
    assert.ok(before[table], `the world left a row of ${table} naming organization A (found: ${Object.keys(before)})`);
  // An audit stream and a bot update, so that their tables are checked too.
  assert.equal(
    (
      await api(app.url, tenant.owner.token).put(`/v1/orgs/${tenant.orgId}/audit-stream`, {
        url: world.receiverUrl,
        enabled: true,
      })
    ).status,
    200,
  );
  // A memory of the organization with an earlier version: the text it had is in memory_versions, whose
  // rows name the person but not the organization, so they must go with the memory.
  const oldText = 'The deploy key rotates every Monday';
  const changed = await api(app.url, tenant.member.token).patch(`/v1/memory/${world.ids.memoryId}`, {
    content: 'The deploy key rotates every Friday\nAsk the platform team.',
  });
  assert.equal(changed.status, 200, changed.text);
  const versionsHolding = async (text: string) =>
    (
      await db.query<{ n: number }>(
        '/* test */ SELECT count(*)::int AS n FROM memory_versions WHERE strpos(content, $1) > 0',
        [text],
      )
    ).rows[0]!.n;
  assert.equal(await versionsHolding(oldText), 1);
  const otherBefore = await rowsNaming(db, tenant.otherOrgId);

  const requestId = freshRequestId();
  const deleted = await api(app.url, tenant.owner.token).send(
    'DELETE',
    `/v1/orgs/${tenant.orgId}`,
    { confirm: 'Acme' },
    { headers: { 'x-request-id': requestId } },
  );
  assert.equal(deleted.status, 204, deleted.text);

  const left = await rowsNaming(db, tenant.orgId);
  // Only the instance's own log still names it: the record of the deletion, and of what an instance
  // administrator did to it before (its plan).
  const { audit_events: instanceRecords = 0, ...elsewhere } = left;
  assert.deepEqual(elsewhere, {}, "no row but the instance log's names it");
  assert.ok(instanceRecords >= 1);
  const inOrganizationLogs = await db.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM audit_events WHERE chain_id <> 'instance' AND to_jsonb(audit_events)::text LIKE '%' || $1 || '%'",
    [tenant.orgId],
  );
  assert.equal(inOrganizationLogs.rows[0]!.n, 0, "no organization's log names it");
  assert.equal(await versionsHolding(oldText), 0, "the memory's earlier text went with it");
  const events = await eventsOfRequest(app, requestId);
  assert.equal(events.length, 1);
  const [event] = events;
  assert.equal(event.chain_id, 'instance', "the deletion is in the instance's log, which outlives the organization");
  assert.equal(event.organization_id, null);
  assert.equal(event.action, 'organization.deleted');
  assert.equal(event.target_type, 'organization');
  assert.equal(event.target_id, tenant.orgId);
  assert.equal(event.target_name, 'Acme');
  assert.equal(event.actor_id, tenant.owner.userId);
  assert.equal(event.actor_email, tenant.owner.email);

  assert.deepEqual(await rowsNaming(db, tenant.otherOrgId), otherBefore, "organization B's rows are all there");
  const otherVerify = await api(app.url, tenant.otherAdmin.token).get(
    `/v1/orgs/${tenant.otherOrgId}/audit-events/verify`,
  );
  assert.equal(otherVerify.status, 200, otherVerify.text);
  assert.equal(otherVerify.body.ok, true, otherVerify.text);

  // The people keep their accounts and sessions, with no active organization.
  for (const user of [tenant.owner, tenant.admin, tenant.member]) {
    const me = await api(app.url, user.token).get('/v1/me');
    assert.equal(me.status, 200, me.text);
    assert.deepEqual(me.body.organizations, []);
    const active = await api(app.url, user.token).get('/v1/org');
    assert.equal(active.status, 404, active.text);
    assert.equal(active.body.error, 'organization_not_found');
  }
  // The organization's credentials open nothing any more.
  assert.equal(
    (await api(app.url).get(`/v1/orgs/${tenant.orgId}/members`, { headers: { 'x-api-key': world.apiKey } })).status,
    401,
  );
  assert.equal((await api(app.url, world.scimToken).get('/scim/v2/Users')).status, 401);
  const gone = await api(app.url, tenant.owner.token).send('DELETE', `/v1/orgs/${tenant.orgId}`, { confirm: 'Acme' });
  assert.equal(gone.status, 404, gone.text);
  // B's admin, untouched, still works in B.
  const otherMembers = await api(app.url, tenant.otherAdmin.token).get(`/v1/orgs/${tenant.otherOrgId}/members`);
  assert.equal(otherMembers.status, 200, otherMembers.text);
});
