// The stand-in bot platform answers as the Bot API documents, so the messenger tests exercise the
// real protocol: the shapes, the encodings, the validation and the webhook retries.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SECRET_HEADER, startBotPlatform, type BotPlatform } from '../support/bot-platform.ts';

let platform: BotPlatform;
before(async () => {
  platform = await startBotPlatform();
});
after(async () => {
  await platform.close();
});

async function call(token: string, method: string, body?: unknown, encoding: 'json' | 'form' = 'json') {
  const init: RequestInit =
    body === undefined
      ? { method: 'GET' }
      : encoding === 'json'
        ? { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }
        : { method: 'POST', body: new URLSearchParams(body as Record<string, string>) };
  const response = await fetch(`${platform.url}/bot${token}/${method}`, init);
  return { status: response.status, json: (await response.json()) as any };
}

test('an unknown token is 401 Unauthorized; an unknown method 404', async () => {
  assert.deepEqual(await call(platform.unknownToken(), 'getMe'), {
    status: 401,
    json: { ok: false, error_code: 401, description: 'Unauthorized' },
  });
  const bot = platform.addBot();
  assert.deepEqual(await call(bot.token, 'noSuchMethod', {}), {
    status: 404,
    json: { ok: false, error_code: 404, description: 'Not Found' },
  });
});

test('getMe describes the bot; method names are case-insensitive', async () => {
  const bot = platform.addBot({ username: 'orgplane_demo_bot' });
  const { status, json } = await call(bot.token, 'getme');
  assert.equal(status, 200);
  assert.equal(json.ok, true);
  assert.equal(json.result.id, bot.id);
  assert.equal(json.result.is_bot, true);
  assert.equal(json.result.username, 'orgplane_demo_bot');
});

test('setWebhook validates secret_token (1..256 of A-Z a-z 0-9 _ -) in JSON and form bodies', async () => {
  const bot = platform.addBot();
  const url = 'http://127.0.0.1:9/hook';
  const tooLong = await call(bot.token, 'setWebhook', { url, secret_token: 'a'.repeat(257) });
  assert.deepEqual(tooLong, {
    status: 400,
    json: { ok: false, error_code: 400, description: 'Bad Request: secret token is too long' },
  });
  for (const bad of ['a b', 'a+b', 'a/b=', 'сек']) {
    const answer = await call(bot.token, 'setWebhook', { url, secret_token: bad }, 'form');
    assert.equal(answer.json.description, 'Bad Request: secret token contains unallowed characters');
  }
  assert.equal(platform.webhookOf(bot.token), undefined);
  const good = `${'A'.repeat(200)}_-09az`;
  const set = await call(bot.token, 'setWebhook', { url, secret_token: good }, 'form');
  assert.deepEqual(set, { status: 200, json: { ok: true, result: true, description: 'Webhook was set' } });
  assert.equal(platform.webhookOf(bot.token)?.secretToken, good);
  const info = await call(bot.token, 'getWebhookInfo');
  assert.equal(info.json.result.url, url);
  const deleted = await call(bot.token, 'deleteWebhook', {});
  assert.deepEqual(deleted.json, { ok: true, result: true, description: 'Webhook was deleted' });
  assert.equal(platform.webhookOf(bot.token), undefined);
  assert.equal((await call(bot.token, 'deleteWebhook', {})).json.description, 'Webhook is already deleted');
});

test('sendMessage needs a known chat and a non-empty text', async () => {
  const bot = platform.addBot();
  assert.equal(
    (await call(bot.token, 'sendMessage', { chat_id: 42, text: 'hi' })).json.description,
    'Bad Request: chat not found',
  );
  platform.addChat(42);
  assert.equal(
    (await call(bot.token, 'sendMessage', { chat_id: 42, text: '' })).json.description,
    'Bad Request: message text is empty',
  );
  const sent = await call(bot.token, 'sendMessage', { chat_id: '42', text: 'hello' }, 'form');
  assert.equal(sent.status, 200);
  assert.equal(sent.json.result.chat.id, 42);
  assert.equal(sent.json.result.text, 'hello');
  assert.deepEqual(platform.sentMessages.at(-1), {
    token: bot.token,
    chatId: 42,
    text: 'hello',
    messageId: sent.json.result.message_id,
  });
});

test('as the platform, it sends updates with the secret header and retries non-2xx answers', async () => {
  const seen: Array<{ secret: string | undefined; body: string }> = [];
  let answers = [503, 500, 200];
  const receiver = createServer(async (req, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    seen.push({ secret: req.headers[SECRET_HEADER.toLowerCase()] as string | undefined, body });
    const status = answers.shift() ?? 200;
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(status === 200 ? { ok: true, method: 'sendMessage' } : { ok: false }));
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  try {
    const bot = platform.addBot();
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    await call(bot.token, 'setWebhook', { url, secret_token: 'the_secret' });
    const update = platform.messageUpdate(bot.token, { chatId: 7, text: 'hi' });
    const result = await platform.deliver(bot.token, update, { baseDelayMs: 1 });
    assert.deepEqual(
      result.attempts.map((attempt) => attempt.status),
      [503, 500, 200],
    );
    assert.equal(seen.length, 3);
    assert.ok(
      seen.every(
        (request) => request.secret === 'the_secret' && JSON.parse(request.body).update_id === update.update_id,
      ),
    );
    // A 2xx answer carrying `method` would be executed by the real platform; the stand-in records it.
    assert.equal(platform.methodAnswers.length, 1);
    answers = [500, 500];
    const givenUp = await platform.deliver(bot.token, update, { maxAttempts: 2, baseDelayMs: 1 });
    assert.equal(givenUp.status, 500);
    assert.equal(givenUp.attempts.length, 2);
  } finally {
    receiver.closeAllConnections();
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
  }
});
