// Spec operation 8, the happy paths: an update with the right secret is claimed, acknowledged and
// delivered (signed) to the delivery URL; a duplicate is acknowledged but not queued again; a reply
// goes back to the chat; one chat's updates are delivered in update_id order.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { api } from '../support/http.ts';
import { createTenant } from '../support/fixtures.ts';
import { checkTenantRouting } from '../db/tenant-routing.ts';
import {
  connectBot,
  eventually,
  expectedSignature,
  postUpdate,
  startMessengerEnv,
  type CreatedConnection,
  type MessengerEnv,
} from './support.ts';

const tenantRouting = checkTenantRouting();

describe('messenger webhook ingress', () => {
  let env: MessengerEnv;
  let bot: CreatedConnection;
  let secret: string;

  before(async () => {
    env = await startMessengerEnv();
    bot = await connectBot(env);
    secret = env.platform.webhookOf(bot.bot.token)!.secretToken!;
  });
  after(async () => {
    await env?.close();
  });

  test("the platform's update is acknowledged, then delivered signed with the delivery secret", async () => {
    const update = env.platform.messageUpdate(bot.bot.token, { chatId: 501, text: 'hello' });
    const result = await env.platform.deliver(bot.bot.token, update);
    assert.equal(result.status, 200);
    assert.deepEqual(result.json, { ok: true, accepted: true });
    assert.equal(result.attempts.length, 1);
    const delivery = await eventually(
      () => env.receiver.received.find((d) => d.json?.update?.update_id === update.update_id),
      { what: 'the delivery' },
    );
    assert.deepEqual(delivery.json, { connectionId: bot.id, update });
    assert.equal(delivery.headers['x-orgplane-signature'], expectedSignature(bot.deliverySecret, delivery.body));
    assert.equal(delivery.headers['content-type'], 'application/json');
    const updates = await api(env.app.url, env.tenant.admin.token).get(`/v1/messenger/connections/${bot.id}/updates`);
    assert.equal(updates.status, 200);
    const row = await eventually(
      async () => {
        const listed = await api(env.app.url, env.tenant.admin.token).get(
          `/v1/messenger/connections/${bot.id}/updates?status=delivered`,
        );
        return listed.body.updates.find((u: any) => u.updateId === update.update_id);
      },
      { what: 'the delivered state' },
    );
    assert.equal(row.status, 'delivered');
    assert.equal(row.attempts, 1);
    assert.equal(row.chatId, '501');
    assert.equal(row.lastError, null);
    assert.match(row.deliveredAt, /Z$/);
  });

  test('a duplicate update_id is acknowledged with accepted: false, reason duplicate, and delivered once', async () => {
    const update = env.platform.messageUpdate(bot.bot.token, { chatId: 502, text: 'once' });
    const first = await postUpdate(env.app.url, bot.id, update, secret);
    const second = await postUpdate(env.app.url, bot.id, update, secret);
    assert.deepEqual([first.status, first.json], [200, { ok: true, accepted: true }]);
    assert.deepEqual([second.status, second.json], [200, { ok: true, accepted: false, reason: 'duplicate' }]);
    await eventually(() => env.receiver.received.some((d) => d.json?.update?.update_id === update.update_id), {
      what: 'the delivery',
    });
    // A later update of the same chat is delivered after it; by then a second delivery would have happened.
    const later = env.platform.messageUpdate(bot.bot.token, { chatId: 502, text: 'later' });
    await postUpdate(env.app.url, bot.id, later, secret);
    await eventually(() => env.receiver.received.some((d) => d.json?.update?.update_id === later.update_id), {
      what: 'the later delivery',
    });
    assert.equal(env.receiver.received.filter((d) => d.json?.update?.update_id === update.update_id).length, 1);
  });

  test('an answer {reply: {text}} is sent to the chat with sendMessage', async () => {
    const previous = env.receiver.respond;
    env.receiver.respond = (delivery, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ reply: { text: `echo: ${delivery.json.update.message.text}` } }));
    };
    try {
      const update = env.platform.messageUpdate(bot.bot.token, { chatId: 503, text: 'ping' });
      await env.platform.deliver(bot.bot.token, update);
      const sent = await eventually(() => env.platform.sentMessages.find((m) => m.chatId === 503), {
        what: 'the reply',
      });
      assert.equal(sent.text, 'echo: ping');
      assert.equal(sent.token, bot.bot.token);
      const row = await eventually(
        async () => {
          const listed = await api(env.app.url, env.tenant.admin.token).get(
            `/v1/messenger/connections/${bot.id}/updates?status=delivered`,
          );
          return listed.body.updates.find((u: any) => u.updateId === update.update_id && u.replyStatus);
        },
        { what: 'the reply status' },
      );
      assert.equal(row.replyStatus, 'sent');
    } finally {
      env.receiver.respond = previous;
    }
  });

  test('updates of one chat are delivered one at a time, in update_id order, while other chats proceed', async () => {
    const previous = env.receiver.respond;
    let inFlight = 0;
    let maxInFlight = 0;
    let openGate!: () => void;
    const otherChatDelivered = new Promise<void>((resolve) => (openGate = resolve));
    env.receiver.respond = async (delivery, res) => {
      const chat = delivery.json?.update?.message?.chat?.id;
      if (chat === 505) openGate();
      if (chat === 504) {
        inFlight += 1;
        maxInFlight = Math.max(maxInFlight, inFlight);
        // The first delivery of chat 504 is held until chat 505's update was delivered: if one chat
        // held back another this would never happen; while it is held, chat 504's later updates
        // wait behind it (with 8 workers, they would otherwise be delivered now, concurrently).
        if (delivery.json.update.message.text === 'm0') await otherChatDelivered;
        inFlight -= 1;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    };
    try {
      // As the platform does for one chat: each update after the previous one was acknowledged.
      const updates = Array.from({ length: 6 }, (_, i) =>
        env.platform.messageUpdate(bot.bot.token, { chatId: 504, text: `m${i}` }),
      );
      for (const update of updates) {
        const answer = await postUpdate(env.app.url, bot.id, update, secret);
        assert.deepEqual(answer.json, { ok: true, accepted: true });
      }
      const other = env.platform.messageUpdate(bot.bot.token, { chatId: 505, text: 'other chat' });
      await postUpdate(env.app.url, bot.id, other, secret);
      const chat504 = () => env.receiver.received.filter((d) => d.json?.update?.message?.chat?.id === 504);
      await eventually(() => chat504().length === updates.length, { what: 'all deliveries' });
      assert.deepEqual(
        chat504().map((d) => d.json.update.update_id),
        updates.map((update) => update.update_id),
      );
      assert.equal(maxInFlight, 1, 'one delivery at a time for one chat');
    } finally {
      env.receiver.respond = previous;
    }
  });

  test('updates of one chat that arrive out of order while the chat is busy are delivered in update_id order', async () => {
    const previous = env.receiver.respond;
    // Resolved by the receiver once it holds the first delivery; resolved by the test to let it go.
    const held = Promise.withResolvers<void>();
    const released = Promise.withResolvers<void>();
    env.receiver.respond = async (delivery, res) => {
      if (delivery.json?.update?.message?.text === 'first') {
        held.resolve();
        await released.promise;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    };
    try {
      const [first, ...later] = ['first', 'a', 'b', 'c'].map((text) =>
        env.platform.messageUpdate(bot.bot.token, { chatId: 506, text }),
      );
      assert.deepEqual((await postUpdate(env.app.url, bot.id, first!, secret)).json, { ok: true, accepted: true });
      await held.promise;
      // While the first is being delivered the rest arrive in the order c, a, b (a retrying platform, say).
      for (const update of [later[2]!, later[0]!, later[1]!]) {
        assert.deepEqual((await postUpdate(env.app.url, bot.id, update, secret)).json, { ok: true, accepted: true });
      }
      released.resolve();
      const chat506 = () => env.receiver.received.filter((d) => d.json?.update?.message?.chat?.id === 506);
      await eventually(() => chat506().length === 4, { what: 'all four deliveries' });
      assert.deepEqual(
        chat506().map((d) => d.json.update.update_id),
        [first!, ...later].map((update) => update.update_id),
      );
      for (const delivery of chat506())
        assert.equal(delivery.headers['x-orgplane-update-id'], String(delivery.json.update.update_id));
      const listed = await api(env.app.url, env.tenant.admin.token).get(
        `/v1/messenger/connections/${bot.id}/updates?status=delivered`,
      );
      for (const update of [first!, ...later])
        assert.ok(
          listed.body.updates.some((u: any) => u.updateId === update.update_id && u.attempts === 1),
          `update ${update.update_id} delivered once`,
        );
    } finally {
      env.receiver.respond = previous;
    }
  });

  test('concurrent claims in one process: each update_id accepted once, other connections answered on their own', async () => {
    const disabled = await connectBot(env);
    const disabledSecret = env.platform.webhookOf(disabled.bot.token)!.secretToken!;
    await api(env.app.url, env.tenant.admin.token).patch(`/v1/messenger/connections/${disabled.id}`, {
      enabled: false,
    });
    const ids = Array.from({ length: 10 }, (_, i) => 880_000 + i);
    const requests = ids.flatMap((updateId) => [
      ...Array.from({ length: 5 }, () =>
        postUpdate(env.app.url, bot.id, { update_id: updateId }, secret).then((answer) => ({
          updateId,
          kind: 'active',
          answer,
        })),
      ),
      postUpdate(env.app.url, disabled.id, { update_id: updateId }, disabledSecret).then((answer) => ({
        updateId,
        kind: 'disabled',
        answer,
      })),
    ]);
    const results = await Promise.all(requests);
    for (const updateId of ids) {
      const active = results.filter((r) => r.kind === 'active' && r.updateId === updateId).map((r) => r.answer.json);
      assert.equal(active.filter((json) => json.accepted === true).length, 1, `update ${updateId}`);
      assert.equal(active.filter((json) => json.accepted === false && json.reason === 'duplicate').length, 4);
    }
    for (const r of results.filter((r) => r.kind === 'disabled')) {
      assert.deepEqual(r.answer.json, { ok: true, accepted: false, reason: 'connection_disabled' });
    }
    const stored = await env.app.db.query(
      '/* test */ SELECT connection_id, count(*)::int AS n FROM messenger_updates WHERE update_id >= 880000 AND update_id < 880010 GROUP BY connection_id',
    );
    assert.deepEqual(stored.rows, [{ connection_id: bot.id, n: 10 }]);
    // Batches mixing new, duplicate and disabled updates queue each claimed update once: its claim row is
    // its queue entry (migration 0504), and no other job is written for it.
    const entries = await env.app.db.query(
      `/* test */ SELECT connection_id, update_id::int, order_key FROM messenger_updates WHERE update_id BETWEEN 880000 AND 880009 ORDER BY 2`,
    );
    const orderKey = entries.rows[0]?.order_key;
    assert.equal(typeof orderKey, 'string', 'a pending entry has its ordering key');
    assert.deepEqual(
      entries.rows,
      ids.map((updateId) => ({ connection_id: bot.id, update_id: updateId, order_key: orderKey })),
    );
    // No job queue besides it: nothing creates pg-boss's schema any more.
    const jobs = await env.app.db.query(`SELECT to_regnamespace('pgboss') AS schema`);
    assert.equal(jobs.rows[0].schema, null);
  });

  test('an update without a chat (inline query) is accepted and delivered too', async () => {
    const update = {
      update_id: 990_001,
      inline_query: { id: 'q1', from: { id: 77, is_bot: false, first_name: 'A' }, query: 'cats', offset: '' },
    };
    const answer = await postUpdate(env.app.url, bot.id, update, secret);
    assert.deepEqual(answer.json, { ok: true, accepted: true });
    await eventually(() => env.receiver.received.some((d) => d.json?.update?.update_id === 990_001), {
      what: 'the delivery',
    });
  });

  test('the update is delivered exactly as received, is kept out of the queue job, and its stored copy is cleared once delivered', async () => {
    // Spacing, key order and a number beyond double precision survive only if the text is passed on as it came.
    const raw =
      '{ "message" : {"text": "kept  as  sent", "chat": {"type": "private", "id": 504}, "message_id": 3}, "update_id": 990002, "big": 123456789012345678901234567890 }';
    const answer = await postUpdate(env.app.url, bot.id, raw, secret);
    assert.deepEqual(answer.json, { ok: true, accepted: true });
    const delivery = await eventually(() => env.receiver.received.find((d) => d.json?.update?.update_id === 990_002), {
      what: 'the delivery',
    });
    assert.equal(delivery.body, `{"connectionId":"${bot.id}","update":${raw}}`);
    assert.equal(delivery.headers['x-orgplane-signature'], expectedSignature(bot.deliverySecret, delivery.body));
    const queued = await env.app.db.query(`SELECT to_regnamespace('pgboss') AS schema`);
    assert.equal(queued.rows[0].schema, null, 'no queue job holds it');
    const stored = await eventually(
      async () => {
        const { rows } = await env.app.db.query(
          'SELECT status, body FROM messenger_updates WHERE organization_id = $3 AND connection_id = $1 AND update_id = $2',
          [bot.id, 990_002, env.tenant.orgId],
        );
        return rows[0]?.status === 'delivered' ? rows[0] : undefined;
      },
      { what: 'the delivered state' },
    );
    assert.equal(stored.body, null);
  });

  test('an update whose text holds escapes PostgreSQL cannot keep in jsonb (NUL, a lone surrogate) is accepted and delivered as sent, and does not fail its batch', async () => {
    const odd =
      '{"update_id": 990004, "message": {"message_id": 5, "chat": {"id": 506, "type": "private"}, "text": "a\\u0000b \\ud800"}}';
    const normal = env.platform.messageUpdate(bot.bot.token, { chatId: 507, text: 'beside it' });
    // Sent together, so they can share one claim statement.
    const [oddAnswer, normalAnswer] = await Promise.all([
      postUpdate(env.app.url, bot.id, odd, secret),
      postUpdate(env.app.url, bot.id, normal, secret),
    ]);
    assert.deepEqual([oddAnswer.status, oddAnswer.json], [200, { ok: true, accepted: true }]);
    assert.deepEqual([normalAnswer.status, normalAnswer.json], [200, { ok: true, accepted: true }]);
    const delivery = await eventually(() => env.receiver.received.find((d) => d.json?.update?.update_id === 990_004), {
      what: 'the delivery',
    });
    assert.equal(delivery.body, `{"connectionId":"${bot.id}","update":${odd}}`);
    assert.equal(delivery.json.update.message.text, 'a\u0000b \ud800');
    await eventually(() => env.receiver.received.some((d) => d.json?.update?.update_id === normal.update_id), {
      what: 'the other delivery',
    });
  });

  test('a chat or sender id that is a string with control characters is not taken as the chat; the update is accepted and delivered', async () => {
    const update = {
      update_id: 990_005,
      message: { message_id: 6, chat: { id: 'x\u0000y', type: 'private' }, from: { id: 'a\u0001b' }, text: 'odd ids' },
    };
    const answer = await postUpdate(env.app.url, bot.id, update, secret);
    assert.deepEqual([answer.status, answer.json], [200, { ok: true, accepted: true }]);
    const delivery = await eventually(() => env.receiver.received.find((d) => d.json?.update?.update_id === 990_005), {
      what: 'the delivery',
    });
    assert.deepEqual(delivery.json.update, update);
    const listed = await api(env.app.url, env.tenant.admin.token).get(`/v1/messenger/connections/${bot.id}/updates`);
    assert.equal(listed.body.updates.find((u: any) => u.updateId === 990_005).chatId, null);
  });

  // A worker takes one organization's updates at a time and goes round the organizations that have any.
  test("updates of bots in three organizations, sent together, are each delivered once, every chat's in order", async () => {
    const bots = [bot];
    for (let i = 0; i < 2; i++) {
      const other = await createTenant(env.app.url);
      bots.push(await connectBot(env, other.admin.token));
    }
    // Each bot numbers its own updates (from 100001 up), so an update is its connection and its id.
    const sent: Array<{ connectionId: string; updateId: number }> = [];
    await Promise.all(
      bots.map(async (connection, index) => {
        const token = connection.bot.token;
        const webhookSecret = env.platform.webhookOf(token)!.secretToken!;
        for (let n = 0; n < 5; n++) {
          const update = env.platform.messageUpdate(token, { chatId: 600 + index, text: `message ${n}` }) as {
            update_id: number;
          };
          const answer = await postUpdate(env.app.url, connection.id, update, webhookSecret);
          assert.deepEqual(answer.json, { ok: true, accepted: true });
          sent.push({ connectionId: connection.id, updateId: update.update_id });
        }
      }),
    );
    await eventually(
      () =>
        sent.every(({ connectionId, updateId }) =>
          env.receiver.received.some(
            (d) => d.json?.connectionId === connectionId && d.json.update?.update_id === updateId,
          ),
        ),
      { what: 'every delivery' },
    );
    for (const [index, connection] of bots.entries()) {
      const delivered = env.receiver.received.filter(
        (d) => d.json?.connectionId === connection.id && d.json.update.message?.chat?.id === 600 + index,
      );
      const ids = delivered.map((d) => d.json.update.update_id as number);
      assert.equal(ids.length, 5, `each of ${connection.id}'s updates delivered once`);
      assert.deepEqual(
        ids,
        [...ids].sort((a, b) => a - b),
        'in update_id order',
      );
    }
  });

  // The ingress's, the workers' and the connection routes' statements stay on one tenant
  // (test/db/tenant-routing.ts).
  test('their statements stay on one tenant', async () => {
    await tenantRouting.assertStatementsStayOnOneTenant(env.app.db, 20);
  });
});
