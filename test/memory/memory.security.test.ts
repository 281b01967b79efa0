// Memory: only the signed-in user's own memories, in the active organization, ever come back.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createOrganization, signUp } from '../support/fixtures.ts';
import { useTenantApp } from '../support/harness.ts';
import { api, type ApiResponse } from '../support/http.ts';
import { memoryClient } from './helpers.ts';

const t = useTenantApp();

const routes = (id: string) =>
  [
    ['POST', '/v1/memory', { content: 'x' }],
    ['POST', '/v1/memory/batch', { memories: [{ content: 'x' }] }],
    ['GET', '/v1/memory'],
    ['GET', `/v1/memory/${id}`],
    ['DELETE', `/v1/memory/${id}`],
    ['GET', '/v1/memory/search?q=x'],
  ] as const;

test('anonymous callers, unknown or tampered session tokens and organization API keys get 401', async () => {
  const owned = await memoryClient(t.app.url, t.tenant.member.token).create({ content: 'secret plan' });
  const apiKey = await api(t.app.url, t.tenant.owner.token).post(`/v1/orgs/${t.tenant.orgId}/api-keys`, {
    name: 'k',
    role: 'member',
  });
  const headerSets: Record<string, string>[] = [
    {},
    { authorization: 'Bearer not-a-session' },
    { authorization: `Bearer ${t.tenant.member.token.slice(0, -2)}xx` },
    { authorization: 'Basic Zm9vOmJhcg==' },
  ];
  assert.equal(apiKey.status, 201, apiKey.text);
  headerSets.push({ 'x-api-key': apiKey.body.key });
  for (const headers of headerSets) {
    for (const [method, path, body] of routes(owned.id)) {
      const response: ApiResponse = await api(t.app.url).send(method, path, body, { headers });
      assert.equal(
        response.status,
        401,
        `${method} ${path} with ${JSON.stringify(Object.keys(headers))}: ${response.text}`,
      );
      assert.equal(response.body.error, 'unauthorized');
    }
  }
  assert.equal((await memoryClient(t.app.url, t.tenant.member.token).client.get(`/v1/memory/${owned.id}`)).status, 200);
});

test('another user never sees my memories, even with identical content, in search, list, get or delete', async () => {
  const mine = memoryClient(t.app.url, t.tenant.member.token);
  const theirs = memoryClient(t.app.url, t.tenant.admin.token);
  const content = 'Door code for the server room is 4815';
  const my = await mine.create({ content, tags: ['codes'] });
  const their = await theirs.create({ content, tags: ['codes'] });

  // First the memory itself; after it, at most the searcher's own memory written just before it (neighbour context).
  const myResults = (await mine.search('door code server room')).map((r) => r.id);
  assert.equal(myResults[0], my.id);
  const myIds = new Set((await mine.listAll()).map((m) => m.id));
  assert.ok(myResults.length <= 2 && myResults.every((id) => myIds.has(id)));
  const theirResults = (await theirs.search('door code server room')).map((r) => r.id);
  assert.equal(theirResults[0], their.id);
  const theirIds = new Set((await theirs.listAll()).map((m) => m.id));
  assert.ok(theirResults.length <= 2 && theirResults.every((id) => theirIds.has(id)));
  assert.ok(!(await theirs.listAll()).some((m) => m.id === my.id));
  // Same organization, even its owner: memories are personal.
  const owner = memoryClient(t.app.url, t.tenant.owner.token);
  assert.ok(!(await owner.search('door code server room', '&limit=100')).some((r) => r.id === my.id));

  for (const client of [
    theirs,
    owner,
    memoryClient(t.app.url, t.tenant.otherAdmin.token),
    memoryClient(t.app.url, t.tenant.outsider.token),
  ]) {
    const get = await client.client.get(`/v1/memory/${my.id}`);
    assert.equal(get.status, 404, get.text);
    assert.equal(get.body.error, 'memory_not_found');
    const del = await client.client.delete(`/v1/memory/${my.id}`);
    assert.equal(del.status, 404, del.text);
  }
  assert.equal((await mine.client.get(`/v1/memory/${my.id}`)).status, 200, 'still there after the attempts');
});

test("another user's memories never change my scores (statistics are per user)", async () => {
  const me = await signUp(t.app.url, 'stats-me');
  await createOrganization(t.app.url, me, 'Stats');
  const mine = memoryClient(t.app.url, me.token);
  await mine.batch([
    { content: 'quarterly budget review with finance' },
    { content: 'budget for the offsite' },
    { content: 'dentist appointment on Friday' },
  ]);
  const before = await mine.search('budget review offsite', '&limit=100');

  // A neighbour in the same organization floods the instance with the same words.
  const neighbour = await signUp(t.app.url, 'stats-neighbour');
  const invitation = await api(t.app.url, t.tenant.owner.token).post(`/v1/orgs/${t.tenant.orgId}/invitations`, {
    email: neighbour.email,
    role: 'member',
  });
  assert.equal(invitation.status, 201, invitation.text);
  const flood = memoryClient(t.app.url, neighbour.token);
  await flood.batch(Array.from({ length: 300 }, (_, i) => ({ content: `budget review ${i} budget budget offsite` })));
  await flood.create({ content: 'quarterly budget review with finance' });

  const after = await mine.search('budget review offsite', '&limit=100');
  assert.deepEqual(after, before);
});

test('a deleted memory never appears again, and leaves the statistics as if it had never been written', async () => {
  const a = await signUp(t.app.url, 'deleter');
  await createOrganization(t.app.url, a, 'Deleters');
  const b = await signUp(t.app.url, 'control');
  await createOrganization(t.app.url, b, 'Control');
  const deleter = memoryClient(t.app.url, a.token);
  const control = memoryClient(t.app.url, b.token);
  const shared = ['ferry timetable to the island', 'island hotel check-in at noon', 'ferry tickets in the blue folder'];
  await deleter.batch(shared.map((content) => ({ content })));
  await control.batch(shared.map((content) => ({ content })));
  const doomed = await deleter.batch([
    { content: 'ferry ferry ferry island secret' },
    { content: 'secret island ferry' },
  ]);
  for (const item of doomed) await deleter.remove(item.id);

  for (const q of ['ferry island secret', 'secret', 'ferry']) {
    const results = await deleter.search(q, '&limit=100');
    assert.ok(!results.some((r) => doomed.some((d) => d.id === r.id)), q);
    const strip = (list: { content: string; score: number }[]) => list.map((r) => `${r.content}=${r.score}`).sort();
    assert.deepEqual(strip(results), strip(await control.search(q, '&limit=100')), q);
  }
});

test('the same user in another organization: memories stay with the organization they were written in', async () => {
  const user = await signUp(t.app.url, 'two-orgs');
  const first = await createOrganization(t.app.url, user, 'First');
  const client = memoryClient(t.app.url, user.token);
  const inFirst = await client.create({ content: 'First org: the release train leaves on Tuesdays' });
  assert.equal(inFirst.organizationId, first);

  const second = await createOrganization(t.app.url, user, 'Second'); // now the active organization
  assert.deepEqual(await client.search('release train tuesdays'), []);
  assert.deepEqual(await client.listAll(), []);
  assert.equal((await client.client.get(`/v1/memory/${inFirst.id}`)).status, 404);
  assert.equal((await client.client.delete(`/v1/memory/${inFirst.id}`)).status, 404);
  // Written right after inFirst: the next memory of the same user, but in another bank, so neither is
  // ever the other's neighbour in search (one-line memories lend their neighbours a share of their score).
  const inSecond = await client.create({ content: 'Second org: the release train leaves on Fridays' });
  assert.equal(inSecond.organizationId, second);
  assert.deepEqual(
    (await client.search('release train')).map((r) => r.id),
    [inSecond.id],
  );

  const back = await api(t.app.url, user.token).put('/v1/session/active-organization', { organizationId: first });
  assert.equal(back.status, 200, back.text);
  assert.deepEqual(
    (await client.search('release train')).map((r) => r.id),
    [inFirst.id],
  );
  assert.deepEqual(
    (await client.listAll()).map((m) => m.id),
    [inFirst.id],
  );

  // A second session of the same user sees what the organization it is active in holds.
  const signIn = await api(t.app.url).post('/v1/auth/sign-in', { email: user.email, password: user.password });
  assert.equal(signIn.status, 200, signIn.text);
  const other = memoryClient(t.app.url, signIn.body.sessionToken);
  const active = await api(t.app.url, signIn.body.sessionToken).put('/v1/session/active-organization', {
    organizationId: second,
  });
  assert.equal(active.status, 200, active.text);
  assert.deepEqual(
    (await other.search('release train')).map((r) => r.id),
    [inSecond.id],
  );
});

test('query text cannot reach into SQL or other banks', async () => {
  const mine = memoryClient(t.app.url, t.tenant.member.token);
  for (const q of [
    "' OR 1=1 --",
    'x%27%3B%20DROP%20TABLE%20memories%3B--',
    '\\\\ %% _ * ( ) [ ] { }',
    'door\u0000code',
  ]) {
    const response = await mine.client.get(`/v1/memory/search?q=${encodeURIComponent(q)}&limit=100`);
    assert.ok(response.status === 200 || response.status === 400, response.text);
    if (response.status === 200) {
      for (const result of response.body.results)
        assert.ok((await mine.client.get(`/v1/memory/${result.id}`)).status === 200);
    }
  }
  assert.equal((await mine.client.get('/v1/memory')).status, 200);
});
