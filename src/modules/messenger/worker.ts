// Processing of accepted updates, by workers in the server process (default) or in `orgplane worker`.
//
// For each job: POST `{connectionId, update}` to the connection's deliveryUrl, signed with
// `X-Orgplane-Signature: sha256=<hex HMAC-SHA256 of the exact body>` under the connection's delivery
// secret. A 2xx answer delivers the update; an answer `{reply: {text}}` is then sent to the update's
// chat with the platform's sendMessage. Anything else is retried with exponential backoff (about
// 2 s, 4 s, 8 s ... capped at 5 minutes; see MESSENGER_DELIVERY_ATTEMPTS below) and, after the last
// attempt, the update is marked `dead` (visible on the updates route) and its chat moves on.
// Updates of one chat are processed one at a time (the queue's ordered keys), in update_id order: a
// chat's job attempts the chat's earliest pending update, which need not be the one it was queued
// with when updates arrived out of order (store.startAttempt).
// Delivery is at least once: a worker that dies mid-delivery leaves its job active until it expires,
// then another worker retries it. Receivers deduplicate on `update.update_id`.

import { createHmac } from 'node:crypto';
import type { DeliverySettings } from '../../config.ts';
import type { Database } from '../../db/database.ts';
import { createJobQueue, type JobQueue, type QueueDefinition, type QueueJob } from '../../platform/queue.ts';
import type { OutboundClient } from '../../platform/outbound.ts';
import type { SecretBox } from '../../platform/secrets.ts';
import { BotApiError, createBotApi, type BotApi } from './platform.ts';
import { DELIVERY_QUEUE, type DeliveryJob } from './ingress.ts';
import { createMessengerStore, type MessengerStore } from './store.ts';
import { chatIdParam } from './updates.ts';

export const SIGNATURE_HEADER = 'x-orgplane-signature';

export function deliveryQueueDefinition(settings: DeliverySettings): QueueDefinition {
  return {
    name: DELIVERY_QUEUE,
    maxAttempts: settings.maxAttempts,
    retryDelaySeconds: settings.retryDelaySeconds,
    maxRetryDelaySeconds: settings.maxRetryDelaySeconds,
    expireInSeconds: settings.expireInSeconds,
    ordered: true,
  };
}

/** `sha256=<hex>`: what a receiver recomputes over the raw body with its delivery secret. */
export function signDelivery(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body, 'utf8').digest('hex')}`;
}

/** A delivery failure, worded for the updates route: no URL, no secret, no response body. */
class DeliveryError extends Error {}

interface ProcessorDeps {
  db: Database;
  store: MessengerStore;
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
  if (error instanceof Error) return `${error.name}: ${error.message}`.replace(userinfoInUrl, '$1').slice(0, 500);
  return 'unknown error';
}

export function createDeliveryProcessor(deps: ProcessorDeps) {
  const { db, store, secrets, outbound, botApi, settings } = deps;

  // The update each running job attempts, for its dead letter (a chat's job may attempt another
  // update of its chat than the one it was queued with).
  const attempting = new WeakMap<QueueJob<DeliveryJob>, number>();

  async function deliver(job: QueueJob<DeliveryJob>): Promise<void> {
    const { connectionId, chatId } = job.data;
    const connection = await store.getConnectionById(db, connectionId);
    // Deleted since: nothing to deliver to. The job completes.
    if (!connection) return;
    const claim = await store.startAttempt(db, { connectionId, updateId: job.data.updateId, chatId, ownUpdateOnly: job.data.update !== undefined }, job.attempt);
    // Nothing left: gone, or delivered already by an attempt whose completion was lost.
    if (!claim) return;
    const { updateId } = claim;
    attempting.set(job, updateId);
    // The update is sent as it was received; a job queued before bodies were kept with claims has it.
    const update = claim.body ?? (job.data.update ? JSON.stringify(job.data.update) : undefined);
    if (update === undefined) return;
    try {
      const body = `{"connectionId":${JSON.stringify(connectionId)},"update":${update}}`;
      const deliverySecret = secrets.open(connection.delivery_secret_sealed);
      let response: Response;
      try {
        response = await outbound.fetch(connection.delivery_url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            [SIGNATURE_HEADER]: signDelivery(deliverySecret, body),
            'x-orgplane-connection-id': connectionId,
            'x-orgplane-update-id': String(updateId),
            'x-orgplane-attempt': String(job.attempt),
          },
          body,
          redirect: 'error',
          timeoutMs: settings.deliveryTimeoutMs,
          maxResponseBytes: 64 * 1024,
        });
      } catch (error) {
        throw new DeliveryError(`delivery failed: ${describe(error)}`);
      }
      let text = '';
      let unread: string | null = null;
      try {
        text = await response.text();
      } catch (error) {
        // Over the size cap or too slow: the update was delivered, but a reply in the answer is lost.
        unread = `the delivery answer could not be read (${describe(error)}); a reply in it was not sent`;
      }
      if (response.status < 200 || response.status > 299) throw new DeliveryError(`delivery answered HTTP ${response.status}`);

      let reply: { status: 'sent' | 'failed' | null; error: string | null } = { status: null, error: unread };
      const replyText = replyTextOf(text);
      if (replyText !== undefined) {
        if (!chatId) {
          reply = { status: 'failed', error: 'reply ignored: the update has no chat' };
        } else {
          try {
            await botApi.sendMessage(secrets.open(connection.bot_token_sealed), { chat_id: chatIdParam(chatId), text: replyText });
            reply = { status: 'sent', error: null };
          } catch (error) {
            // The platform refusing the message (4xx: chat not found, text too long, token revoked) will
            // not change on retry; recorded, not retried. An unreachable platform, or one asking to slow
            // down (429 Too Many Requests), is retried, which redelivers the update too: delivery is at
            // least once.
            if (error instanceof BotApiError && error.errorCode >= 400 && error.errorCode < 500 && error.errorCode !== 429) {
              reply = { status: 'failed', error: `reply refused: ${error.message}` };
            } else {
              throw new DeliveryError(`reply failed: ${describe(error)}`);
            }
          }
        }
      }
      await store.markDelivered(db, connectionId, updateId, reply);
    } catch (error) {
      if (job.attempt < job.maxAttempts) {
        await store.markFailed(db, connectionId, updateId, 'retrying', `attempt ${job.attempt}: ${describe(error)}`).catch(() => {});
      }
      throw error;
    }
  }

  async function deadLetter(job: QueueJob<DeliveryJob>, error: unknown): Promise<void> {
    const { connectionId } = job.data;
    const updateId = attempting.get(job) ?? job.data.updateId;
    await store.markFailed(db, connectionId, updateId, 'dead', `gave up after ${job.attempt} attempts: ${describe(error)}`);
    deps.log?.warn({ connectionId, updateId, attempts: job.attempt }, 'messenger: update dead-lettered');
  }

  return { deliver, deadLetter };
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
  /** A started queue (the server shares its own); when absent one is created and owned here. */
  queue?: JobQueue;
  settings: DeliverySettings;
  log?: ProcessorDeps['log'];
}

export interface MessengerWorker {
  stop(): Promise<void>;
}

/** Starts delivery workers on the queue; `orgplane worker` and the server (RUN_WORKERS) call this. */
export async function startMessengerWorker(deps: MessengerWorkerDeps): Promise<MessengerWorker> {
  const { settings } = deps;
  const ownsQueue = !deps.queue;
  const queue =
    deps.queue ??
    createJobQueue(deps.db, {
      superviseIntervalSeconds: settings.superviseIntervalSeconds,
      onError: (error) => deps.log?.warn({ err: error }, 'messenger: queue error'),
    });
  if (ownsQueue) await queue.start([deliveryQueueDefinition(settings)]);
  const processor = createDeliveryProcessor({
    db: deps.db,
    store: createMessengerStore(),
    secrets: deps.secrets,
    outbound: deps.outbound,
    botApi: createBotApi({ apiRoot: deps.messengerApiRoot, outbound: deps.outbound }),
    settings,
    ...(deps.log ? { log: deps.log } : {}),
  });
  queue.work<DeliveryJob>(DELIVERY_QUEUE, {
    concurrency: settings.concurrency,
    pollingIntervalSeconds: settings.pollingIntervalSeconds,
    onDeadLetter: processor.deadLetter,
    onError: (error) => deps.log?.warn({ err: error }, 'messenger: worker loop error'),
  }, processor.deliver);
  return {
    async stop() {
      if (ownsQueue) await queue.stop();
    },
  };
}
