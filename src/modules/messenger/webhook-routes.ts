// POST /v1/webhooks/messenger/{connectionId}: spec operation 8, called by the messaging platform.
//
// In this order:
// 1. The connection id's shape, then the secret header (`X-Telegram-Bot-Api-Secret-Token`),
//    compared in constant time against the stored hash, in an onRequest hook: before a byte of the
//    body is read. Missing, wrong, or unknown connection: 401 `{ok: false, error: "invalid secret"}`.
// 2. The body, read by this plugin's own parser from the raw stream with a 256 KiB cap, counted on
//    the bytes actually received (no Content-Length, or a false one, changes nothing): 413
//    `{error: "payload_too_large"}`. Malformed JSON, or an update_id that is not a non-negative
//    integer: 400 invalid_request with details.
// 3. The claim of (connection, update_id) and the processing job, committed in one transaction:
//    200 `{ok: true, accepted: true}`; a duplicate `accepted: false, reason: "duplicate"`; a disabled
//    connection `accepted: false, reason: "connection_disabled"`. If the database cannot store the
//    claim: 503, so the platform retries. The answer never waits for processing, and never carries
//    a `method` field (the platform would run it as a Bot API call): the response schema strips
//    anything not listed.
//
// The plugin is encapsulated: its parser and error handler apply to this route only.

import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ApiError, errorHandler } from '../../http/errors.ts';
import { connectionIdSchema, errorBodySchema } from '../../http/schemas.ts';
import type { Ingress } from './ingress.ts';

export const MAX_UPDATE_BYTES = 256 * 1024;
export const SECRET_HEADER = 'x-telegram-bot-api-secret-token';

const idPattern = /^emc_[0-7][0-9a-hjkmnp-tv-z]{25}$/;

const acknowledgement = z
  .object({
    ok: z.literal(true),
    accepted: z.boolean(),
    reason: z.string().optional().describe('Why not accepted: duplicate, connection_disabled, connection_not_found'),
  })
  .meta({ id: 'WebhookAcknowledgement' });

const updateSchema = z
  .object({
    update_id: z
      .number({ message: 'update_id must be a non-negative integer' })
      .int({ message: 'update_id must be a non-negative integer' })
      .min(0, { message: 'update_id must be a non-negative integer' })
      .max(Number.MAX_SAFE_INTEGER, { message: 'update_id is too large' }),
  })
  .loose()
  .describe('A platform update (Telegram Update object); only update_id is read here, the rest is delivered as-is');

function invalidSecret(reply: FastifyReply) {
  return reply.status(401).send({ ok: false, error: 'invalid secret' });
}

function unavailable(request: FastifyRequest, reply: FastifyReply, error: unknown) {
  request.log.warn({ err: error }, 'messenger webhook: the update could not be stored');
  return reply.status(503).header('retry-after', '5').send({ error: 'service_unavailable', message: 'The update could not be stored; retry later' });
}

export const messengerWebhookRoutes: FastifyPluginAsyncZod<{ ingress: Ingress }> = async (app, { ingress }) => {
  // Only this route's parser: any content type is read as raw bytes under the cap, then JSON-parsed
  // here, so a malformed body is a 400 with details rather than a framework error.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: MAX_UPDATE_BYTES }, (_request, body, done) => {
    let parsed: unknown;
    try {
      parsed = JSON.parse((body as Buffer).toString('utf8'));
    } catch {
      done(new ApiError(400, 'invalid_request', 'The body is not valid JSON', { details: [{ message: 'The body is not valid JSON', path: [] }] }), undefined);
      return;
    }
    done(null, parsed);
  });

  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return reply.status(413).send({ error: 'payload_too_large' });
    if (error.code === 'FST_ERR_CTP_INVALID_CONTENT_LENGTH' || error.code === 'FST_ERR_CTP_EMPTY_JSON_BODY') {
      return reply.status(400).send({ error: 'invalid_request', message: 'The body could not be read', details: [{ message: 'The body length does not match Content-Length', path: [] }] });
    }
    return errorHandler(error, request, reply);
  });

  app.post('/v1/webhooks/messenger/:connectionId', {
    schema: {
      tags: ['Messaging'],
      operationId: 'receiveMessengerWebhook',
      summary: 'Messaging-bot webhook ingress (called by the platform)',
      description:
        'Authenticated by the per-connection secret in `X-Telegram-Bot-Api-Secret-Token` (checked before the body is read). ' +
        `Bodies over ${MAX_UPDATE_BYTES} bytes are refused (413). The update is claimed and queued in one transaction before ` +
        'the answer; duplicates of an update_id are acknowledged without being queued again. 503 when it could not be stored.',
      params: z.object({ connectionId: connectionIdSchema }),
      headers: z.object({ 'x-telegram-bot-api-secret-token': z.string().optional().describe('The secret registered with setWebhook') }).loose(),
      body: updateSchema,
      response: {
        200: acknowledgement,
        400: errorBodySchema.describe('invalid_request: malformed JSON, or update_id missing or not a non-negative integer'),
        401: z.object({ ok: z.literal(false), error: z.literal('invalid secret') }),
        413: z.object({ error: z.literal('payload_too_large') }),
        503: errorBodySchema.describe('service_unavailable: the update could not be stored; the platform retries'),
      },
    },
    onRequest: async (request, reply) => {
      const { connectionId } = request.params as { connectionId: string };
      if (!idPattern.test(connectionId)) {
        return reply.status(400).send({
          error: 'invalid_request',
          message: 'The request is not valid',
          details: [{ message: 'Must be an id like emc_ followed by 26 base32 characters', path: ['connectionId'], in: 'params' }],
        });
      }
      const header = request.headers[SECRET_HEADER];
      const secret = typeof header === 'string' ? header : undefined;
      let verified: boolean;
      try {
        verified = await ingress.verifySecret(connectionId, secret);
      } catch (error) {
        return unavailable(request, reply, error);
      }
      if (!verified) return invalidSecret(reply);
    },
  }, async (request, reply) => {
    const update = request.body as z.infer<typeof updateSchema>;
    try {
      const outcome = await ingress.claim(request.params.connectionId, update);
      return reply.status(200).send(outcome.accepted ? { ok: true, accepted: true } : { ok: true, accepted: false, reason: outcome.reason });
    } catch (error) {
      return unavailable(request, reply, error);
    }
  });
};
