// The messaging platform's Bot API (Telegram's protocol): `POST {root}/bot<token>/<method>` with a
// JSON body, answered by `{ok: true, result}` or `{ok: false, error_code, description}`.
// Calls go through the guarded outbound client. The bot token is part of the URL, so no error raised
// here ever carries the URL or the token: only the method name and the platform's description.

import type { OutboundClient } from '../../platform/outbound.ts';

/** The platform answered with `ok: false` (its own error code and description). */
export class BotApiError extends Error {
  readonly errorCode: number;
  readonly method: string;
  constructor(method: string, errorCode: number, description: string) {
    super(`${method}: ${errorCode} ${description}`);
    this.name = 'BotApiError';
    this.method = method;
    this.errorCode = errorCode;
  }
}

/** The platform could not be reached or answered something that is not the Bot API. */
export class BotApiUnavailableError extends Error {
  readonly method: string;
  constructor(method: string, reason: string) {
    super(`${method}: the messaging platform is unavailable (${reason})`);
    this.name = 'BotApiUnavailableError';
    this.method = method;
  }
}

export interface BotUser {
  id: number;
  is_bot: boolean;
  first_name: string;
  username?: string;
}

export interface BotApi {
  getMe(token: string): Promise<BotUser>;
  setWebhook(token: string, params: { url: string; secret_token: string; allowed_updates?: string[] }): Promise<void>;
  deleteWebhook(token: string): Promise<void>;
  sendMessage(token: string, params: { chat_id: number | string; text: string }): Promise<void>;
}

/** Telegram's tokens: `<bot id>:<secret>`, the secret of [A-Za-z0-9_-]. */
export const botTokenPattern = /^\d{1,20}:[A-Za-z0-9_-]{20,200}$/;

export function createBotApi(options: { apiRoot: string; outbound: OutboundClient; timeoutMs?: number }): BotApi {
  const root = options.apiRoot.replace(/\/+$/, '');

  async function call<T>(token: string, method: string, params: Record<string, unknown>): Promise<T> {
    if (!botTokenPattern.test(token)) throw new BotApiError(method, 401, 'Unauthorized');
    let response: Response;
    try {
      response = await options.outbound.fetch(`${root}/bot${token}/${method}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(params),
        timeoutMs: options.timeoutMs ?? 10_000,
        maxResponseBytes: 1024 * 1024,
        redirect: 'error',
      });
    } catch (error) {
      // Only the error's class name: messages of network errors may quote the URL (and the token).
      throw new BotApiUnavailableError(method, error instanceof Error ? error.name : 'network error');
    }
    let body: { ok?: unknown; result?: unknown; error_code?: unknown; description?: unknown };
    try {
      body = (await response.json()) as typeof body;
    } catch {
      throw new BotApiUnavailableError(method, `HTTP ${response.status} without a Bot API answer`);
    }
    if (body?.ok === true) return body.result as T;
    if (body?.ok === false) {
      const code = typeof body.error_code === 'number' ? body.error_code : response.status;
      const description = typeof body.description === 'string' ? body.description.slice(0, 300) : 'no description';
      throw new BotApiError(method, code, description);
    }
    throw new BotApiUnavailableError(method, `HTTP ${response.status} without a Bot API answer`);
  }

  return {
    async getMe(token) {
      const user = await call<BotUser>(token, 'getMe', {});
      // What a connection stores of its bot: an id that fits the bigint column and a name.
      const wellFormed =
        typeof user === 'object' &&
        user !== null &&
        Number.isSafeInteger(user.id) &&
        user.id > 0 &&
        typeof user.first_name === 'string' &&
        user.first_name !== '' &&
        (user.username === undefined || (typeof user.username === 'string' && user.username !== ''));
      if (!wellFormed) throw new BotApiUnavailableError('getMe', 'unexpected answer');
      return user;
    },
    async setWebhook(token, params) {
      await call(token, 'setWebhook', params);
    },
    async deleteWebhook(token) {
      await call(token, 'deleteWebhook', {});
    },
    async sendMessage(token, params) {
      await call(token, 'sendMessage', params);
    },
  };
}
