// HTTP of the audit-log stream: one per organization, set, read and removed by owners and admins.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { authenticate, callerOf, freshAuthenticationCheck, writeContextOf } from '../../http/auth.ts';
import {
  commonErrorResponses,
  deliveryUrlSchema,
  isoTimestamp,
  isoTimestampOrNull,
  secretString,
  timestampSchema,
  errorResponse,
} from '../../http/schemas.ts';
import { organizationParams } from '../identity/index.ts';
import type { AuditStreamService } from './stream-service.ts';
import type { StreamView } from './stream-store.ts';
import { httpErrors } from '../../http/error-codes.ts';
import { auditErrors } from './error-codes.ts';

const streamSchema = z
  .object({
    url: z.string(),
    enabled: z.boolean(),
    state: z
      .enum(['active', 'retrying', 'dead', 'disabled'])
      .describe(
        'active: delivering (or up to date); retrying: the batch at the cursor failed and is retried with backoff; ' +
          'dead: it failed AUDIT_STREAM_ATTEMPTS times, delivery stopped (PUT with `enabled: true` resumes it from the same event, nothing skipped); ' +
          'disabled: `enabled` is false (events keep waiting)',
      ),
    lastDeliveredEventId: z.string().nullable().describe('The newest event the receiver accepted'),
    lastDeliveredAt: timestampSchema.nullable(),
    pendingEvents: z.number().int().describe('Events recorded and not yet accepted by the receiver'),
    oldestPendingAt: timestampSchema.nullable().describe('When the oldest of them was recorded'),
    failedAttempts: z.number().int().describe('Failed attempts of the batch at the cursor (0 once one is accepted)'),
    lastError: z
      .string()
      .nullable()
      .describe('The last failure, kept after later successes (no URL credentials, no response body)'),
    lastErrorAt: timestampSchema.nullable(),
    deadLetteredAt: timestampSchema.nullable().describe('When the stream went dead; null unless `state` is dead'),
    nextAttemptAt: timestampSchema.nullable().describe('When a retrying stream tries again'),
    createdAt: timestampSchema,
    updatedAt: timestampSchema,
  })
  .meta({ id: 'AuditStream' });

function stateOf(row: StreamView): z.infer<typeof streamSchema>['state'] {
  if (!row.enabled) return 'disabled';
  if (row.dead_at) return 'dead';
  return row.failed_attempts > 0 ? 'retrying' : 'active';
}

function toStream(row: StreamView): z.infer<typeof streamSchema> {
  const state = stateOf(row);
  return {
    url: row.url,
    enabled: row.enabled,
    state,
    lastDeliveredEventId: row.last_delivered_event_id,
    lastDeliveredAt: isoTimestampOrNull(row.last_delivered_at),
    pendingEvents: row.pending_events,
    oldestPendingAt: isoTimestampOrNull(row.oldest_pending_at),
    failedAttempts: row.failed_attempts,
    lastError: row.last_error,
    lastErrorAt: isoTimestampOrNull(row.last_error_at),
    deadLetteredAt: isoTimestampOrNull(row.dead_at),
    nextAttemptAt: state === 'retrying' ? isoTimestamp(row.run_after) : null,
    createdAt: isoTimestamp(row.created_at),
    updatedAt: isoTimestamp(row.updated_at),
  };
}

const notFoundResponse = errorResponse(
  [httpErrors.organization_not_found, auditErrors.audit_stream_not_found],
  undefined,
  {
    description:
      'organization_not_found (no such organization, or you are not a member), or audit_stream_not_found: the organization has no stream',
  },
);

const delivery =
  "Events are POSTed to `url` in the order of the organization's log, in batches of up to AUDIT_STREAM_BATCH_SIZE (100), as NDJSON " +
  '(`content-type: application/x-ndjson`; one event per line, exactly as the NDJSON export gives it), with ' +
  '`X-Orgplane-Signature: sha256=<hex HMAC-SHA256 of the body under signingSecret>` (as bot-connection deliveries are signed), ' +
  '`X-Orgplane-Organization-Id`, `X-Orgplane-Event-Count` and `X-Orgplane-Attempt`. A 2xx answer accepts the batch; anything else ' +
  '(or no answer within 10 s) is retried with exponential backoff, and after AUDIT_STREAM_ATTEMPTS (10) failures the stream is dead. ' +
  'Delivery is at least once and in order: one batch of a stream is in flight at a time, whatever the number of workers; a batch ' +
  "can be sent again after a worker died or an answer was lost, so receivers deduplicate on the events' `id`. Events pruned by " +
  'retention before they were delivered are not sent.';

export const auditStreamRoutes: FastifyPluginAsyncZod<{ streams: AuditStreamService }> = async (app, { streams }) => {
  const path = '/v1/orgs/:organizationId/audit-stream';

  app.put(
    path,
    {
      onRequest: authenticate({
        requires: 'audit_stream.manage',
        judgedBy: 'service',
        freshAuthentication: 'by-route',
      }),
      schema: {
        tags: ['Audit'],
        operationId: 'putAuditStream',
        summary:
          "Stream the organization's audit events to a SIEM's HTTP endpoint: create or change the stream (owners and admins)",
        description:
          'A new stream starts with the events recorded from now on (its own `audit_stream.created` event first); export the log for older ones. ' +
          '`signingSecret` is returned once, when the stream is created or when `rotateSecret` is true, and is null otherwise. ' +
          'Enabling (`enabled: true`) a dead or retrying stream resumes it at once from the first event not delivered. ' +
          'The URL follows the rule of bot-connection delivery URLs: http or https (use https: events name people, e-mail and IP addresses), ' +
          'no user:password, and a host outbound calls may reach (private and loopback addresses only when ALLOWED_PRIVATE_NETWORKS lists them).\n\n' +
          delivery,
        params: organizationParams,
        body: z
          .object({
            url: deliveryUrlSchema('Where batches of events are POSTed'),
            enabled: z.boolean(),
            rotateSecret: z
              .boolean()
              .optional()
              .describe('Generate a new signing secret (returned in this response); default false'),
          })
          .strict(),
        response: {
          200: z.object({
            stream: streamSchema,
            signingSecret: secretString('The key of X-Orgplane-Signature; shown only here, when generated').nullable(),
          }),
          ...commonErrorResponses,
          404: notFoundResponse,
        },
      },
    },
    async (request) => {
      const { stream, signingSecret } = await streams.putStream(
        writeContextOf(request),
        request.params.organizationId,
        request.body,
        freshAuthenticationCheck(request),
      );
      return { stream: toStream(stream), signingSecret };
    },
  );

  app.get(
    path,
    {
      onRequest: authenticate({ requires: 'audit_stream.manage', judgedBy: 'service' }),
      schema: {
        tags: ['Audit'],
        operationId: 'getAuditStream',
        summary: "The organization's audit-log stream and its delivery state (owners and admins)",
        description: `Never the signing secret. ${delivery}`,
        params: organizationParams,
        response: {
          200: z.object({ stream: streamSchema }),
          ...commonErrorResponses,
          404: notFoundResponse,
        },
      },
    },
    async (request) => ({
      stream: toStream(await streams.getStream(callerOf(request), request.params.organizationId)),
    }),
  );

  app.delete(
    path,
    {
      onRequest: authenticate({
        requires: 'audit_stream.manage',
        judgedBy: 'service',
        freshAuthentication: 'by-route',
      }),
      schema: {
        tags: ['Audit'],
        operationId: 'deleteAuditStream',
        summary: 'Stop streaming and forget the stream (owners and admins)',
        description:
          'Events not yet delivered are not sent; a stream set up again starts with the events recorded from then on.',
        params: organizationParams,
        response: {
          204: z.null().describe('Deleted'),
          ...commonErrorResponses,
          404: notFoundResponse,
        },
      },
    },
    async (request, reply) => {
      await streams.deleteStream(
        writeContextOf(request),
        request.params.organizationId,
        freshAuthenticationCheck(request),
      );
      return reply.status(204).send(null);
    },
  );
};
