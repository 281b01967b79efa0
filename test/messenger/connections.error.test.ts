// Bot connections: every refusal, in the API's error shape.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { api } from '../support/http.ts';
import { connectBot, eventually, postUpdate, startMessengerEnv, type MessengerEnv } from './support.ts';

describe('messenger connections: errors', () => {
  let env: MessengerEnv;
  let admin: ReturnType<typeof api>;
  const count = async () => (await env.app.db.query('SELECT count(*)::int AS n FROM messenger_connections')).rows[0].n;
  before(async () => {
    env = await startMessengerEnv();
    admin = api(env.app.url, env.tenant.admin.token);
  });
  after(async () => {
    await env?.close();
  });

  test('invalid bodies are 400 invalid_request with details', async () => {
    const bot = env.platform.addBot();
    for (const [body, path] of [
      [{}, 'botToken'],
      [{ botToken: bot.token }, 'deliveryUrl'],
      [{ botToken: 'not-a-token', deliveryUrl: env.receiver.url }, 'botToken'],
      [{ botToken: bot.token, deliveryUrl: 'ftp://example.test/x' }, 'deliveryUrl'],
      [{ botToken: bot.token, deliveryUrl: 'not a url' }, 'deliveryUrl'],
      [{ botToken: bot.token, deliveryUrl: `https://example.test/${'a'.repeat(2100)}` }, 'deliveryUrl'],
      [{ botToken: 42, deliveryUrl: env.receiver.url }, 'botToken'],
    ] as const) {
      const answer = await admin.post('/v1/messenger/connections', body);
      assert.equal(answer.status, 400, JSON.stringify(body));
      assert.equal(answer.body.error, 'invalid_request');
      assert.ok(
        answer.body.details.some((d: any) => d.path[0] === path),
        `${JSON.stringify(body)} -> ${answer.text}`,
      );
    }
    const notJson = await admin.post('/v1/messenger/connections', undefined, {
      raw: '{oops',
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(notJson.status, 400);
    assert.equal(env.platform.callsTo('getMe', bot.token).length, 0);
  });

  test('a delivery URL on an address outbound calls may not reach is 400, on create and on patch', async () => {
    const bot = env.platform.addBot();
    for (const deliveryUrl of [
      'http://10.1.2.3/hook',
      'http://169.254.169.254/latest/meta-data',
      'http://[fd00::1]/x',
      'http://192.168.0.10:8080/x',
    ]) {
      const answer = await admin.post('/v1/messenger/connections', { botToken: bot.token, deliveryUrl });
      assert.equal(answer.status, 400, deliveryUrl);
      assert.equal(answer.body.error, 'invalid_request');
      assert.deepEqual(answer.body.details[0].path, ['deliveryUrl']);
    }
    assert.equal(env.platform.callsTo('getMe', bot.token).length, 0);
    const mine = await connectBot(env);
    const patched = await admin.patch(`/v1/messenger/connections/${mine.id}`, { deliveryUrl: 'http://10.0.0.8/hook' });
    assert.equal(patched.status, 400);
    assert.equal(
      (await admin.get(`/v1/messenger/connections/${mine.id}`)).body.connection.deliveryUrl,
      env.receiver.url,
    );
  });

  test('a delivery URL with user:password is 400 invalid_request pointing at deliveryUrl, on create and on patch, and nothing is stored', async () => {
    const bot = env.platform.addBot();
    const port = new URL(env.receiver.url).port;
    const before = await count();
    for (const deliveryUrl of [
      `http://user:PW@127.0.0.1:${port}/reply`,
      `http://user@127.0.0.1:${port}/reply`,
      'https://:PW@hooks.example.test/x',
    ]) {
      const answer = await admin.post('/v1/messenger/connections', { botToken: bot.token, deliveryUrl });
      assert.equal(answer.status, 400, `${deliveryUrl}: ${answer.text}`);
      assert.equal(answer.body.error, 'invalid_request');
      assert.deepEqual(
        answer.body.details.map((d: any) => [d.path, d.in]),
        [[['deliveryUrl'], 'body']],
      );
      assert.ok(!answer.text.includes('PW'), answer.text);
    }
    assert.equal(await count(), before);
    assert.equal(env.platform.callsTo('getMe', bot.token).length, 0);
    const mine = await connectBot(env);
    const patched = await admin.patch(`/v1/messenger/connections/${mine.id}`, {
      deliveryUrl: `http://user:PW@127.0.0.1:${port}/reply`,
    });
    assert.equal(patched.status, 400, patched.text);
    assert.equal(patched.body.error, 'invalid_request');
    assert.deepEqual(patched.body.details[0].path, ['deliveryUrl']);
    assert.equal(
      (await admin.get(`/v1/messenger/connections/${mine.id}`)).body.connection.deliveryUrl,
      env.receiver.url,
    );
  });

  test('a delivery URL with user:password stored before the API refused it fails its deliveries without its userinfo in lastError', async () => {
    const mine = await connectBot(env);
    const secret = env.platform.webhookOf(mine.bot.token)!.secretToken!;
    const port = new URL(env.receiver.url).port;
    await env.app.db.query('UPDATE messenger_connections SET delivery_url = $2 WHERE id = $1', [
      mine.id,
      `http://user:PW@127.0.0.1:${port}/reply`,
    ]);
    assert.equal((await postUpdate(env.app.url, mine.id, { update_id: 1 }, secret)).status, 200);
    const failed = await eventually(
      async () => {
        const listed = await admin.get(`/v1/messenger/connections/${mine.id}/updates`);
        return listed.body.updates.find((u: any) => u.updateId === 1 && u.lastError);
      },
      { what: 'the failed attempt', timeoutMs: 60_000 },
    );
    // fetch refused the URL and quoted it; the quote is kept, its user:password is not.
    assert.match(failed.lastError, /credentials/);
    assert.ok(failed.lastError.includes(`http://127.0.0.1:${port}/reply`), failed.lastError);
    assert.ok(!failed.lastError.includes('PW') && !failed.lastError.includes('user'), failed.lastError);
  });

  test('a token the platform does not know is 400 invalid_bot_token, and nothing is stored', async () => {
    const before = await count();
    const answer = await admin.post('/v1/messenger/connections', {
      botToken: env.platform.unknownToken(),
      deliveryUrl: env.receiver.url,
    });
    assert.equal(answer.status, 400);
    assert.equal(answer.body.error, 'invalid_bot_token');
    assert.equal(await count(), before);
  });

  test('the platform failing getMe or setWebhook is 502, and no connection is kept', async () => {
    const before = await count();
    const bot = env.platform.addBot();
    env.platform.failNext('getMe', { error_code: 500, description: 'Internal Server Error' });
    const getMe = await admin.post('/v1/messenger/connections', { botToken: bot.token, deliveryUrl: env.receiver.url });
    assert.equal(getMe.status, 502);
    assert.equal(getMe.body.error, 'platform_error');
    env.platform.failNext('setWebhook', {
      error_code: 400,
      description: 'Bad Request: bad webhook: Failed to resolve host',
    });
    const setWebhook = await admin.post('/v1/messenger/connections', {
      botToken: bot.token,
      deliveryUrl: env.receiver.url,
    });
    assert.equal(setWebhook.status, 502);
    assert.equal(setWebhook.body.error, 'platform_error');
    assert.match(setWebhook.body.message, /bad webhook/);
    assert.ok(!setWebhook.text.includes(bot.token));
    assert.equal(await count(), before);
    // Afterwards the same bot connects fine.
    const ok = await admin.post('/v1/messenger/connections', { botToken: bot.token, deliveryUrl: env.receiver.url });
    assert.equal(ok.status, 201, ok.text);
  });

  test('a getMe answer that is not a usable bot (no name, an id that is no safe integer) is 502 platform_unavailable, and nothing is stored', async () => {
    const before = await count();
    const bot = env.platform.addBot();
    for (const result of [
      { id: 1, is_bot: true },
      { id: 1.5, is_bot: true, first_name: 'Bot' },
      // biome-ignore lint/correctness/noPrecisionLoss: an id past what a double holds exactly is the case tested
      { id: 99999999999999999999, is_bot: true, first_name: 'Bot' },
      { id: -7, is_bot: true, first_name: 'Bot' },
      { id: 7, is_bot: true, first_name: 'Bot', username: 42 },
      'a bot',
      null,
    ]) {
      env.platform.answerNextWith('getMe', { ok: true, result });
      const answer = await admin.post('/v1/messenger/connections', {
        botToken: bot.token,
        deliveryUrl: env.receiver.url,
      });
      assert.equal(answer.status, 502, `${JSON.stringify(result)}: ${answer.text}`);
      assert.equal(answer.body.error, 'platform_unavailable');
      assert.ok(!answer.text.includes(bot.token));
    }
    assert.equal(await count(), before);
  });

  test('a bot connected in another organization is 409 bot_already_connected, and its webhook stays with that organization', async () => {
    const bot = env.platform.addBot();
    const first = await admin.post('/v1/messenger/connections', { botToken: bot.token, deliveryUrl: env.receiver.url });
    assert.equal(first.status, 201, first.text);
    const registered = env.platform.webhookOf(bot.token)!;
    const before = await count();
    const other = api(env.app.url, env.tenant.otherAdmin.token);
    // Both at once, too: one organization's connection at most, whatever the timing.
    const answers = await Promise.all(
      [1, 2].map(() => other.post('/v1/messenger/connections', { botToken: bot.token, deliveryUrl: env.receiver.url })),
    );
    for (const answer of answers) {
      assert.equal(answer.status, 409, answer.text);
      assert.equal(answer.body.error, 'bot_already_connected');
      assert.ok(!answer.text.includes(bot.token) && !answer.text.includes(env.tenant.orgId));
    }
    assert.equal(await count(), before);
    assert.deepEqual(env.platform.webhookOf(bot.token), registered);
    // Once disconnected there, the other organization may connect it.
    assert.equal((await admin.delete(`/v1/messenger/connections/${first.body.connection.id}`)).status, 204);
    const moved = await other.post('/v1/messenger/connections', { botToken: bot.token, deliveryUrl: env.receiver.url });
    assert.equal(moved.status, 201, moved.text);
  });

  test('an unreachable platform is 502 platform_unavailable', async () => {
    const { startTestApp } = await import('../support/app.ts');
    const { loopbackOnly } = await import('./support.ts');
    // A closed port as the API root.
    const app = await startTestApp({
      messengerApiRoot: 'http://127.0.0.1:9',
      allowedPrivateNetworks: loopbackOnly,
      logLevel: 'warn',
    });
    try {
      const { createTenant } = await import('../support/fixtures.ts');
      const tenant = await createTenant(app.url);
      const answer = await api(app.url, tenant.admin.token).post('/v1/messenger/connections', {
        botToken: env.platform.addBot().token,
        deliveryUrl: env.receiver.url,
      });
      assert.equal(answer.status, 502);
      assert.equal(answer.body.error, 'platform_unavailable');
    } finally {
      await app.close();
    }
  });

  test('the same bot twice in one organization is 409 connection_conflict', async () => {
    const first = await connectBot(env);
    const again = await admin.post('/v1/messenger/connections', {
      botToken: first.bot.token,
      deliveryUrl: env.receiver.url,
    });
    assert.equal(again.status, 409);
    assert.equal(again.body.error, 'connection_conflict');
  });

  test('unknown and malformed ids: 404 connection_not_found and 400 invalid_request', async () => {
    const unknown = 'emc_01jqz3v6b8e9f0g1h2j3k4m5n6';
    for (const [method, suffix, body] of [
      ['get', '', undefined],
      ['patch', '', { enabled: false }],
      ['delete', '', undefined],
      ['get', '/updates', undefined],
    ] as const) {
      const path = `/v1/messenger/connections/${unknown}${suffix}`;
      const answer = method === 'patch' ? await admin.patch(path, body) : await admin[method](path);
      assert.equal(answer.status, 404, `${method} ${path}`);
      assert.equal(answer.body.error, 'connection_not_found');
      const malformed = `/v1/messenger/connections/emc_bad${suffix}`;
      const bad = method === 'patch' ? await admin.patch(malformed, body) : await admin[method](malformed);
      assert.equal(bad.status, 400, `${method} ${malformed}`);
      assert.equal(bad.body.error, 'invalid_request');
    }
  });

  test('bad query and patch bodies are 400', async () => {
    const mine = await connectBot(env);
    for (const query of ['status=lost', 'limit=0', 'limit=101', 'cursor=not-a-cursor']) {
      const answer = await admin.get(`/v1/messenger/connections/${mine.id}/updates?${query}`);
      assert.equal(answer.status, 400, query);
      assert.equal(answer.body.error, 'invalid_request');
    }
    assert.equal((await admin.get('/v1/messenger/connections?cursor=zzz')).status, 400);
    for (const body of [{}, { enabled: 'yes' }, { deliveryUrl: 'nope' }]) {
      const answer = await admin.patch(`/v1/messenger/connections/${mine.id}`, body);
      assert.equal(answer.status, 400, JSON.stringify(body));
    }
  });
});
