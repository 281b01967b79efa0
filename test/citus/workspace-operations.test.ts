// A tenant's workspace on a real Citus cluster, through the real HTTP app: MCP connections (create, probe,
// edit with the concurrency token, access, tool policy, tools, delete), a person's memories (add,
// batch, list, get, search with and without filters, delete) and a messenger bot (the webhook's claims,
// the delivery workers' takes and settles). Every answer must be the one a single
// PostgreSQL gives; a statement Citus refuses shows here as a 500.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createTenant, type Tenant } from '../support/fixtures.ts';
import { startStreamableServer, type RunningServer } from '../support/mcp-servers.ts';
import { startBotPlatform, type BotPlatform } from '../support/bot-platform.ts';
import { memoryClient } from '../memory/helpers.ts';
import { pruneExpiredMemories } from '../../src/modules/memory/expiry-worker.ts';
import {
  connectBot,
  eventually,
  postUpdate,
  startDeliveryReceiver,
  type DeliveryReceiver,
} from '../messenger/support.ts';
import { useCitusApp } from './citus-app.ts';

const LOOPBACK = ['127.0.0.0/8', '::1/128'];
let platform: BotPlatform | undefined;
let receiver: DeliveryReceiver | undefined;
const citus = useCitusApp(async () => {
  [platform, receiver] = await Promise.all([startBotPlatform(), startDeliveryReceiver()]);
  return { allowedPrivateNetworks: LOOPBACK, messengerApiRoot: platform.url };
});
const { skip } = citus;
let tenant: Tenant;
let mcp: RunningServer;

before(
  async () => {
    await citus.ready;
    if (skip) return;
    [tenant, mcp] = await Promise.all([
      createTenant(citus.app.url),
      startStreamableServer({ tools: ['search', 'fetch'] }),
    ]);
  },
  { timeout: 600_000 },
);
after(async () => {
  await Promise.all([mcp?.close(), receiver?.close(), platform?.close()]);
});

test('memories: add, batch, list, get, search (ranked, filtered), delete', { skip }, async () => {
  const memory = memoryClient(citus.app.url, tenant.member.token);
  const tomatoes = await memory.create({
    content: 'Tomatoes need six hours of sun and deep watering twice a week',
    tags: ['garden'],
  });
  const batch = await memory.batch([
    { content: 'Basil grows well next to tomatoes in the garden', tags: ['garden'], source: 'notes' },
    { content: 'The garden hose leaks at the tap; replace the washer' },
    { content: 'Book club meets on Thursdays at the library' },
  ]);
  assert.equal(batch.length, 3);
  assert.equal((await memory.listAll()).length, 4);
  const fetched = await memory.client.get(`/v1/memory/${tomatoes.id}`);
  assert.equal(fetched.status, 200, fetched.text);
  assert.equal(fetched.body.memory.content, tomatoes.content);

  const found = await memory.search('watering the tomatoes');
  assert.equal(found[0]!.id, tomatoes.id);
  // The hose memory has no query word: it comes as the one written right after the basil one (neighbour context).
  assert.deepEqual(new Set(found.map((result) => result.id)), new Set([tomatoes.id, batch[0]!.id, batch[1]!.id]));
  assert.deepEqual(
    (await memory.search('tomatoes', '&source=notes')).map((result) => result.id),
    [batch[0]!.id],
  );
  assert.deepEqual(
    (await memory.search('tomatoes', '&tags=garden')).map((result) => result.id).sort(),
    [tomatoes.id, batch[0]!.id].sort(),
  );
  assert.deepEqual(await memory.search('submarine'), []);

  // Another person's memories are theirs: the same words find nothing of the member's.
  const other = memoryClient(citus.app.url, tenant.admin.token);
  assert.deepEqual(await other.search('tomatoes'), []);

  await memory.remove(tomatoes.id);
  assert.deepEqual(
    (await memory.search('watering tomatoes')).map((result) => result.id),
    [batch[0]!.id, batch[1]!.id],
  );
});

test('memory lifecycle: change with history, supersede, deduplicate, expire and prune, filter by time and speaker', {
  skip,
}, async () => {
  const memory = memoryClient(citus.app.url, tenant.member.token);
  const first = await memory.create({
    content: 'The ferry leaves at nine',
    occurredAt: '2026-05-02T08:00:00Z',
    speaker: 'Ines',
  });
  const changed = await memory.client.patch(`/v1/memory/${first.id}`, { content: 'The ferry leaves at ten' });
  assert.equal(changed.status, 200, changed.text);
  assert.deepEqual(
    (await memory.search('ferry ten')).map((result) => result.id),
    [first.id],
  );
  const history = await memory.client.get(`/v1/memory/${first.id}/history`);
  assert.deepEqual(
    history.body.versions.map((version: { content: string }) => version.content),
    ['The ferry leaves at nine', 'The ferry leaves at ten'],
  );
  const same = await memory.client.post('/v1/memory', { content: 'the ferry leaves at TEN' });
  assert.equal(same.status, 200, same.text);
  assert.equal(same.body.memory.id, first.id);
  const successor = await memory.client.post('/v1/memory', {
    content: 'The ferry leaves at eleven',
    supersedes: first.id,
  });
  assert.equal(successor.status, 201, successor.text);
  assert.deepEqual(
    (await memory.search('ferry')).map((result) => result.id),
    [successor.body.memory.id],
  );
  const dated = await memory.create({
    content: 'Ines booked the ferry',
    occurredAt: '2026-05-20T08:00:00Z',
    speaker: 'Ines',
  });
  const window = await memory.client.get(
    `/v1/memory/search?q=${encodeURIComponent('ferry in May')}&now=2026-07-01T00:00:00Z&speaker=ines`,
  );
  assert.deepEqual(
    window.body.results.map((result: { id: string }) => result.id),
    [dated.id],
  );
  await memory.client.patch(`/v1/memory/${dated.id}`, { expiresAt: '2020-01-01T00:00:00Z' });
  assert.equal((await memory.client.get(`/v1/memory/${dated.id}`)).status, 404);
  const versions = async () =>
    (
      await citus.app.db.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM memory_versions WHERE user_id = $1 AND memory_id = $2',
        [tenant.member.userId, dated.id],
      )
    ).rows[0]!.n;
  assert.equal(await versions(), 1);
  const pruned = await pruneExpiredMemories(citus.app.db);
  assert.ok(pruned.pruned >= 1, JSON.stringify(pruned));
  // Its earlier version went with it, by the foreign key's cascade between the co-located shards.
  assert.equal(await versions(), 0);
});

test('several searches and writes of one person at once all answer', { skip }, async () => {
  const memory = memoryClient(citus.app.url, tenant.owner.token);
  await memory.batch(
    Array.from({ length: 20 }, (_, i) => ({ content: `meeting notes ${i}: discussed the roadmap and the budget` })),
  );
  const answers = await Promise.all([
    ...Array.from({ length: 6 }, () => memory.search('roadmap budget', '&limit=5')),
    memory.create({ content: 'the roadmap review moved to Friday' }).then(() => []),
  ]);
  for (const results of answers.slice(0, 6)) assert.equal(results.length, 5);
});

test('MCP connections: create (probed), get, list, test, edit with the concurrency token, a stale edit, access, tool policy, tools, delete', {
  skip,
}, async () => {
  const admin = citus.as(tenant.admin.token);
  const body = {
    name: 'Docs server',
    url: mcp.url,
    authType: 'none',
    credentialMode: 'shared',
    access: { orgWide: true },
  };
  const created = await admin.post('/v1/mcp-connections', body);
  assert.equal(created.status, 201, created.text);
  const connection = created.body;
  assert.equal(connection.connected, true);

  assert.equal((await admin.get(`/v1/mcp-connections/${connection.id}`)).status, 200);
  const listed = await citus.as(tenant.member.token).get('/v1/mcp-connections');
  assert.equal(listed.status, 200, listed.text);
  assert.deepEqual(
    listed.body.connections.map((c: { id: string }) => c.id),
    [connection.id],
  );
  const tested = await admin.post(`/v1/mcp-connections/${connection.id}/test`);
  assert.equal(tested.status, 200, tested.text);

  const edit = (expectedUpdatedAt: string, name: string) =>
    admin.put(`/v1/mcp-connections/${connection.id}`, { ...body, expectedUpdatedAt, name });
  const renamed = await edit(connection.updatedAt, 'Docs');
  assert.equal(renamed.status, 200, renamed.text);
  assert.equal(renamed.body.name, 'Docs');
  const stale = await edit(connection.updatedAt, 'Stale');
  assert.equal(stale.status, 409, stale.text);
  const moved = await admin.put(`/v1/mcp-connections/${connection.id}`, {
    ...body,
    url: `${mcp.url}?v=2`,
    expectedUpdatedAt: renamed.body.updatedAt,
  });
  assert.equal(moved.status, 200, moved.text);

  const access = await admin.put(`/v1/mcp-connections/${connection.id}/access`, {
    access: { memberIds: [tenant.member.memberId] },
  });
  assert.equal(access.status, 200, access.text);
  assert.deepEqual(access.body.access, { orgWide: false, memberIds: [tenant.member.memberId], teamIds: [] });
  const policy = await admin.put(`/v1/mcp-connections/${connection.id}/tool-policy`, {
    mode: 'deny_list',
    tools: ['fetch'],
    destructiveNeedsApproval: false,
  });
  assert.equal(policy.status, 200, policy.text);
  const tools = await citus.as(tenant.member.token).get(`/v1/mcp-connections/${connection.id}/tools`);
  assert.equal(tools.status, 200, tools.text);

  assert.equal((await admin.delete(`/v1/mcp-connections/${connection.id}`)).status, 204);
  assert.equal((await admin.get(`/v1/mcp-connections/${connection.id}`)).status, 404);
});

test('messenger: a bot connected, its updates claimed from the webhook, delivered in order per chat, a duplicate acknowledged once, the connection deleted', {
  skip,
}, async () => {
  const env = { app: citus.app, platform: platform!, receiver: receiver!, tenant, close: async () => {} };
  const bot = await connectBot(env);
  const secret = platform!.webhookOf(bot.bot.token)!.secretToken!;
  const chats = [501, 502, 501, 503, 501];
  const updates = chats.map((chatId, index) =>
    platform!.messageUpdate(bot.bot.token, { chatId, text: `message ${index}` }),
  );
  const ids = updates.map((update) => update.update_id as number);
  for (const update of updates) {
    const claimed = await postUpdate(citus.app.url, bot.id, update, secret);
    assert.deepEqual([claimed.status, claimed.json], [200, { ok: true, accepted: true }]);
  }
  const duplicate = await postUpdate(citus.app.url, bot.id, updates[0], secret);
  assert.deepEqual([duplicate.status, duplicate.json], [200, { ok: true, accepted: false, reason: 'duplicate' }]);
  const delivered = () =>
    receiver!.received.filter((d) => d.json?.connectionId === bot.id).map((d) => d.json.update.update_id as number);
  await eventually(() => delivered().length >= updates.length || undefined, { what: 'every delivery' });
  assert.deepEqual(
    [...delivered()].sort((a, b) => a - b),
    [...ids].sort((a, b) => a - b),
  );
  const chat501 = ids.filter((_, index) => chats[index] === 501);
  assert.deepEqual(
    delivered().filter((id) => chat501.includes(id)),
    chat501,
    "one chat's updates in order",
  );
  const listed = await eventually(
    async () => {
      const response = await citus
        .as(tenant.admin.token)
        .get(`/v1/messenger/connections/${bot.id}/updates?status=delivered`);
      return response.body.updates.length === updates.length ? response : undefined;
    },
    { what: 'the delivered state' },
  );
  assert.equal(listed.status, 200);
  assert.equal((await citus.as(tenant.admin.token).delete(`/v1/messenger/connections/${bot.id}`)).status, 204);
});

test('the server logged no error', { skip }, () => {
  assert.deepEqual(citus.serverErrors(), []);
});
