// POST /v1/webhooks/messenger/{connectionId}: spec operation 8, called by the messaging platform.
//
// In this order:
// 1. The secret header (`X-Telegram-Bot-Api-Secret-Token`), compared in constant time against the
//    stored hash, in an onRequest hook: before a byte of the body is read. Missing, wrong, or an
//    unknown connection (a malformed id included): 401 `{ok: false, error: "invalid secret"}`.
// 2. The body, read by this plugin's own parser from the raw stream with a 256 KiB cap, counted on
//    the bytes actually received (also without a Content-Length): 413 `{error: "payload_too_large"}`.
//    Bytes beyond a declared Content-Length count as body (413) only if they arrive before the
//    answer is sent; later ones are, by HTTP/1.1 framing, the next request on the connection (400),
//    so an update complete within its declared length is then accepted. Malformed JSON (bytes that
//    are not UTF-8 included), a Content-Type header that cannot be parsed, or an update_id that is
//    not a non-negative integer: 400 invalid_request with details.
// 3. The claim of (connection, update_id) and the processing job, committed in one transaction:
//    200 `{ok: true, accepted: true}`; a duplicate `accepted: false, reason: "duplicate"`; a disabled
//    connection `accepted: false, reason: "connection_disabled"`. If the database cannot store the
//    claim: 503, so the platform retries. The answer never waits for processing, and never carries
//    a `method` field (the platform would run it as a Bot API call): the response schema strips
//    anything not listed.
//
// The plugin is encapsulated: its parser and error handler apply to this route only.

import { publicAccess } from '../../http/auth.ts';
import { isUtf8 } from 'node:buffer';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { validatorCompiler, type FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { connectionsWithCappedBody } from '../../http/client-errors.ts';
import { errorHandler } from '../../http/error-handler.ts';
import { invalidRequest, unreadableRequest } from '../../http/errors.ts';
import { connectionIdSchema, errorResponse } from '../../http/schemas.ts';
import type { Ingress } from './ingress.ts';
import { httpErrors } from '../../http/error-codes.ts';

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

// The acknowledgements, serialized once: the platform posts every update here, so the hot path
// sends a fixed string instead of running the response schema for each. Each is exactly the
// schema's shape (never a `method` field).
const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';
const acknowledgements = {
  accepted: JSON.stringify({ ok: true, accepted: true } satisfies z.input<typeof acknowledgement>),
  duplicate: JSON.stringify({ ok: true, accepted: false, reason: 'duplicate' } satisfies z.input<
    typeof acknowledgement
  >),
  connection_disabled: JSON.stringify({ ok: true, accepted: false, reason: 'connection_disabled' } satisfies z.input<
    typeof acknowledgement
  >),
  connection_not_found: JSON.stringify({ ok: true, accepted: false, reason: 'connection_not_found' } satisfies z.input<
    typeof acknowledgement
  >),
};

/**
 * Validation with a fast path: what a valid request looks like is checked by hand, and only a request
 * that fails it goes through the Zod schema, which then produces the usual 400 details. The schemas
 * stay the route's contract (OpenAPI) and the judge of everything unusual.
 */
const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const fastValid: Record<string, (data: unknown) => boolean> = {
  body: (data) => isPlainObject(data) && Number.isSafeInteger(data.update_id) && (data.update_id as number) >= 0,
  params: (data) => isPlainObject(data) && typeof data.connectionId === 'string' && idPattern.test(data.connectionId),
};
const VALID = { error: undefined };

function invalidSecret(reply: FastifyReply) {
  return reply.status(401).send({ ok: false, error: 'invalid secret' });
}

function unavailable(request: FastifyRequest, reply: FastifyReply, error: unknown) {
  request.log.warn({ err: error }, 'messenger webhook: the update could not be stored');
  return reply
    .status(503)
    .header('retry-after', '5')
    .send(httpErrors.service_unavailable('The update could not be stored; retry later').toBody());
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The webhook route only: the update's JSON text as received, which is what gets delivered. */
    updateText: string;
  }
}

export const messengerWebhookRoutes: FastifyPluginAsyncZod<{ ingress: Ingress }> = async (app, { ingress }) => {
  app.decorateRequest('updateText', '');
  // Only this route's parser: any content type is read under the cap (counted in bytes), decoded as
  // UTF-8 and JSON-parsed here, so a malformed body is a 400 with details rather than a framework
  // error. The text is kept: the update is stored and delivered as it came, not re-serialized (which
  // also keeps escapes such as \u0000 that PostgreSQL's jsonb refuses).
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: MAX_UPDATE_BYTES }, (request, raw, done) => {
    // Bytes that are not UTF-8 would be stored and delivered as U+FFFD: not the update that was sent.
    if (!isUtf8(raw as Buffer)) {
      done(unreadableRequest('The body is not valid UTF-8'), undefined);
      return;
    }
    const body = (raw as Buffer).toString('utf8');
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
      request.updateText = body;
    } catch {
      done(unreadableRequest('The body is not valid JSON'), undefined);
      return;
    }
    done(null, parsed);
  });

  app.setValidatorCompiler((route) => {
    const full = validatorCompiler(route as Parameters<typeof validatorCompiler>[0]);
    const fast = route.httpPart ? fastValid[route.httpPart] : undefined;
    if (!fast) return full;
    // VALID leaves the request part as parsed (no copy); a failure is judged by the schema.
    return (data: unknown) => (fast(data) ? VALID : full(data));
  });

  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE')
      return reply.status(413).send(httpErrors.payload_too_large().toBody());
    // Any content type is read here, but one that cannot be parsed at all leaves no parser to read with.
    if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
      return reply.status(400).send(unreadableRequest('The Content-Type header is malformed').toBody());
    }
    if (error.code === 'FST_ERR_CTP_INVALID_CONTENT_LENGTH' || error.code === 'FST_ERR_CTP_EMPTY_JSON_BODY') {
      return reply
        .status(400)
        .send(
          invalidRequest(
            [{ message: 'The body length does not match Content-Length', path: [] }],
            'The body could not be read',
          ).toBody(),
        );
    }
    return errorHandler(error, request, reply);
  });

  app.post(
    '/v1/webhooks/messenger/:connectionId',
    {
      schema: {
        tags: ['Messaging'],
        operationId: 'receiveMessengerWebhook',
        ...publicAccess,
        summary: 'Messaging-bot webhook ingress (called by the platform)',
        description:
          'Authenticated by the per-connection secret in `X-Telegram-Bot-Api-Secret-Token` (checked before the body is read). ' +
          `Bodies over ${MAX_UPDATE_BYTES} bytes are refused (413). The update is claimed and queued in one transaction before ` +
          'the answer; duplicates of an update_id are acknowledged without being queued again. 503 when it could not be stored.',
        security: [{ webhookSecret: [] }],
        params: z.object({ connectionId: connectionIdSchema }),
        body: updateSchema,
        response: {
          200: acknowledgement.describe(
            'Acknowledged. `accepted: true`: claimed and queued for delivery. `accepted: false` (nothing queued, and the platform need not retry) ' +
              'with `reason`: `duplicate` (this update_id was already claimed), `connection_disabled`, or `connection_not_found` (deleted after the secret was checked)',
          ),
          400: errorResponse(
            [httpErrors.invalid_request],
            'malformed JSON (or not UTF-8), a Content-Type header that cannot be parsed (any content type is read as JSON), or `update_id` missing or not a non-negative integer',
          ),
          401: z
            .object({ ok: z.literal(false), error: z.literal('invalid secret') })
            .describe(
              'The secret header is missing or wrong, or the connection does not exist (a malformed connection id included)',
            ),
          413: z
            .object({ error: z.literal(httpErrors.payload_too_large.code) })
            .describe(
              `The body is over ${MAX_UPDATE_BYTES} bytes (also when Content-Length is absent). Bytes beyond a declared Content-Length ` +
                'count as body (413) only if they arrive before the answer is sent; later ones are read as the next request on the connection (400), ' +
                'so an update complete within its declared length is then accepted.',
            ),
          503: errorResponse([httpErrors.service_unavailable], 'the update could not be stored; the platform retries'),
        },
      },
      // Callback style, not async: with the secret's hash cached the check is synchronous, and the
      // request goes on without a promise of its own.
      onRequest: (request, reply, done) => {
        const { connectionId } = request.params as { connectionId: string };
        // An id no connection can have has no secret to match: the spec decides on the secret first.
        if (!idPattern.test(connectionId)) {
          invalidSecret(reply);
          return;
        }
        const header = request.headers[SECRET_HEADER];
        const secret = typeof header === 'string' ? header : undefined;
        const decided = (verified: boolean) => {
          if (!verified) return invalidSecret(reply);
          // From here the body is read under the cap: bytes past its declared length are its surplus (413).
          connectionsWithCappedBody.add(request.raw.socket);
          done();
        };
        let verified: boolean | Promise<boolean>;
        try {
          verified = ingress.verifySecret(connectionId, secret);
        } catch (error) {
          unavailable(request, reply, error);
          return;
        }
        if (typeof verified === 'boolean') decided(verified);
        else verified.then(decided, (error: unknown) => unavailable(request, reply, error));
      },
      onResponse: (request, _reply, done) => {
        connectionsWithCappedBody.delete(request.raw.socket);
        done();
      },
    },
    (request, reply) => {
      // Already answered (413: more bytes came than its Content-Length declared) or gone: nothing can
      // be acknowledged, so nothing is claimed, and the platform sends the update again.
      if (request.raw.socket.destroyed) return;
      const update = request.body as z.infer<typeof updateSchema>;
      ingress.claim(request.params.connectionId, update, request.updateText).then(
        (outcome) => {
          // A pre-serialized string: Fastify sends a string with a JSON content type as it is.
          const body = acknowledgements[outcome.accepted ? 'accepted' : outcome.reason] as unknown as z.input<
            typeof acknowledgement
          >;
          reply.status(200).header('content-type', JSON_CONTENT_TYPE).send(body);
        },
        (error: unknown) => unavailable(request, reply, error),
      );
    },
  );
};
