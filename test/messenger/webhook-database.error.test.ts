// The database goes away during a stream of updates (every connection dropped, new ones refused, as
// when PostgreSQL restarts), then comes back. Every update that got 200 is delivered; every other
// one got a non-2xx answer, so the platform retries it, and after its retries it is delivered too.
// The machine's PostgreSQL is not touched: the app reaches it through a TCP proxy this test cuts.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../support/app.ts';
import { startBotPlatform, type BotPlatform } from '../support/bot-platform.ts';
import { createTenant } from '../support/fixtures.ts';
import { startTcpProxy, type TcpProxy } from './processes.ts';
import {
  backend,
  connectBot,
  eventually,
  loopbackOnly,
  postUpdate,
  startDeliveryReceiver,
  type DeliveryReceiver,
} from './support.ts';

// Deliveries cut off mid-flight are presumed lost after 3 s (their lease ends) and taken again at the next poll.
process.env.MESSENGER_DELIVERY_EXPIRE_SECONDS = '3';
process.env.MESSENGER_DELIVERY_TIMEOUT_MS = '2000';

const skip =
  backend !== 'postgres' ? 'needs PostgreSQL: the embedded database cannot be taken away from its own process' : false;

describe('messenger webhook: the database restarts during a stream of updates', { skip }, () => {
  let proxy: TcpProxy;
  let app: TestApp;
  let platform: BotPlatform;
  let receiver: DeliveryReceiver;

  before(async () => {
    proxy = await startTcpProxy({ host: '127.0.0.1', port: 5432 });
    platform = await startBotPlatform();
    receiver = await startDeliveryReceiver();
    // startTestApp creates a fresh database; the app reaches that same database through the proxy.
    const direct = await startTestApp({
      messengerApiRoot: platform.url,
      allowedPrivateNetworks: loopbackOnly,
      logLevel: 'warn',
    });
    const viaProxy = new URL(direct.databaseUrl!);
    viaProxy.host = `127.0.0.1:${proxy.port}`;
    await direct.app.close();
    app = await startTestApp({
      messengerApiRoot: platform.url,
      allowedPrivateNetworks: loopbackOnly,
      logLevel: 'warn',
      databaseUrl: viaProxy.toString(),
      secretKey: direct.config.secretKey,
    });
    Object.assign(app, { closeDirect: direct.close });
  });

  after(async () => {
    await app?.close();
    await (app as unknown as { closeDirect?: () => Promise<void> })?.closeDirect?.();
    await proxy?.close();
    await receiver?.close();
    await platform?.close();
  });

  test('nothing acknowledged is lost, nothing lost was acknowledged', async () => {
    const tenant = await createTenant(app.url);
    const bot = await connectBot({ app, platform, receiver, tenant, close: async () => {} });
    const secret = platform.webhookOf(bot.bot.token)!.secretToken!;
    const total = 200;
    const statuses = new Map<number, number>();
    let next = 1;
    let failures = 0;
    const updateOf = (id: number) => ({
      update_id: id,
      message: { message_id: id, chat: { id: 800 + (id % 5), type: 'private' }, date: 0, text: `u${id}` },
    });

    const sender = async () => {
      while (next <= total) {
        const id = next++;
        let status: number;
        try {
          status = (await postUpdate(app.url, bot.id, updateOf(id), secret)).status;
        } catch {
          status = 0;
        }
        statuses.set(id, status);
        if (status !== 200) failures += 1;
      }
    };
    const senders = Promise.all([sender(), sender(), sender(), sender()]);
    await eventually(() => statuses.size >= 40, { what: '40 answers before the outage' });
    proxy.cut();
    await eventually(() => failures >= 10, { what: 'answers during the outage' });
    proxy.restore();
    await senders;

    const acknowledged = [...statuses].filter(([, status]) => status === 200).map(([id]) => id);
    const refused = [...statuses].filter(([, status]) => status !== 200);
    assert.equal(statuses.size, total);
    assert.ok(refused.length >= 10, 'the outage was seen');
    assert.ok(acknowledged.length >= 40, 'updates were acknowledged');
    for (const [, status] of refused) assert.ok(status < 200 || status > 299, `refused with ${status}`);

    // Every acknowledged update is delivered.
    const delivered = () =>
      new Set(
        receiver.received.filter((d) => d.json?.connectionId === bot.id).map((d) => d.json.update.update_id as number),
      );
    await eventually(() => acknowledged.every((id) => delivered().has(id)), {
      what: 'every acknowledged update delivered',
      timeoutMs: 60_000,
    });

    // The platform retries the others until they are acknowledged (accepted, or duplicate if the claim
    // did commit before the connection dropped); then they are delivered as well.
    for (const [id] of refused) {
      let answer = await postUpdate(app.url, bot.id, updateOf(id), secret);
      for (let attempt = 0; answer.status !== 200 && attempt < 20; attempt++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        answer = await postUpdate(app.url, bot.id, updateOf(id), secret);
      }
      assert.equal(answer.status, 200, `update ${id} after retries`);
    }
    await eventually(() => delivered().size === total, { what: 'every update delivered', timeoutMs: 60_000 });
  });
});
