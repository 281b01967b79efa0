// The webhook is authenticated only by its per-connection secret: one connection's secret opens no
// other connection, a session opens nothing, and a tampered id or header is refused.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { connectBot, postUpdate, startMessengerEnv, type CreatedConnection, type MessengerEnv } from './support.ts';
import { api } from '../support/http.ts';

describe('messenger webhook ingress: security', () => {
  let env: MessengerEnv;
  let first: CreatedConnection;
  let second: CreatedConnection;
  let firstSecret: string;
  let secondSecret: string;
  before(async () => {
    env = await startMessengerEnv();
    first = await connectBot(env);
    second = await connectBot(env, env.tenant.otherAdmin.token);
    firstSecret = env.platform.webhookOf(first.bot.token)!.secretToken!;
    secondSecret = env.platform.webhookOf(second.bot.token)!.secretToken!;
  });
  after(async () => {
    await env?.close();
  });

  test("a connection's secret does not open another connection's webhook (other organization included)", async () => {
    const crossed = await postUpdate(env.app.url, second.id, { update_id: 1 }, firstSecret);
    assert.deepEqual([crossed.status, crossed.json], [401, { ok: false, error: 'invalid secret' }]);
    const crossedBack = await postUpdate(env.app.url, first.id, { update_id: 1 }, secondSecret);
    assert.equal(crossedBack.status, 401);
    const stored = await env.app.db.query('SELECT count(*)::int AS n FROM messenger_updates');
    assert.equal(stored.rows[0].n, 0);
  });

  test('a session or the bot token instead of the secret is refused', async () => {
    const withSession = await postUpdate(env.app.url, first.id, { update_id: 2 }, undefined, {
      authorization: `Bearer ${env.tenant.admin.token}`,
    });
    assert.equal(withSession.status, 401);
    assert.equal((await postUpdate(env.app.url, first.id, { update_id: 2 }, first.bot.token)).status, 401);
    assert.equal((await postUpdate(env.app.url, first.id, { update_id: 2 }, first.deliverySecret)).status, 401);
    // The hash of the secret (what the database holds) is not the secret either.
    const hash = (
      await env.app.db.query('SELECT webhook_secret_hash FROM messenger_connections WHERE id = $1', [first.id])
    ).rows[0].webhook_secret_hash;
    assert.equal((await postUpdate(env.app.url, first.id, { update_id: 2 }, hash)).status, 401);
  });

  test('tampered connection ids are refused without reaching another connection', async () => {
    const id = first.id;
    const flipped = id.slice(0, -1) + (id.endsWith('a') ? 'b' : 'a');
    assert.equal((await postUpdate(env.app.url, flipped, { update_id: 3 }, firstSecret)).status, 401);
    // Malformed: no connection can have the id, so the right secret of another connection is still wrong.
    assert.equal((await postUpdate(env.app.url, id.toUpperCase(), { update_id: 3 }, firstSecret)).status, 401);
    assert.equal((await postUpdate(env.app.url, `${id}%00`, { update_id: 3 }, firstSecret)).status, 401);
    assert.equal((await postUpdate(env.app.url, `${id}/../${second.id}`, { update_id: 3 }, firstSecret)).status, 401);
  });

  test('a secret that differs only in case is refused; surrounding whitespace is not part of a header value', async () => {
    const swapped = firstSecret.replace(/[a-z]/, (c) => c.toUpperCase());
    assert.notEqual(swapped, firstSecret);
    assert.equal((await postUpdate(env.app.url, first.id, { update_id: 4 }, swapped)).status, 401);
    assert.equal((await postUpdate(env.app.url, first.id, { update_id: 4 }, `x${firstSecret}`)).status, 401);
    // RFC 9110: optional whitespace around a field value is not part of it, so this is the secret itself.
    assert.equal((await postUpdate(env.app.url, first.id, { update_id: 4 }, `${firstSecret} `)).status, 200);
  });

  test("the webhook route ignores sessions entirely and answers only the platform's shapes", async () => {
    const answer = await api(env.app.url, env.tenant.admin.token).post(`/v1/webhooks/messenger/${first.id}`, {
      update_id: 5,
    });
    assert.deepEqual([answer.status, answer.body], [401, { ok: false, error: 'invalid secret' }]);
  });
});
