// Processing of accepted updates, by workers in the server process (default) or in `orgplane worker`.
//
// For each update: POST `{connectionId, update}` to the connection's deliveryUrl, signed with
// `X-Orgplane-Signature: sha256=<hex HMAC-SHA256 of the exact body>` under the connection's delivery
// secret. A 2xx answer delivers the update; an answer `{reply: {text}}` is then sent to the update's
// chat with the platform's sendMessage. Anything else is retried with exponential backoff (about
// 2 s, 4 s, 8 s ... capped at 5 minutes; see MESSENGER_DELIVERY_ATTEMPTS below) and, after the last
// attempt, the update is marked `dead` (visible on the updates route) and its chat moves on.
// The queue is the claims table itself (delivery-loop.ts, queue-store.ts): updates of one key (a
// chat) are attempted one at a time, in update_id order, also when they arrived out of order.
// Delivery is at least once: a worker that dies mid-delivery leaves its lease to expire, then
// another worker retries the update. Receivers deduplicate on `update.update_id`.

import type { DeliverySettings } from '../../config.ts';
import type { Database } from '../../db/database.ts';
import type { OutboundClient, OutboundPostAnswer } from '../../platform/outbound.ts';
import type { SecretBox } from '../../platform/secrets.ts';
import { SIGNATURE_HEADER, signDelivery, tenantVisibleError } from '../../platform/signed-delivery.ts';
import { BotApiError, createBotApi, type BotApi } from './platform.ts';
import { startDeliveryLoop } from './delivery-loop.ts';
import { createQueueStore } from './queue-store.ts';
import { chatIdParam } from './updates.ts';

/** A delivery failure, worded for the updates route: no URL, no secret, no response body. */
class DeliveryError extends Error {}

interface ProcessorDeps {
  secrets: SecretBox;
  outbound: OutboundClient;
  botApi: BotApi;
  settings: DeliverySettings;
  log?: { warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
}

// scheme://user:password@ — up to the authority's last '@', as URL parsers read it.
const userinfoInUrl = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#]*@/gi;

/**
 * Every error text that becomes an update's lastError, which the tenant sees. The outbound client's
 * errors carry no secrets but may quote the delivery URL; its user:password is cut: the API refuses
 * such URLs, but a row stored before it did is quoted on every attempt (fetch refuses it, naming it).
 */
function describe(error: unknown): string {
  if (error instanceof DeliveryError || error instanceof BotApiError) return error.message.replace(userinfoInUrl, '$1');
  return tenantVisibleError(error);
}

/** One delivery attempt of one update: what it needs, read with its lease. */
export interface DeliveryTarget {
  connectionId: string;
  updateId: number;
  chatId: string | null;
  attempt: number;
  /** The update as received (JSON text). */
  body: string;
  deliveryUrl: string;
  deliverySecretSealed: string;
  botTokenSealed: string;
}

export type DeliveryOutcome = { status: 'sent' | 'failed' | null; error: string | null };

export function createDeliveryProcessor(deps: ProcessorDeps) {
  const { secrets, outbound, botApi, settings } = deps;

  /** Delivers the update (and sends its reply); resolves with the reply's outcome, rejects when the attempt failed. */
  async function attempt(target: DeliveryTarget): Promise<DeliveryOutcome> {
    const { connectionId, chatId, updateId } = target;
    const body = `{"connectionId":${JSON.stringify(connectionId)},"update":${target.body}}`;
    const deliverySecret = secrets.open(target.deliverySecretSealed);
    let answer: OutboundPostAnswer;
    try {
      answer = await outbound.post(target.deliveryUrl, {
        headers: {
          'content-type': 'application/json',
          [SIGNATURE_HEADER]: signDelivery(deliverySecret, body),
          'x-orgplane-connection-id': connectionId,
          'x-orgplane-update-id': String(updateId),
          'x-orgplane-attempt': String(target.attempt),
        },
        body,
        timeoutMs: settings.deliveryTimeoutMs,
        maxResponseBytes: 64 * 1024,
      });
    } catch (error) {
      throw new DeliveryError(`delivery failed: ${describe(error)}`);
    }
    // Over the size cap or too slow: the update was delivered, but a reply in the answer is lost.
    const unread =
      answer.readError &&
      `the delivery answer could not be read (${describe(answer.readError)}); a reply in it was not sent`;
    if (answer.status < 200 || answer.status > 299) throw new DeliveryError(`delivery answered HTTP ${answer.status}`);

    const replyText = replyTextOf(answer.text);
    if (replyText === undefined) return { status: null, error: unread };
    if (!chatId) return { status: 'failed', error: 'reply ignored: the update has no chat' };
    try {
      await botApi.sendMessage(secrets.open(target.botTokenSealed), { chat_id: chatIdParam(chatId), text: replyText });
      return { status: 'sent', error: null };
    } catch (error) {
      // The platform refusing the message (4xx: chat not found, text too long, token revoked) will
      // not change on retry; recorded, not retried. An unreachable platform, or one asking to slow
      // down (429 Too Many Requests), is retried, which redelivers the update too: delivery is at
      // least once.
      if (error instanceof BotApiError && error.errorCode >= 400 && error.errorCode < 500 && error.errorCode !== 429) {
        return { status: 'failed', error: `reply refused: ${error.message}` };
      }
      throw new DeliveryError(`reply failed: ${describe(error)}`);
    }
  }

  return { attempt };
}

/** lastError of an update that will be retried. */
export function retryingError(attempt: number, error: unknown): string {
  return `attempt ${attempt}: ${describe(error)}`;
}

/** lastError of a dead-lettered update. */
export function deadError(attempts: number, error: unknown): string {
  return `gave up after ${attempts} attempts: ${describe(error)}`;
}

/** The reply text of a delivery answer `{reply: {text}}`, if it has one. */
function replyTextOf(text: string): string | undefined {
  if (!text) return undefined;
  try {
    const parsed = JSON.parse(text) as { reply?: { text?: unknown } };
    const reply = parsed?.reply?.text;
    return typeof reply === 'string' && reply.trim() !== '' ? reply : undefined;
  } catch {
    return undefined;
  }
}

export interface MessengerWorkerDeps {
  db: Database;
  secrets: SecretBox;
  outbound: OutboundClient;
  messengerApiRoot: string;
  settings: DeliverySettings;
  log?: ProcessorDeps['log'];
}

export interface MessengerWorker {
  /** Wakes the idle workers (after this process accepted an update). */
  wake(): void;
  stop(): Promise<void>;
}

/** Starts this process's delivery workers: the loop over the claims table. */
export function startMessengerWorker(deps: MessengerWorkerDeps): MessengerWorker {
  const { settings } = deps;
  const processor = createDeliveryProcessor({
    secrets: deps.secrets,
    outbound: deps.outbound,
    botApi: createBotApi({ apiRoot: deps.messengerApiRoot, outbound: deps.outbound }),
    settings,
    ...(deps.log ? { log: deps.log } : {}),
  });
  return startDeliveryLoop({
    db: deps.db,
    queueStore: createQueueStore(),
    attempt: processor.attempt,
    retryingError,
    deadError,
    settings,
    ...(deps.log ? { log: deps.log } : {}),
  });
}
