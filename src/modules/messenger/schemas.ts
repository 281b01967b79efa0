import { z } from 'zod';
import {
  connectionIdSchema,
  deliveryUrlSchema as deliveryUrlOf,
  isoTimestamp,
  isoTimestampOrNull,
  timestampSchema,
} from '../../http/schemas.ts';
import { webhookUrlOf } from './service.ts';
import type { ConnectionRow, UpdateRow } from './store.ts';
import { botTokenPattern } from './platform.ts';

export { connectionIdSchema };

export const botTokenSchema = z
  .string()
  .regex(botTokenPattern, { message: 'Must be a bot token as the platform issues it: <bot id>:<secret>' })
  .describe('The bot token from the platform (BotFather). Write-only: stored encrypted, never returned.');

export const deliveryUrlSchema = deliveryUrlOf(
  'Where each accepted update is POSTed, signed with the delivery secret. An http(s) URL without user:password.',
);

export const connectionStatusSchema = z.enum(['active', 'disabled']);
export const updateStatusSchema = z.enum(['queued', 'retrying', 'delivered', 'dead']);

export const messengerConnectionSchema = z
  .object({
    id: connectionIdSchema,
    botId: z.number().int(),
    botUsername: z.string(),
    deliveryUrl: z.string(),
    webhookUrl: z.string().describe('The URL registered with the platform (setWebhook)'),
    status: connectionStatusSchema.describe('A disabled connection answers updates with accepted: false'),
    createdAt: timestampSchema,
    updatedAt: timestampSchema,
  })
  .meta({ id: 'MessengerConnection' });

export const messengerUpdateSchema = z
  .object({
    updateId: z.number().int().min(0),
    chatId: z.string().nullable(),
    status: updateStatusSchema.describe(
      'queued: waiting; retrying: an attempt failed; delivered; dead: gave up after the last attempt',
    ),
    attempts: z.number().int(),
    lastError: z.string().nullable(),
    replyStatus: z
      .enum(['sent', 'failed'])
      .nullable()
      .describe('Whether a `{reply: {text}}` answer was sent to the chat'),
    receivedAt: timestampSchema,
    lastAttemptAt: timestampSchema.nullable(),
    deliveredAt: timestampSchema.nullable(),
  })
  .meta({ id: 'MessengerUpdate' });

export function toConnection(row: ConnectionRow, publicUrl: string): z.infer<typeof messengerConnectionSchema> {
  return {
    id: row.id,
    botId: row.bot_id,
    botUsername: row.bot_username,
    deliveryUrl: row.delivery_url,
    webhookUrl: webhookUrlOf(publicUrl, row.id),
    status: row.status,
    createdAt: isoTimestamp(row.created_at),
    updatedAt: isoTimestamp(row.updated_at),
  };
}

export function toUpdate(row: UpdateRow): z.infer<typeof messengerUpdateSchema> {
  return {
    updateId: row.update_id,
    chatId: row.chat_id,
    status: row.status,
    attempts: row.attempts,
    lastError: row.last_error,
    replyStatus: row.reply_status,
    receivedAt: isoTimestamp(row.received_at),
    lastAttemptAt: isoTimestampOrNull(row.last_attempt_at),
    deliveredAt: isoTimestampOrNull(row.delivered_at),
  };
}
