// HTTP of the audit log: list, export, verify (owners and admins of the organization).
import { Readable } from 'node:stream';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { authenticate, callerOf } from '../../http/auth.ts';
import { invalidRequest } from '../../http/errors.ts';
import { commonErrorResponses, decodeCursor, encodeCursor, queryInteger, timestampSchema } from '../../http/schemas.ts';
import { organizationNotFoundResponse, organizationParams } from '../identity/index.ts';
import { csvColumns } from './export-text.ts';
import type { AuditService } from './service.ts';

const eventSchema = z
  .object({
    id: z.string(),
    organizationId: z.string().nullable(),
    occurredAt: timestampSchema,
    action: z
      .string()
      .describe('Dotted, past tense: `mcp_connection.updated`, `member.role_changed`, `request.denied`'),
    outcome: z.enum(['success', 'denied', 'failure']),
    actor: z.object({
      type: z.string().describe('user, api_key, scim or system'),
      id: z.string(),
      name: z.string().nullable().describe('As it was when the event was written'),
      email: z.string().nullable().describe('As it was when the event was written'),
    }),
    target: z.object({
      type: z.string(),
      id: z.string(),
      name: z
        .string()
        .nullable()
        .describe(
          'The name (or e-mail) it had when the event was written; null where none was recorded (events of older versions, and actions whose target has no name)',
        ),
    }),
    ip: z.string().nullable(),
    userAgent: z.string().nullable(),
    requestId: z.string().nullable(),
    changes: z
      .record(z.string(), z.unknown())
      .nullable()
      .describe('Changed fields and their new values; secrets appear as "redacted"'),
  })
  .meta({ id: 'AuditEvent' });

const rangeQuery = {
  since: timestampSchema.optional().describe('Events at or after this time'),
  until: timestampSchema.optional().describe('Events before this time'),
};
const listQuery = z.object({
  actor: z.string().min(1).max(320).optional().describe("The actor's id or e-mail"),
  action: z
    .string()
    .regex(/^[a-z_.]{1,100}$/, { message: 'Must be lower-case letters, underscores and dots' })
    .optional()
    .describe('An action or its prefix (`member.`)'),
  target: z.string().min(1).max(200).optional().describe("The target's id"),
  outcome: z.enum(['success', 'denied', 'failure']).optional(),
  ...rangeQuery,
  limit: queryInteger(1, 200, 50),
  cursor: z.string().max(200).optional().describe("Opaque cursor from a previous page's `nextCursor`"),
});
const exportQuery = z.object({ format: z.enum(['ndjson', 'csv']).default('ndjson'), ...rangeQuery });

const isBefore = (value: unknown): value is { before: number } =>
  typeof value === 'object' &&
  value !== null &&
  Number.isSafeInteger((value as { before?: unknown }).before) &&
  (value as { before: number }).before > 0;

function checkRange(query: { since?: string | undefined; until?: string | undefined }) {
  if (query.since && query.until && Date.parse(query.since) > Date.parse(query.until)) {
    throw invalidRequest([{ message: 'Must not be before since', path: ['until'], in: 'querystring' }]);
  }
}

export const auditRoutes: FastifyPluginAsyncZod<{ audit: AuditService }> = async (app, { audit }) => {
  app.get(
    '/v1/orgs/:organizationId/audit-events',
    {
      onRequest: authenticate({ requires: 'audit.view', judgedBy: 'service' }),
      schema: {
        tags: ['Audit'],
        operationId: 'listAuditEvents',
        summary: "The organization's audit events, newest first (owners and admins)",
        description:
          'Every change made through the API, SCIM or the CLI, recorded in its own transaction; calls refused with 403 (`request.denied`, outcome `denied`); ' +
          "sign-ins and failed sign-ins of the organization's members (a failure for an unknown e-mail, and sign-ups, belong to no organization and are not listed here). " +
          '`actor` is an id or e-mail, `action` an action or its prefix, `target` an id; `since` is inclusive, `until` exclusive; filters combine with AND. ' +
          'A member gets 403; a caller of another organization gets 404, as for a missing organization.',
        params: organizationParams,
        querystring: listQuery,
        response: {
          200: z.object({ events: z.array(eventSchema), nextCursor: z.string().nullable() }),
          ...commonErrorResponses,
          404: organizationNotFoundResponse,
        },
      },
    },
    async (request) => {
      const { limit, cursor, ...filters } = request.query;
      checkRange(filters);
      let beforeSeq: number | undefined;
      if (cursor !== undefined) {
        const decoded = decodeCursor(cursor, isBefore);
        if (!decoded)
          throw invalidRequest([{ message: 'Not a cursor this API issued', path: ['cursor'], in: 'querystring' }]);
        beforeSeq = decoded.before;
      }
      const page = await audit.list(
        callerOf(request),
        request.params.organizationId,
        { ...filters, actionPrefix: filters.action, beforeSeq },
        limit,
      );
      return {
        events: page.events,
        nextCursor: page.nextBeforeSeq === null ? null : encodeCursor({ before: page.nextBeforeSeq }),
      };
    },
  );

  app.get(
    '/v1/orgs/:organizationId/audit-events/export',
    {
      onRequest: authenticate({ requires: 'audit.export', judgedBy: 'service' }),
      schema: {
        tags: ['Audit'],
        operationId: 'exportAuditEvents',
        summary:
          "Export the organization's audit events in a time range, oldest first, streamed as NDJSON or CSV (owners and admins)",
        description:
          'NDJSON: one event (as in the list, same keys in the same order) per line; `changes` is written as the database renders JSON (a space after colons and commas). ' +
          "CSV: a header line, then one event per line; `changes` is a JSON cell; cells starting with = + - @, a tab or a carriage return are prefixed with '. " +
          "Streamed with backpressure, a page of 200 events at a time: the server's memory does not grow with the range.",
        params: organizationParams,
        querystring: exportQuery,
        produces: ['application/x-ndjson', 'text/csv'],
        response: {
          200: z.string().describe('The events, one per line'),
          ...commonErrorResponses,
          404: organizationNotFoundResponse,
        },
      },
    },
    async (request, reply) => {
      const { format, since, until } = request.query;
      checkRange({ since, until });
      await audit.requireAuditor(callerOf(request), request.params.organizationId);
      const pages = audit.exportText(request.params.organizationId, { since, until }, format);
      async function* chunks() {
        if (format === 'csv') yield `${csvColumns.join(',')}\r\n`;
        yield* pages;
      }
      reply.header(
        'content-type',
        format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8',
      );
      reply.header('content-disposition', `attachment; filename="audit-events.${format === 'csv' ? 'csv' : 'ndjson'}"`);
      // Byte mode with a small buffer: at most about one page is read ahead of what the client has taken.
      return reply.send(Readable.from(chunks(), { objectMode: false, highWaterMark: 64 * 1024 }) as never);
    },
  );

  app.get(
    '/v1/orgs/:organizationId/audit-events/verify',
    {
      onRequest: authenticate({ requires: 'audit.view', judgedBy: 'service' }),
      schema: {
        tags: ['Audit'],
        operationId: 'verifyAuditEvents',
        summary: "Check the organization's audit hash chain and report the first broken link (owners and admins)",
        params: organizationParams,
        response: {
          200: z.union([
            z.object({ ok: z.literal(true), checked: z.number().int() }),
            z.object({
              ok: z.literal(false),
              checked: z.number().int().describe('Events verified before the broken one'),
              brokenAt: z.string().describe('The id of the first event that does not verify'),
              reason: z.string(),
            }),
          ]),
          ...commonErrorResponses,
          404: organizationNotFoundResponse,
        },
      },
    },
    async (request) => audit.verify(callerOf(request), request.params.organizationId),
  );
};
