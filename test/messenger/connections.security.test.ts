// Who may manage bot connections: owners and admins of the active organization, nobody else; and
// what is never shown: the bot token, the webhook secret, the delivery secret after creation.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { testBackend } from '../support/app.ts';
import { addMember, signUp } from '../support/fixtures.ts';
import { holdLocks } from '../support/held-locks.ts';
import { api } from '../support/http.ts';
import { connectBot, postUpdate, startMessengerEnv, type CreatedConnection, type MessengerEnv } from './support.ts';

describe('messenger connections: security', () => {
  let env: MessengerEnv;
  let mine: CreatedConnection;
  const routes = (id: string) =>
    [
      [
        'post',
        '/v1/messenger/connections',
        { botToken: '123:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', deliveryUrl: 'https://example.test/x' },
      ],
      ['get', '/v1/messenger/connections', undefined],
      ['get', `/v1/messenger/connections/${id}`, undefined],
      ['patch', `/v1/messenger/connections/${id}`, { enabled: false }],
      ['delete', `/v1/messenger/connections/${id}`, undefined],
      ['get', `/v1/messenger/connections/${id}/updates`, undefined],
    ] as const;
  const call = (token: string | undefined, method: string, path: string, body: unknown) => {
    const client = api(env.app.url, token) as any;
    return method === 'post' || method === 'patch' ? client[method](path, body) : client[method](path);
  };

  before(async () => {
    // Info level: request logs included, so a secret in a header or URL would show.
    env = await startMessengerEnv({ logLevel: 'info' });
    mine = await connectBot(env);
  });
  after(async () => {
    await env?.close();
  });

  test('anonymous callers and tampered session tokens are 401 on every route', async () => {
    for (const [method, path, body] of routes(mine.id)) {
      for (const token of [undefined, 'not-a-session', `${env.tenant.admin.token}x`]) {
        const answer = await call(token, method, path, body);
        assert.equal(answer.status, 401, `${method} ${path} ${token}`);
        assert.equal(answer.body.error, 'unauthorized');
      }
    }
  });

  test('members and callers without an organization are 403 on every route', async () => {
    for (const [method, path, body] of routes(mine.id)) {
      for (const user of [env.tenant.member, env.tenant.outsider]) {
        const answer = await call(user.token, method, path, body);
        assert.equal(answer.status, 403, `${method} ${path}`);
        assert.equal(answer.body.error, 'forbidden');
      }
    }
    assert.equal(env.platform.callsTo('getMe', '123:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa').length, 0);
  });

  test("another organization's admin neither sees nor touches this organization's connection (404)", async () => {
    const other = api(env.app.url, env.tenant.otherAdmin.token);
    const list = await other.get('/v1/messenger/connections');
    assert.equal(list.status, 200);
    assert.ok(!list.body.connections.some((c: any) => c.id === mine.id));
    for (const [method, path, body] of routes(mine.id).slice(2)) {
      const answer = await call(env.tenant.otherAdmin.token, method, path, body);
      assert.equal(answer.status, 404, `${method} ${path}`);
      assert.equal(answer.body.error, 'connection_not_found');
    }
    const still = await api(env.app.url, env.tenant.admin.token).get(`/v1/messenger/connections/${mine.id}`);
    assert.equal(still.body.connection.status, 'active');
    assert.equal(env.platform.webhookOf(mine.bot.token)?.url, mine.connection.webhookUrl);
  });

  test('secrets are stored sealed or hashed, and never appear in responses or logs', async () => {
    const webhookSecret = env.platform.webhookOf(mine.bot.token)!.secretToken!;
    const row = (await env.app.db.query('SELECT * FROM messenger_connections WHERE id = $1', [mine.id])).rows[0];
    const stored = JSON.stringify(row);
    for (const secret of [mine.bot.token, webhookSecret, mine.deliverySecret]) assert.ok(!stored.includes(secret));
    assert.match(row.bot_token_sealed, /^v\d+:/);
    assert.match(row.delivery_secret_sealed, /^v\d+:/);
    assert.match(row.webhook_secret_hash, /^[0-9a-f]{64}$/);
    // Exercise the paths that log: webhook requests (right and wrong secret), a refused deleteWebhook.
    await postUpdate(env.app.url, mine.id, { update_id: 1 }, webhookSecret);
    await postUpdate(env.app.url, mine.id, { update_id: 2 }, `${webhookSecret}x`);
    const doomed = await connectBot(env);
    env.platform.failNext('deleteWebhook', { error_code: 401, description: 'Unauthorized' });
    await api(env.app.url, env.tenant.admin.token).delete(`/v1/messenger/connections/${doomed.id}`);
    const logs = env.app.logText();
    assert.ok(logs.includes('/v1/webhooks/messenger/'), 'the webhook requests were logged');
    for (const secret of [
      mine.bot.token,
      webhookSecret,
      mine.deliverySecret,
      doomed.bot.token,
      doomed.deliverySecret,
    ]) {
      assert.ok(!logs.includes(secret), 'a secret reached the logs');
    }
  });
  // The route checks the role, then asks the platform (getMe), then stores the connection: a removal
  // or demotion committed in between must not leave a connection made by someone without the right
  // (a removal was a 500 from the foreign key; a demotion went through).
  for (const [change, sql] of [
    ['removal', 'DELETE FROM members WHERE id = $1'],
    ['demotion', "UPDATE members SET role = 'member' WHERE id = $1"],
  ] as const) {
    test(`an admin's ${change} in progress as their connection is stored: waited for, then 403, nothing stored`, {
      skip: testBackend !== 'postgres' && 'holding row locks needs PostgreSQL',
    }, async () => {
      const admin = await signUp(env.app.url, `messenger-${change}`);
      await addMember(env.app.url, env.tenant.owner, env.tenant.orgId, admin, 'admin');
      const bot = env.platform.addBot();
      const held = await holdLocks(env.app, sql, [admin.memberId]);
      const creating = api(env.app.url, admin.token).post('/v1/messenger/connections', {
        botToken: bot.token,
        deliveryUrl: env.receiver.url,
      });
      await held.waitForBlocked(1);
      await held.release();
      const answer = await creating;
      assert.equal(answer.status, 403, answer.text);
      assert.equal(answer.body.error, 'forbidden');
      const { rows } = await env.app.db.query(
        'SELECT count(*)::int AS n FROM messenger_connections WHERE bot_id = $1',
        [bot.id],
      );
      assert.equal(rows[0].n, 0, 'no connection stored');
    });
  }
});
