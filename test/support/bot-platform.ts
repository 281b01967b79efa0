// A stand-in for Telegram's Bot API, for tests: the one part of the messenger flow that cannot run
// here. It follows the documented protocol (https://core.telegram.org/bots/api) for the four methods
// orgplane uses, and it can play the platform's other role: POSTing updates to the registered webhook
// with the secret header, and retrying any non-2xx answer as the real platform does.
//
// Protocol, as documented and as the real server answers:
// - `GET|POST {root}/bot<token>/<method>`; parameters in the query string, a JSON body, an
//   urlencoded body or multipart/form-data. Method names are case-insensitive.
// - Every answer is JSON: `{ok: true, result}` or `{ok: false, error_code, description}`, with the
//   HTTP status equal to error_code. An unknown token is 401 "Unauthorized"; an unknown method 404
//   "Not Found".
// - setWebhook: `url` (empty removes the webhook), `secret_token` 1..256 of [A-Za-z0-9_-],
//   `max_connections` 1..100. Answers `true` with a description.
// - deleteWebhook: answers `true`. sendMessage: `chat_id`, `text` (1..4096) -> the sent Message.
//
// Two deliberate liberties, both switchable: the real platform only calls HTTPS webhooks on ports
// 443/80/88/8443, while tests listen on plain HTTP on random loopback ports (`strictWebhookUrl`), and
// real chats exist before a bot can write to them; here a chat "exists" once an update from it has
// been sent, or when registered with `addChat`.

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';

export const SECRET_HEADER = 'X-Telegram-Bot-Api-Secret-Token';

export interface Bot {
  id: number;
  token: string;
  username: string;
  firstName: string;
}

export interface RecordedCall {
  token: string;
  method: string;
  params: Record<string, unknown>;
  httpMethod: string;
  contentType: string | undefined;
  /** What the stand-in answered. */
  status: number;
  answer: unknown;
}

export interface WebhookRegistration {
  url: string;
  secretToken: string | undefined;
  maxConnections: number;
  allowedUpdates: string[] | undefined;
}

export interface WebhookAttempt {
  status: number;
  body: string;
  headers: Record<string, string>;
}

export interface DeliveryResult {
  /** The last attempt's status (0 when the webhook could not be reached at all). */
  status: number;
  /** Parsed JSON of the last answer, or undefined when it was not JSON. */
  json: unknown;
  attempts: WebhookAttempt[];
}

export interface SentMessage {
  token: string;
  chatId: number | string;
  text: string;
  messageId: number;
}

export interface FailureInjection {
  error_code: number;
  description: string;
  /** How many calls fail before the method works again (default 1). */
  times?: number;
}

export interface BotPlatformOptions {
  /** Refuse webhooks that are not HTTPS on 443/80/88/8443, as the real platform does. Default false. */
  strictWebhookUrl?: boolean;
}

export interface BotPlatform {
  /** The API root to configure as MESSENGER_API_ROOT, e.g. `http://127.0.0.1:41234`. */
  readonly url: string;
  readonly calls: RecordedCall[];
  readonly sentMessages: SentMessage[];
  /** Every answer a webhook gave that carried a `method` field (the platform would execute it). */
  readonly methodAnswers: unknown[];
  addBot(options?: { username?: string }): Bot;
  /** A token with a valid shape that this platform does not know (getMe answers 401). */
  unknownToken(): string;
  addChat(chatId: number | string): void;
  callsTo(method: string, token?: string): RecordedCall[];
  webhookOf(token: string): WebhookRegistration | undefined;
  failNext(method: string, failure: FailureInjection): void;
  /**
   * The next call of `method` gets this body, 200, whatever it is: not the Bot API's protocol, but
   * what a broken platform or a proxy in front of it could answer.
   */
  answerNextWith(method: string, body: unknown): void;
  /** A realistic private-chat text message update; update_ids grow per bot unless given. */
  messageUpdate(token: string, options: { chatId: number; text: string; updateId?: number }): Record<string, unknown>;
  /**
   * Acts as the platform: POSTs `update` to the bot's registered webhook with the secret header,
   * retrying non-2xx answers (and unreachable webhooks) up to `maxAttempts` times with growing delays.
   */
  deliver(
    token: string,
    update: Record<string, unknown>,
    options?: { maxAttempts?: number; baseDelayMs?: number; secretToken?: string | null },
  ): Promise<DeliveryResult>;
  close(): Promise<void>;
}

const METHOD_NAMES = ['getMe', 'setWebhook', 'deleteWebhook', 'getWebhookInfo', 'sendMessage'];

class BotApiError extends Error {
  readonly errorCode: number;
  constructor(errorCode: number, description: string) {
    super(description);
    this.errorCode = errorCode;
  }
}

export async function startBotPlatform(options: BotPlatformOptions = {}): Promise<BotPlatform> {
  const bots = new Map<string, Bot>();
  const webhooks = new Map<string, WebhookRegistration>();
  const knownChats = new Set<string>();
  const failures = new Map<string, FailureInjection & { remaining: number }>();
  const rawAnswers = new Map<string, unknown>();
  const nextUpdateId = new Map<string, number>();
  const calls: RecordedCall[] = [];
  const sentMessages: SentMessage[] = [];
  const methodAnswers: unknown[] = [];
  let nextBotId = 7_000_000_001;
  let nextMessageId = 1;

  function botToken(id: number): string {
    // Real tokens are `<bot id>:<35 characters of [A-Za-z0-9_-]>`.
    const tail = randomBytes(27).toString('base64url').slice(0, 35);
    return `${id}:${tail}`;
  }

  function handleMethod(
    bot: Bot,
    method: string,
    params: Record<string, unknown>,
  ): { result: unknown; description?: string } {
    switch (method) {
      case 'getme':
        return {
          result: {
            id: bot.id,
            is_bot: true,
            first_name: bot.firstName,
            username: bot.username,
            can_join_groups: true,
            can_read_all_group_messages: false,
            supports_inline_queries: false,
          },
        };
      case 'setwebhook': {
        const url = params.url === undefined ? undefined : String(params.url);
        if (url === undefined) throw new BotApiError(400, 'Bad Request: parameter "url" is required');
        if (url === '') {
          const had = webhooks.delete(bot.token);
          return { result: true, description: had ? 'Webhook was deleted' : 'Webhook is already deleted' };
        }
        let parsed: URL;
        try {
          parsed = new URL(url);
        } catch {
          throw new BotApiError(400, 'Bad Request: invalid webhook URL specified');
        }
        if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') {
          throw new BotApiError(400, 'Bad Request: bad webhook: Unsupported URL protocol');
        }
        if (options.strictWebhookUrl) {
          if (parsed.protocol !== 'https:')
            throw new BotApiError(400, 'Bad Request: bad webhook: An HTTPS URL must be provided for webhook');
          if (!['', '443', '80', '88', '8443'].includes(parsed.port)) {
            throw new BotApiError(
              400,
              'Bad Request: bad webhook: Webhook can be set up only on ports 80, 88, 443 or 8443',
            );
          }
        }
        let secretToken: string | undefined;
        if (params.secret_token !== undefined && params.secret_token !== '') {
          secretToken = String(params.secret_token);
          if (secretToken.length > 256) throw new BotApiError(400, 'Bad Request: secret token is too long');
          if (!/^[A-Za-z0-9_-]+$/.test(secretToken))
            throw new BotApiError(400, 'Bad Request: secret token contains unallowed characters');
        }
        let maxConnections = 40;
        if (params.max_connections !== undefined) {
          maxConnections = Number(params.max_connections);
          if (!Number.isInteger(maxConnections) || maxConnections < 1 || maxConnections > 100) {
            throw new BotApiError(400, 'Bad Request: max_connections must be between 1 and 100');
          }
        }
        let allowedUpdates: string[] | undefined;
        if (params.allowed_updates !== undefined) {
          const raw =
            typeof params.allowed_updates === 'string' ? JSON.parse(params.allowed_updates) : params.allowed_updates;
          if (!Array.isArray(raw)) throw new BotApiError(400, "Bad Request: can't parse allowed_updates");
          allowedUpdates = raw.map(String);
        }
        const previous = webhooks.get(bot.token);
        const same = previous?.url === url && previous.secretToken === secretToken;
        webhooks.set(bot.token, { url, secretToken, maxConnections, allowedUpdates });
        return { result: true, description: same ? 'Webhook is already set' : 'Webhook was set' };
      }
      case 'deletewebhook': {
        const had = webhooks.delete(bot.token);
        return { result: true, description: had ? 'Webhook was deleted' : 'Webhook is already deleted' };
      }
      case 'getwebhookinfo': {
        const hook = webhooks.get(bot.token);
        return {
          result: {
            url: hook?.url ?? '',
            has_custom_certificate: false,
            pending_update_count: 0,
            ...(hook ? { max_connections: hook.maxConnections } : {}),
            ...(hook?.allowedUpdates ? { allowed_updates: hook.allowedUpdates } : {}),
          },
        };
      }
      case 'sendmessage': {
        const chatIdRaw = params.chat_id;
        if (chatIdRaw === undefined || chatIdRaw === '') throw new BotApiError(400, 'Bad Request: chat_id is empty');
        const text = params.text === undefined ? '' : String(params.text);
        if (text.trim() === '') throw new BotApiError(400, 'Bad Request: message text is empty');
        if ([...text].length > 4096) throw new BotApiError(400, 'Bad Request: message is too long');
        const chatKey = String(chatIdRaw);
        if (!knownChats.has(chatKey)) throw new BotApiError(400, 'Bad Request: chat not found');
        const chatId = /^-?\d+$/.test(chatKey) ? Number(chatKey) : chatKey;
        const messageId = nextMessageId++;
        sentMessages.push({ token: bot.token, chatId, text, messageId });
        return {
          result: {
            message_id: messageId,
            from: { id: bot.id, is_bot: true, first_name: bot.firstName, username: bot.username },
            chat: { id: chatId, type: 'private' },
            date: Math.floor(Date.now() / 1000),
            text,
          },
        };
      }
      default:
        throw new BotApiError(404, 'Not Found');
    }
  }

  async function readParams(req: IncomingMessage, url: URL): Promise<Record<string, unknown>> {
    const params: Record<string, unknown> = Object.fromEntries(url.searchParams);
    if (req.method !== 'POST') return params;
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    if (body.length === 0) return params;
    const contentType = req.headers['content-type'] ?? '';
    if (contentType.startsWith('application/json')) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(body.toString('utf8'));
      } catch {
        throw new BotApiError(400, "Bad Request: can't parse JSON object");
      }
      if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
        throw new BotApiError(400, "Bad Request: can't parse JSON object");
      return { ...params, ...(parsed as Record<string, unknown>) };
    }
    if (contentType.startsWith('application/x-www-form-urlencoded') || contentType.startsWith('multipart/form-data')) {
      // The fetch Response parses both encodings; files are not needed by any method here.
      const form = await new Response(body, { headers: { 'content-type': contentType } }).formData();
      for (const [key, value] of form) params[key] = typeof value === 'string' ? value : '[file]';
      return params;
    }
    return params;
  }

  function send(res: ServerResponse, status: number, body: unknown): void {
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  }

  const server: Server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://stand-in');
    const match = /^\/bot([^/]+)\/([A-Za-z]+)$/.exec(url.pathname);
    const record = (token: string, method: string, params: Record<string, unknown>, status: number, answer: unknown) =>
      calls.push({
        token,
        method,
        params,
        httpMethod: req.method ?? '',
        contentType: req.headers['content-type'],
        status,
        answer,
      });
    if (!match) {
      send(res, 404, { ok: false, error_code: 404, description: 'Not Found' });
      return;
    }
    const token = decodeURIComponent(match[1]!);
    const rawMethod = match[2]!;
    const method = METHOD_NAMES.find((name) => name.toLowerCase() === rawMethod.toLowerCase()) ?? rawMethod;
    let params: Record<string, unknown> = {};
    try {
      params = await readParams(req, url);
      const bot = bots.get(token);
      if (!bot) throw new BotApiError(401, 'Unauthorized');
      if (rawAnswers.has(method.toLowerCase())) {
        const body = rawAnswers.get(method.toLowerCase());
        rawAnswers.delete(method.toLowerCase());
        record(token, method, params, 200, body);
        send(res, 200, body);
        return;
      }
      const failure = failures.get(method.toLowerCase());
      if (failure && failure.remaining > 0) {
        failure.remaining -= 1;
        throw new BotApiError(failure.error_code, failure.description);
      }
      const { result, description } = handleMethod(bot, method.toLowerCase(), params);
      const answer = { ok: true, result, ...(description ? { description } : {}) };
      record(token, method, params, 200, answer);
      send(res, 200, answer);
    } catch (error) {
      const apiError = error instanceof BotApiError ? error : new BotApiError(500, 'Internal Server Error');
      const answer = { ok: false, error_code: apiError.errorCode, description: apiError.message };
      record(token, method, params, apiError.errorCode, answer);
      send(res, apiError.errorCode, answer);
    }
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;

  const platform: BotPlatform = {
    url: `http://127.0.0.1:${port}`,
    calls,
    sentMessages,
    methodAnswers,
    addBot({ username } = {}) {
      const id = nextBotId++;
      const bot: Bot = {
        id,
        token: botToken(id),
        username: username ?? `orgplane_test_${id}_bot`,
        firstName: 'Test bot',
      };
      bots.set(bot.token, bot);
      return bot;
    },
    unknownToken() {
      return botToken(nextBotId++ + 1_000_000);
    },
    addChat(chatId) {
      knownChats.add(String(chatId));
    },
    callsTo(method, token) {
      return calls.filter(
        (call) => call.method.toLowerCase() === method.toLowerCase() && (token === undefined || call.token === token),
      );
    },
    webhookOf(token) {
      return webhooks.get(token);
    },
    failNext(method, failure) {
      failures.set(method.toLowerCase(), { ...failure, remaining: failure.times ?? 1 });
    },
    answerNextWith(method, body) {
      rawAnswers.set(method.toLowerCase(), body);
    },
    messageUpdate(token, { chatId, text, updateId }) {
      const id = updateId ?? (nextUpdateId.get(token) ?? 100_000) + 1;
      if (updateId === undefined) nextUpdateId.set(token, id);
      return {
        update_id: id,
        message: {
          message_id: id,
          from: { id: chatId, is_bot: false, first_name: 'Test', language_code: 'en' },
          chat: { id: chatId, first_name: 'Test', type: 'private' },
          date: Math.floor(Date.now() / 1000),
          text,
        },
      };
    },
    async deliver(token, update, { maxAttempts = 5, baseDelayMs = 20, secretToken } = {}) {
      const hook = webhooks.get(token);
      if (!hook) throw new Error('no webhook is registered for this bot');
      const chat = (update.message as { chat?: { id?: unknown } } | undefined)?.chat?.id;
      if (chat !== undefined) knownChats.add(String(chat));
      const secret = secretToken === undefined ? hook.secretToken : secretToken;
      const attempts: WebhookAttempt[] = [];
      let json: unknown;
      for (let attempt = 0; attempt < maxAttempts; attempt++) {
        if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, baseDelayMs * 2 ** (attempt - 1)));
        let status = 0;
        let body = '';
        let headers: Record<string, string> = {};
        try {
          const response = await fetch(hook.url, {
            method: 'POST',
            headers: { 'content-type': 'application/json', ...(secret ? { [SECRET_HEADER]: secret } : {}) },
            body: JSON.stringify(update),
          });
          status = response.status;
          headers = Object.fromEntries(response.headers);
          body = await response.text();
        } catch {
          status = 0;
        }
        attempts.push({ status, body, headers });
        try {
          json = JSON.parse(body);
        } catch {
          json = undefined;
        }
        if (status >= 200 && status < 300) {
          // The platform treats a `method` in a 2xx answer as a Bot API call it must run.
          if (json && typeof json === 'object' && 'method' in json) methodAnswers.push(json);
          break;
        }
      }
      return { status: attempts.at(-1)!.status, json, attempts };
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return platform;
}
