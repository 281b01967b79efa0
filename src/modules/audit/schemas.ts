// What an audit log's routes take and give: an organization's (routes.ts) and the instance's (the
// instance-administration routes, through index.ts), so both logs read the same.
import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import { z } from 'zod';
import { invalidRequest } from '../../http/errors.ts';
import { decodeCursor, encodeCursor, queryInteger, timestampSchema } from '../../http/schemas.ts';
import { csvColumns, type ExportFormat } from './export-text.ts';

export const auditEventSchema = z
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

export const auditListQuery = z.object({
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

export const auditExportQuery = z.object({ format: z.enum(['ndjson', 'csv']).default('ndjson'), ...rangeQuery });

export const auditPageSchema = z.object({ events: z.array(auditEventSchema), nextCursor: z.string().nullable() });

export const auditVerificationSchema = z.union([
  z.object({ ok: z.literal(true), checked: z.number().int() }),
  z.object({
    ok: z.literal(false),
    checked: z.number().int().describe('Events verified before the broken one'),
    brokenAt: z.string().describe('The id of the first event that does not verify'),
    reason: z.string(),
  }),
]);

const isBefore = (value: unknown): value is { before: number } =>
  typeof value === 'object' &&
  value !== null &&
  Number.isSafeInteger((value as { before?: unknown }).before) &&
  (value as { before: number }).before > 0;

/** 400 when `until` is before `since`. */
export function checkAuditRange(query: { since?: string | undefined; until?: string | undefined }): void {
  if (query.since && query.until && Date.parse(query.since) > Date.parse(query.until)) {
    throw invalidRequest([{ message: 'Must not be before since', path: ['until'], in: 'querystring' }]);
  }
}

/** The list query as the service takes it: the range checked, the cursor decoded (a tampered one is a 400). */
export function auditQueryOf(query: z.infer<typeof auditListQuery>) {
  const { limit, cursor, ...filters } = query;
  checkAuditRange(filters);
  let beforeSeq: number | undefined;
  if (cursor !== undefined) {
    const decoded = decodeCursor(cursor, isBefore);
    if (!decoded)
      throw invalidRequest([{ message: 'Not a cursor this API issued', path: ['cursor'], in: 'querystring' }]);
    beforeSeq = decoded.before;
  }
  return { limit, query: { ...filters, actionPrefix: filters.action, beforeSeq } };
}

/** A page of events as the list routes answer it. */
export function auditPageOf(page: { events: z.infer<typeof auditEventSchema>[]; nextBeforeSeq: number | null }) {
  return {
    events: page.events,
    nextCursor: page.nextBeforeSeq === null ? null : encodeCursor({ before: page.nextBeforeSeq }),
  };
}

/** Streams an export's pages as the reply, named `<name>.ndjson` or `.csv`. */
export function sendAuditExport(
  reply: FastifyReply,
  pages: AsyncGenerator<string>,
  format: ExportFormat,
  name: string,
): FastifyReply {
  async function* chunks() {
    if (format === 'csv') yield `${csvColumns.join(',')}\r\n`;
    yield* pages;
  }
  reply.header('content-type', format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8');
  reply.header('content-disposition', `attachment; filename="${name}.${format === 'csv' ? 'csv' : 'ndjson'}"`);
  // Byte mode with a small buffer: at most about one page is read ahead of what the client has taken.
  return reply.send(Readable.from(chunks(), { objectMode: false, highWaterMark: 64 * 1024 }) as never);
}

export const auditExportDescription =
  'NDJSON: one event (as in the list, same keys in the same order) per line; `changes` is written as the database renders JSON (a space after colons and commas). ' +
  "CSV: a header line, then one event per line; `changes` is a JSON cell; cells starting with = + - @, a tab or a carriage return are prefixed with '. " +
  "Streamed with backpressure, a page of 200 events at a time: the server's memory does not grow with the range.";
