// Helpers shared by the messenger tests (the app-level helpers live in test/support/).
import { createHmac } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Config } from '../../src/config.ts';
import { startTestApp, testBackend, type TestApp } from '../support/app.ts';
import { startBotPlatform, type Bot, type BotPlatform } from '../support/bot-platform.ts';
import { createTenant, type Tenant } from '../support/fixtures.ts';
import { api } from '../support/http.ts';

export const backend = testBackend;

/** Resolves when `predicate` holds, checking every `intervalMs`; fails after `timeoutMs` (a bound, not an assertion on speed). */
export async function eventually<T>(
  predicate: () => Promise<T | undefined | false> | T | undefined | false,
  { timeoutMs = 30_000, intervalMs = 100, what = 'condition' } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await predicate();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

// ---- the app, the stand-in platform and a delivery receiver, together ----

// Short delivery timings for tests (the documented defaults are in src/config.ts), set in the environment so that
// the server and worker processes some tests start have them too.
process.env.MESSENGER_DELIVERY_ATTEMPTS ??= '3';
process.env.MESSENGER_DELIVERY_RETRY_DELAY_SECONDS ??= '1';
process.env.MESSENGER_DELIVERY_MAX_RETRY_DELAY_SECONDS ??= '2';
process.env.MESSENGER_DELIVERY_POLL_SECONDS ??= '0.5';

export interface ReceivedDelivery {
  headers: Record<string, string | string[] | undefined>;
  body: string;
  json: { connectionId: string; update: Record<string, any> };
}

export interface DeliveryReceiver {
  url: string;
  received: ReceivedDelivery[];
  /** Decides each answer; the default is 200 `{}`. */
  respond: (delivery: ReceivedDelivery, res: ServerResponse) => void | Promise<void>;
  close(): Promise<void>;
}

export async function startDeliveryReceiver(): Promise<DeliveryReceiver> {
  const receiver: DeliveryReceiver = {
    url: '',
    received: [],
    respond: (_delivery, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    },
    close: async () => {},
  };
  const server = createServer(async (req: IncomingMessage, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    let json: any;
    try {
      json = JSON.parse(body);
    } catch {
      json = undefined;
    }
    const delivery = { headers: req.headers, body, json };
    receiver.received.push(delivery);
    await receiver.respond(delivery, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/deliveries`;
  receiver.close = async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return receiver;
}

export function expectedSignature(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body, 'utf8').digest('hex')}`;
}

export interface MessengerEnv {
  app: TestApp;
  platform: BotPlatform;
  receiver: DeliveryReceiver;
  tenant: Tenant;
  close(): Promise<void>;
}

export const loopbackOnly = ['127.0.0.0/8', '::1/128'];

export async function startMessengerEnv(overrides: Partial<Config> = {}): Promise<MessengerEnv> {
  const platform = await startBotPlatform();
  const receiver = await startDeliveryReceiver();
  const app = await startTestApp({
    messengerApiRoot: platform.url,
    allowedPrivateNetworks: loopbackOnly,
    logLevel: 'warn',
    ...overrides,
  });
  const tenant = await createTenant(app.url);
  return {
    app,
    platform,
    receiver,
    tenant,
    async close() {
      await app.close();
      await receiver.close();
      await platform.close();
    },
  };
}

export interface CreatedConnection {
  id: string;
  bot: Bot;
  deliverySecret: string;
  connection: Record<string, any>;
}

export async function connectBot(
  env: MessengerEnv,
  token = env.tenant.admin.token,
  deliveryUrl = env.receiver.url,
): Promise<CreatedConnection> {
  const bot = env.platform.addBot();
  const created = await api(env.app.url, token).post('/v1/messenger/connections', { botToken: bot.token, deliveryUrl });
  if (created.status !== 201) throw new Error(`connect failed: ${created.status} ${created.text}`);
  return {
    id: created.body.connection.id,
    bot,
    deliverySecret: created.body.deliverySecret,
    connection: created.body.connection,
  };
}

/** POSTs an update to the webhook the way the platform would (one attempt, no retries). */
export async function postUpdate(
  baseUrl: string,
  connectionId: string,
  body: unknown,
  secret: string | undefined,
  headers: Record<string, string> = {},
) {
  const response = await fetch(`${baseUrl}/v1/webhooks/messenger/${connectionId}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(secret !== undefined ? { 'x-telegram-bot-api-secret-token': secret } : {}),
      ...headers,
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await response.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, json, text, headers: response.headers };
}
