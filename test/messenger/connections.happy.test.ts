// Bot connections (owner/admin): create checks the token (getMe), registers the webhook with a fresh
// 256-bit secret (setWebhook), and returns the delivery secret once; list, get, patch, delete
// (deleteWebhook), and the updates route with its status filter and pages.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { api } from '../support/http.ts';
import { connectBot, eventually, postUpdate, startMessengerEnv, type MessengerEnv } from './support.ts';

describe('messenger connections', () => {
  let env: MessengerEnv;
  before(async () => {
    env = await startMessengerEnv();
  });
  after(async () => {
    await env?.close();
  });

  test("create: getMe, then setWebhook with the connection's URL and a fresh URL-safe 256-bit secret", async () => {
    const bot = env.platform.addBot({ username: 'acme_helper_bot' });
    const created = await api(env.app.url, env.tenant.owner.token).post('/v1/messenger/connections', {
      botToken: bot.token,
      deliveryUrl: env.receiver.url,
    });
    assert.equal(created.status, 201, created.text);
    const { connection, deliverySecret } = created.body;
    assert.match(connection.id, /^emc_[0-9a-z]{26}$/);
    assert.equal(connection.id.length, 30);
    assert.deepEqual(
      { ...connection, createdAt: undefined, updatedAt: undefined },
      {
        id: connection.id,
        botId: bot.id,
        botUsername: 'acme_helper_bot',
        deliveryUrl: env.receiver.url,
        webhookUrl: `${env.app.config.publicUrl}/v1/webhooks/messenger/${connection.id}`,
        status: 'active',
        createdAt: undefined,
        updatedAt: undefined,
      },
    );
    assert.match(connection.createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.match(deliverySecret, /^[A-Za-z0-9_-]{43}$/);
    assert.equal(env.platform.callsTo('getMe', bot.token).length, 1);
    const hook = env.platform.webhookOf(bot.token)!;
    assert.equal(hook.url, `${env.app.config.publicUrl}/v1/webhooks/messenger/${connection.id}`);
    // 43 base64url characters = 256 bits, all in the platform's alphabet.
    assert.match(hook.secretToken!, /^[A-Za-z0-9_-]{43}$/);
    assert.notEqual(hook.secretToken, deliverySecret);
    // Another connection gets other secrets.
    const other = await connectBot(env);
    assert.notEqual(env.platform.webhookOf(other.bot.token)!.secretToken, hook.secretToken);
    assert.notEqual(other.deliverySecret, deliverySecret);
  });

  test('list (paged), get, and neither shows a secret', async () => {
    const admin = api(env.app.url, env.tenant.admin.token);
    const mine = await connectBot(env);
    const all: any[] = [];
    let cursor: string | null = null;
    do {
      const page: any = await admin.get(`/v1/messenger/connections?limit=1${cursor ? `&cursor=${cursor}` : ''}`);
      assert.equal(page.status, 200, page.text);
      assert.ok(page.body.connections.length <= 1);
      all.push(...page.body.connections);
      cursor = page.body.nextCursor;
    } while (cursor);
    assert.ok(all.some((c) => c.id === mine.id));
    assert.equal(new Set(all.map((c) => c.id)).size, all.length);
    const got = await admin.get(`/v1/messenger/connections/${mine.id}`);
    assert.equal(got.status, 200);
    assert.deepEqual(got.body.connection, mine.connection);
    const text = JSON.stringify(all) + got.text;
    assert.ok(!text.includes(mine.deliverySecret));
    assert.ok(!text.includes(mine.bot.token));
    assert.ok(!text.includes(env.platform.webhookOf(mine.bot.token)!.secretToken!));
  });

  test('patch: disable, enable, change the delivery URL', async () => {
    const admin = api(env.app.url, env.tenant.admin.token);
    const mine = await connectBot(env);
    const disabled = await admin.patch(`/v1/messenger/connections/${mine.id}`, { enabled: false });
    assert.equal(disabled.status, 200);
    assert.equal(disabled.body.connection.status, 'disabled');
    const moved = await admin.patch(`/v1/messenger/connections/${mine.id}`, {
      enabled: true,
      deliveryUrl: 'https://hooks.example.test/bot',
    });
    assert.equal(moved.body.connection.status, 'active');
    assert.equal(moved.body.connection.deliveryUrl, 'https://hooks.example.test/bot');
  });

  test('delete: deleteWebhook on the platform, then the connection is gone and its webhook refused', async () => {
    const owner = api(env.app.url, env.tenant.owner.token);
    const mine = await connectBot(env, env.tenant.owner.token);
    const secret = env.platform.webhookOf(mine.bot.token)!.secretToken!;
    assert.equal((await postUpdate(env.app.url, mine.id, { update_id: 1 }, secret)).status, 200);
    const deleted = await owner.delete(`/v1/messenger/connections/${mine.id}`);
    assert.equal(deleted.status, 204);
    assert.equal(env.platform.callsTo('deleteWebhook', mine.bot.token).length, 1);
    assert.equal(env.platform.webhookOf(mine.bot.token), undefined);
    assert.equal((await owner.get(`/v1/messenger/connections/${mine.id}`)).status, 404);
    const late = await postUpdate(env.app.url, mine.id, { update_id: 2 }, secret);
    assert.deepEqual([late.status, late.json], [401, { ok: false, error: 'invalid secret' }]);
    // Its updates go with it (a trigger since 0501, where a foreign-key cascade did it before).
    const left = await env.app.db.query('SELECT count(*)::int AS n FROM messenger_updates WHERE connection_id = $1', [
      mine.id,
    ]);
    assert.equal(left.rows[0].n, 0);
  });

  test('delete still deletes when the platform refuses deleteWebhook (revoked token)', async () => {
    const mine = await connectBot(env);
    env.platform.failNext('deleteWebhook', { error_code: 401, description: 'Unauthorized' });
    const deleted = await api(env.app.url, env.tenant.admin.token).delete(`/v1/messenger/connections/${mine.id}`);
    assert.equal(deleted.status, 204);
    assert.equal(
      (await api(env.app.url, env.tenant.admin.token).get(`/v1/messenger/connections/${mine.id}`)).status,
      404,
    );
  });

  test('a disabled connection still delivers the updates it accepted; delete discards those not yet delivered', async () => {
    const admin = api(env.app.url, env.tenant.admin.token);
    const previous = env.receiver.respond;
    let failing = true;
    env.receiver.respond = (delivery, res) => {
      if ([711, 712].includes(delivery.json?.update?.message?.chat?.id) && failing) {
        res.writeHead(503);
        res.end();
        return;
      }
      return previous(delivery, res);
    };
    const deliveriesOf = (updateId: number) =>
      env.receiver.received.filter((d) => d.json?.update?.update_id === updateId).length;
    const retrying = (id: string, updateId: number) =>
      eventually(
        async () => {
          const listed = await admin.get(`/v1/messenger/connections/${id}/updates?status=retrying`);
          return listed.body.updates.find((u: any) => u.updateId === updateId);
        },
        { what: `update ${updateId} retrying` },
      );
    const update = (updateId: number, chatId: number) => ({
      update_id: updateId,
      message: { message_id: 1, chat: { id: chatId, type: 'private' }, date: 0, text: 't' },
    });
    try {
      // Disabled while an update waits for its retry: the retry still goes out, and delivers it.
      const drained = await connectBot(env);
      const drainedSecret = env.platform.webhookOf(drained.bot.token)!.secretToken!;
      assert.deepEqual((await postUpdate(env.app.url, drained.id, update(801, 711), drainedSecret)).json, {
        ok: true,
        accepted: true,
      });
      await retrying(drained.id, 801);
      assert.equal(
        (await admin.patch(`/v1/messenger/connections/${drained.id}`, { enabled: false })).body.connection.status,
        'disabled',
      );
      failing = false;
      const delivered = await eventually(
        async () => {
          const listed = await admin.get(`/v1/messenger/connections/${drained.id}/updates?status=delivered`);
          return listed.body.updates.find((u: any) => u.updateId === 801);
        },
        { what: 'the delivery while disabled' },
      );
      assert.ok(delivered.attempts >= 2);
      assert.equal((await admin.get(`/v1/messenger/connections/${drained.id}`)).body.connection.status, 'disabled');

      // Deleted while an update waits for its retry: the update goes with the connection and is never
      // delivered, and the updates route is 404.
      failing = true;
      const doomed = await connectBot(env);
      const doomedSecret = env.platform.webhookOf(doomed.bot.token)!.secretToken!;
      assert.deepEqual((await postUpdate(env.app.url, doomed.id, update(802, 712), doomedSecret)).json, {
        ok: true,
        accepted: true,
      });
      await retrying(doomed.id, 802);
      assert.equal(deliveriesOf(802), 1);
      assert.equal((await admin.delete(`/v1/messenger/connections/${doomed.id}`)).status, 204);
      failing = false;
      // Its update was its own queue entry (migration 0504): deleted with it, nothing left to attempt.
      const left = await env.app.db.query('SELECT count(*)::int AS n FROM messenger_updates WHERE connection_id = $1', [
        doomed.id,
      ]);
      assert.equal(left.rows[0].n, 0);
      // Past the retry's due time (MESSENGER_DELIVERY_MAX_RETRY_DELAY_SECONDS=2 here) and a poll.
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      assert.equal(deliveriesOf(802), 1, 'no attempt after the delete');
      assert.equal((await admin.get(`/v1/messenger/connections/${doomed.id}/updates`)).status, 404);
    } finally {
      env.receiver.respond = previous;
    }
  });

  test('updates: newest first, filtered by status, paged with a cursor', async () => {
    const admin = api(env.app.url, env.tenant.admin.token);
    const mine = await connectBot(env);
    const secret = env.platform.webhookOf(mine.bot.token)!.secretToken!;
    for (const updateId of [101, 102, 103]) {
      assert.equal(
        (
          await postUpdate(
            env.app.url,
            mine.id,
            {
              update_id: updateId,
              message: { message_id: updateId, chat: { id: 9, type: 'private' }, date: 0, text: 't' },
            },
            secret,
          )
        ).status,
        200,
      );
    }
    const first = await admin.get(`/v1/messenger/connections/${mine.id}/updates?limit=2`);
    assert.equal(first.status, 200, first.text);
    assert.deepEqual(
      first.body.updates.map((u: any) => u.updateId),
      [103, 102],
    );
    assert.equal(typeof first.body.nextCursor, 'string');
    const second = await admin.get(
      `/v1/messenger/connections/${mine.id}/updates?limit=2&cursor=${first.body.nextCursor}`,
    );
    assert.deepEqual(
      second.body.updates.map((u: any) => u.updateId),
      [101],
    );
    assert.equal(second.body.nextCursor, null);
    for (const u of [...first.body.updates, ...second.body.updates]) {
      assert.ok(['queued', 'retrying', 'delivered'].includes(u.status));
      assert.equal(u.chatId, '9');
      assert.match(u.receivedAt, /Z$/);
    }
    const dead = await admin.get(`/v1/messenger/connections/${mine.id}/updates?status=dead`);
    assert.deepEqual(dead.body.updates, []);
  });

  test('the OpenAPI document describes every messenger route, the webhook included', async () => {
    const doc = await api(env.app.url).get('/openapi.json');
    assert.equal(doc.status, 200);
    const operations = Object.values(
      doc.body.paths as Record<string, Record<string, { operationId?: string }>>,
    ).flatMap((item) => Object.values(item).map((op) => op.operationId));
    for (const id of [
      'createMessengerConnection',
      'listMessengerConnections',
      'getMessengerConnection',
      'updateMessengerConnection',
      'deleteMessengerConnection',
      'listMessengerUpdates',
      'receiveMessengerWebhook',
    ]) {
      assert.ok(operations.includes(id), id);
    }
    const webhook = doc.body.paths['/v1/webhooks/messenger/{connectionId}'].post;
    assert.deepEqual(Object.keys(webhook.responses).sort(), ['200', '400', '401', '413', '503']);
    // What the tests above and webhook.error.test.ts pin, said where an integrator reads it.
    const deleteRoute = doc.body.paths['/v1/messenger/connections/{connectionId}'].delete;
    assert.match(deleteRoute.description, /not yet delivered .* discarded/);
    assert.match(deleteRoute.description, /PATCH `enabled: false`.*still delivered/);
    assert.match(
      webhook.responses['413'].description,
      /only if they arrive before the answer is sent; later ones are read as the next request on the connection \(400\)/,
    );
  });
});
