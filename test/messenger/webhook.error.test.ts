// Spec operation 8, every documented refusal, in the spec's order: the secret (401) before the body
// is read, the size cap (413), malformed bodies (400), a disabled connection (200, accepted: false);
// and processing failures: retries, the dead letter, refused replies.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { api } from '../support/http.ts';
import { rawRequest } from '../support/raw-http.ts';
import {
  connectBot,
  eventually,
  postUpdate,
  startMessengerEnv,
  type CreatedConnection,
  type MessengerEnv,
} from './support.ts';

const LIMIT = 256 * 1024;

describe('messenger webhook ingress: refusals', () => {
  let env: MessengerEnv;
  let bot: CreatedConnection;
  let secret: string;
  const answers: unknown[] = [];
  const post = async (...args: Parameters<typeof postUpdate>) => {
    const answer = await postUpdate(...args);
    answers.push(answer.json);
    return answer;
  };
  const storedUpdateIds = async () =>
    (await env.app.db.query('SELECT update_id FROM messenger_updates WHERE connection_id = $1', [bot.id])).rows.map(
      (row: any) => row.update_id,
    );

  /** The update as the updates route lists it under `status`, once it is there. */
  const listedUpdate = (status: string, updateId: number, what: string, timeoutMs?: number) =>
    eventually(
      async () => {
        const listed = await api(env.app.url, env.tenant.admin.token).get(
          `/v1/messenger/connections/${bot.id}/updates?status=${status}`,
        );
        return listed.body.updates.find((u: any) => u.updateId === updateId);
      },
      { what, ...(timeoutMs ? { timeoutMs } : {}) },
    );

  before(async () => {
    env = await startMessengerEnv();
    bot = await connectBot(env);
    secret = env.platform.webhookOf(bot.bot.token)!.secretToken!;
  });
  after(async () => {
    await env?.close();
  });

  test('no secret, a wrong secret or an unknown connection: 401 {ok: false, error: "invalid secret"}', async () => {
    const update = { update_id: 1 };
    for (const [connectionId, header] of [
      [bot.id, undefined],
      [bot.id, ''],
      [bot.id, `${secret}x`],
      [bot.id, secret.slice(0, -1)],
      [bot.id, secret.toUpperCase()],
      ['emc_01jqz3v6b8e9f0g1h2j3k4m5n6', secret],
    ] as const) {
      const answer = await post(env.app.url, connectionId, update, header);
      assert.equal(answer.status, 401, `${connectionId} ${header}`);
      assert.deepEqual(answer.json, { ok: false, error: 'invalid secret' });
    }
    assert.deepEqual(await storedUpdateIds(), []);
  });

  test('the secret is decided before the body is read: a wrong secret with a malformed or huge body is 401', async () => {
    assert.equal((await post(env.app.url, bot.id, '{not json', 'wrong')).status, 401);
    assert.equal(
      (await post(env.app.url, bot.id, JSON.stringify({ update_id: 5, pad: 'x'.repeat(LIMIT) }), 'wrong')).status,
      401,
    );
    // A declared length of 10 MiB and no body sent at all: answered without waiting for the body.
    const port = new URL(env.app.url).port;
    const raw = await rawRequest(
      Number(port),
      `POST /v1/webhooks/messenger/${bot.id} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 10485760\r\nConnection: close\r\n\r\n`,
      '',
    );
    assert.match(raw, /^HTTP\/1\.1 401 /);
  });

  test('a malformed connection id is 401 invalid secret: no connection has it, so no secret matches (the secret is decided first)', async () => {
    for (const id of ['emc_nope', 'nope', `${bot.id}x`]) {
      const answer = await post(env.app.url, id, { update_id: 1 }, secret);
      assert.deepEqual([answer.status, answer.json], [401, { ok: false, error: 'invalid secret' }], id);
    }
  });

  test('a body over 256 KiB is 413 {error: "payload_too_large"}, declared or not', async () => {
    const big = JSON.stringify({ update_id: 10, pad: 'x'.repeat(LIMIT) });
    const declared = await post(env.app.url, bot.id, big, secret);
    assert.equal(declared.status, 413);
    assert.deepEqual(declared.json, { error: 'payload_too_large' });

    // Chunked transfer: no Content-Length at all; the cap counts the bytes received.
    const port = Number(new URL(env.app.url).port);
    const chunk = Buffer.from(big);
    const chunked = `${chunk.length.toString(16)}\r\n${big}\r\n0\r\n\r\n`;
    const raw = await rawRequest(
      port,
      `POST /v1/webhooks/messenger/${bot.id} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-Telegram-Bot-Api-Secret-Token: ${secret}\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n`,
      chunked,
    );
    assert.match(raw, /^HTTP\/1\.1 413 /);
    assert.ok(raw.includes('{"error":"payload_too_large"}'));

    // An understated Content-Length: the bytes past the declared length are the rest of a body too
    // large, not another request: 413, and nothing of it is acknowledged or stored, even when the
    // declared part alone is a complete update.
    for (const [declaredLength, updateId] of [
      [20, 10],
      [Buffer.byteLength('{"update_id":12}'), 12],
    ] as const) {
      const body = updateId === 10 ? big : `{"update_id":12}${'x'.repeat(LIMIT)}`;
      const understated = await rawRequest(
        port,
        `POST /v1/webhooks/messenger/${bot.id} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-Telegram-Bot-Api-Secret-Token: ${secret}\r\nContent-Length: ${declaredLength}\r\n\r\n`,
        body,
      );
      assert.match(understated, /^HTTP\/1\.1 413 /, understated.slice(0, 200));
      assert.ok(understated.includes('{"error":"payload_too_large"}'));
      assert.ok(!/HTTP\/1\.1 2\d\d/.test(understated), 'no part of it was acknowledged');
      // An update sent after it is claimed after any claim it could have made (claims commit in turn).
      assert.equal((await post(env.app.url, bot.id, { update_id: 100 + updateId }, secret)).status, 200);
      assert.ok(!(await storedUpdateIds()).includes(updateId), `update ${updateId} was not stored`);
    }

    // Exactly at the cap is accepted.
    const base = JSON.stringify({ update_id: 11, pad: '' });
    const atCap = JSON.stringify({ update_id: 11, pad: 'y'.repeat(LIMIT - Buffer.byteLength(base)) });
    assert.equal(Buffer.byteLength(atCap), LIMIT);
    const accepted = await post(env.app.url, bot.id, atCap, secret);
    assert.deepEqual([accepted.status, accepted.json], [200, { ok: true, accepted: true }]);
  });

  test('bytes beyond the declared Content-Length that come after the answer are the next request (400), and the update stands', async () => {
    // HTTP/1.1 framing: once the declared body is read and answered, what follows on the connection
    // is a new request. The 413 description says so.
    const port = Number(new URL(env.app.url).port);
    const declared = '{"update_id":14}';
    const socket = connect(port, '127.0.0.1');
    let data = '';
    socket.on('data', (chunk) => (data += chunk.toString('latin1')));
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    socket.on('error', () => {});
    socket.write(
      `POST /v1/webhooks/messenger/${bot.id} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-Telegram-Bot-Api-Secret-Token: ${secret}\r\nContent-Length: ${declared.length}\r\n\r\n${declared}`,
    );
    await eventually(() => data.includes('{"ok":true,"accepted":true}'), { what: 'the acknowledgement' });
    socket.end('x'.repeat(LIMIT + 1));
    await closed;
    assert.match(data, /^HTTP\/1\.1 200 /);
    assert.match(data.slice(data.indexOf('{"ok":true,"accepted":true}')), /HTTP\/1\.1 400 /);
    assert.ok(!data.includes(' 413 '), data);
    assert.ok((await storedUpdateIds()).includes(14));
  });

  test('malformed JSON is 400 invalid_request with details', async () => {
    for (const body of ['{"update_id": 1', '', 'update_id=1']) {
      const answer = await post(env.app.url, bot.id, body, secret);
      assert.equal(answer.status, 400, body);
      assert.equal(answer.json.error, 'invalid_request');
      assert.ok(Array.isArray(answer.json.details) && answer.json.details.length > 0);
    }
  });

  test('a body that is not UTF-8, or a Content-Type header that cannot be parsed, is 400 invalid_request, and nothing is stored', async () => {
    const port = Number(new URL(env.app.url).port);
    const head = (length: number, contentType = 'application/json') =>
      `POST /v1/webhooks/messenger/${bot.id} HTTP/1.1\r\nHost: x\r\nContent-Type: ${contentType}\r\nX-Telegram-Bot-Api-Secret-Token: ${secret}\r\nContent-Length: ${length}\r\nConnection: close\r\n\r\n`;
    // Read as UTF-8, \xC0\xAF\xFF would be stored and delivered as three U+FFFD: not what was sent.
    const notUtf8 = Buffer.concat([
      Buffer.from('{"update_id": 7001, "message": {"text": "'),
      Buffer.from([0xc0, 0xaf, 0xff]),
      Buffer.from('"}}'),
    ]);
    const latin1 = Buffer.from('{"update_id": 7002, "message": {"text": "caf\xe9"}}', 'latin1');
    for (const body of [notUtf8, latin1]) {
      const raw = await rawRequest(port, head(body.length), body);
      assert.match(raw, /^HTTP\/1\.1 400 /, raw);
      const answer = JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4));
      assert.equal(answer.error, 'invalid_request');
      assert.equal(answer.details[0].message, 'The body is not valid UTF-8');
    }
    for (const contentType of [';', 'application/', 'application/json, text/plain']) {
      const body = JSON.stringify({ update_id: 7003 });
      const raw = await rawRequest(port, head(body.length, contentType), body);
      assert.match(raw, /^HTTP\/1\.1 400 /, `${contentType}: ${raw}`);
      assert.equal(JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4)).error, 'invalid_request');
    }
    const stored = (await storedUpdateIds()).map(Number);
    for (const id of [7001, 7002, 7003]) assert.ok(!stored.includes(id), `update ${id} was stored`);
  });

  test('an update_id that is missing or not a non-negative integer is 400 pointing at update_id', async () => {
    for (const body of [
      {},
      { update_id: -1 },
      { update_id: 1.5 },
      { update_id: '12' },
      { update_id: null },
      { update_id: 2 ** 60 },
      { message: {} },
    ]) {
      const answer = await post(env.app.url, bot.id, body, secret);
      assert.equal(answer.status, 400, JSON.stringify(body));
      assert.equal(answer.json.error, 'invalid_request');
      assert.deepEqual(answer.json.details[0].path, ['update_id'], JSON.stringify(body));
    }
    for (const body of ['[1,2]', 'null', '42']) {
      const answer = await post(env.app.url, bot.id, body, secret);
      assert.equal(answer.status, 400, body);
      assert.equal(answer.json.error, 'invalid_request');
    }
    assert.equal((await storedUpdateIds()).filter((id: number) => id < 10).length, 0);
  });

  test('a disabled connection answers 200 accepted: false with a reason, and stores nothing', async () => {
    const admin = api(env.app.url, env.tenant.admin.token);
    assert.equal(
      (await admin.patch(`/v1/messenger/connections/${bot.id}`, { enabled: false })).body.connection.status,
      'disabled',
    );
    const answer = await post(env.app.url, bot.id, { update_id: 20 }, secret);
    assert.deepEqual([answer.status, answer.json], [200, { ok: true, accepted: false, reason: 'connection_disabled' }]);
    assert.ok(!(await storedUpdateIds()).includes(20));
    await admin.patch(`/v1/messenger/connections/${bot.id}`, { enabled: true });
    const again = await post(env.app.url, bot.id, { update_id: 20 }, secret);
    assert.deepEqual(again.json, { ok: true, accepted: true });
  });

  test('no answer of the webhook carries a `method` field, even for an update that has one', async () => {
    const answer = await post(
      env.app.url,
      bot.id,
      { update_id: 30, method: 'sendMessage', chat_id: 1, text: 'x' },
      secret,
    );
    assert.deepEqual(answer.json, { ok: true, accepted: true });
    for (const body of answers) {
      if (body && typeof body === 'object') assert.ok(!('method' in body), JSON.stringify(body));
    }
  });

  test('an update the database refuses is answered 503 alone; the updates that shared its batch are stored and acknowledged', async () => {
    // A trigger refuses one update with a data error, as a value the ingress did not foresee would.
    const refusedId = 600;
    await env.app.db.query(`CREATE FUNCTION refuse_one_update() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.update_id = ${refusedId} THEN RAISE EXCEPTION 'this update is refused' USING ERRCODE = '22023'; END IF;
        RETURN NEW;
      END $$`);
    await env.app.db.query(
      'CREATE TRIGGER refuse_one_update BEFORE INSERT ON messenger_updates FOR EACH ROW EXECUTE FUNCTION refuse_one_update()',
    );
    const others = Array.from({ length: 19 }, (_, i) => refusedId + 1 + i);
    let results: { updateId: number; status: number; json: any }[];
    try {
      // Sent together, so the refused update shares claim statements with the others.
      results = await Promise.all(
        [refusedId, ...others].map(async (updateId) => {
          const answer = await post(env.app.url, bot.id, { update_id: updateId }, secret);
          return { updateId, status: answer.status, json: answer.json };
        }),
      );
    } finally {
      await env.app.db.query('DROP TRIGGER refuse_one_update ON messenger_updates');
      await env.app.db.query('DROP FUNCTION refuse_one_update()');
    }
    const refused = results.find((result) => result.updateId === refusedId)!;
    assert.equal(refused.status, 503);
    assert.equal(refused.json.error, 'service_unavailable');
    for (const result of results.filter((r) => r.updateId !== refusedId)) {
      assert.deepEqual([result.status, result.json], [200, { ok: true, accepted: true }], `update ${result.updateId}`);
    }
    const stored = await storedUpdateIds();
    assert.deepEqual(
      stored.filter((id: number) => id >= refusedId && id < refusedId + 20).sort((a: number, b: number) => a - b),
      others,
    );
    // The platform retries the refused one; once the database takes it, it is accepted.
    const retried = await post(env.app.url, bot.id, { update_id: refusedId }, secret);
    assert.deepEqual([retried.status, retried.json], [200, { ok: true, accepted: true }]);
  });

  test('a failing delivery is retried with backoff, then succeeds', async () => {
    const previous = env.receiver.respond;
    let calls = 0;
    env.receiver.respond = (delivery, res) => {
      if (delivery.json?.update?.update_id === 40 && calls++ === 0) {
        res.writeHead(500);
        res.end('boom');
        return;
      }
      return previous(delivery, res);
    };
    try {
      await post(
        env.app.url,
        bot.id,
        { update_id: 40, message: { message_id: 1, chat: { id: 600, type: 'private' }, date: 0, text: 'a' } },
        secret,
      );
      const row = await listedUpdate('delivered', 40, 'the retried delivery');
      assert.equal(row.attempts, 2);
      assert.equal(env.receiver.received.filter((d) => d.json?.update?.update_id === 40).length, 2);
    } finally {
      env.receiver.respond = previous;
    }
  });

  test('after the last attempt the update is dead (shown on the updates route) and its chat moves on', async () => {
    const previous = env.receiver.respond;
    env.receiver.respond = (delivery, res) => {
      if (delivery.json?.update?.update_id === 50) {
        res.writeHead(503);
        res.end();
        return;
      }
      return previous(delivery, res);
    };
    try {
      const chat = { id: 601, type: 'private' };
      await post(env.app.url, bot.id, { update_id: 50, message: { message_id: 1, chat, date: 0, text: 'a' } }, secret);
      await post(env.app.url, bot.id, { update_id: 51, message: { message_id: 2, chat, date: 0, text: 'b' } }, secret);
      const dead = await listedUpdate('dead', 50, 'the dead letter', 60_000);
      assert.equal(dead.attempts, 3);
      assert.match(dead.lastError, /gave up after 3 attempts: delivery answered HTTP 503/);
      assert.equal(env.receiver.received.filter((d) => d.json?.update?.update_id === 50).length, 3);
      await eventually(() => env.receiver.received.some((d) => d.json?.update?.update_id === 51), {
        what: 'the next update of the chat',
      });
    } finally {
      env.receiver.respond = previous;
    }
  });

  test('an update that arrived late but comes first in its chat is the one retried and dead-lettered; the later one is then delivered', async () => {
    const previous = env.receiver.respond;
    // Resolved by the receiver once it holds the first delivery; resolved by the test to let it go.
    const held = Promise.withResolvers<void>();
    const released = Promise.withResolvers<void>();
    env.receiver.respond = async (delivery, res) => {
      const updateId = delivery.json?.update?.update_id;
      if (updateId === 90) {
        held.resolve();
        await released.promise;
      }
      if (updateId === 91) {
        res.writeHead(503);
        res.end();
        return;
      }
      return previous(delivery, res);
    };
    try {
      const chat = { id: 607, type: 'private' };
      const update = (updateId: number) => ({
        update_id: updateId,
        message: { message_id: updateId, chat, date: 0, text: String(updateId) },
      });
      await post(env.app.url, bot.id, update(90), secret);
      await held.promise;
      // Queued while 90 is delivered: 92 first, then 91 (whose every delivery fails).
      await post(env.app.url, bot.id, update(92), secret);
      await post(env.app.url, bot.id, update(91), secret);
      released.resolve();
      const dead = await listedUpdate('dead', 91, 'the dead letter', 60_000);
      assert.equal(dead.attempts, 3);
      const delivered = await listedUpdate('delivered', 92, 'the later update', 60_000);
      assert.equal(delivered.attempts, 1);
      const order = env.receiver.received.map((d) => d.json?.update?.update_id).filter((id) => id >= 90 && id <= 92);
      assert.deepEqual(order, [90, 91, 91, 91, 92]);
    } finally {
      env.receiver.respond = previous;
    }
  });

  test('a reply the platform asks to slow down for (429) is retried, and sent', async () => {
    const previous = env.receiver.respond;
    env.receiver.respond = (delivery, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ reply: { text: `echo ${delivery.json?.update?.update_id}` } }));
    };
    try {
      env.platform.addChat(603);
      env.platform.failNext('sendMessage', { error_code: 429, description: 'Too Many Requests: retry after 1' });
      await post(
        env.app.url,
        bot.id,
        { update_id: 70, message: { message_id: 1, chat: { id: 603, type: 'private' }, date: 0, text: 'a' } },
        secret,
      );
      const row = await listedUpdate('delivered', 70, 'the delivered update', 30_000);
      assert.equal(row.replyStatus, 'sent');
      assert.equal(row.attempts, 2);
      assert.ok(env.platform.sentMessages.some((m) => String(m.chatId) === '603' && m.text === 'echo 70'));
      // At least once: the retry delivered the update again.
      assert.equal(env.receiver.received.filter((d) => d.json?.update?.update_id === 70).length, 2);
    } finally {
      env.receiver.respond = previous;
    }
  });

  test('a delivery answered 200 with more than can be read is delivered, and the lost reply is recorded', async () => {
    const previous = env.receiver.respond;
    env.receiver.respond = (_delivery, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ reply: { text: 'x'.repeat(100 * 1024) } }));
    };
    try {
      await post(
        env.app.url,
        bot.id,
        { update_id: 80, message: { message_id: 1, chat: { id: 604, type: 'private' }, date: 0, text: 'a' } },
        secret,
      );
      const row = await listedUpdate('delivered', 80, 'the delivered update');
      assert.equal(row.replyStatus, null);
      assert.match(row.lastError, /could not be read.*a reply in it was not sent/);
      assert.equal(row.attempts, 1);
    } finally {
      env.receiver.respond = previous;
    }
  });

  test('a reply the platform refuses is recorded on the update and not retried', async () => {
    const previous = env.receiver.respond;
    env.receiver.respond = (_delivery, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ reply: { text: 'hi' } }));
    };
    try {
      // Chat 602 never wrote to the bot on the platform's side: sendMessage answers "chat not found".
      await post(
        env.app.url,
        bot.id,
        { update_id: 60, message: { message_id: 1, chat: { id: 602, type: 'private' }, date: 0, text: 'a' } },
        secret,
      );
      const row = await listedUpdate('delivered', 60, 'the delivered update');
      assert.equal(row.replyStatus, 'failed');
      assert.match(row.lastError, /chat not found/);
      assert.equal(row.attempts, 1);
      assert.ok(!row.lastError.includes(bot.bot.token));
    } finally {
      env.receiver.respond = previous;
    }
  });
});
