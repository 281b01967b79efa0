// The text of exported and streamed events, made by the database a page at a time: one string per page
// of NDJSON lines or CSV rows, rather than a row object, a Date, a parsed `changes` and a JSON string per
// event in this process. Exporting a million events made the server's heap grow by some 200 MB: each
// page's objects outlived a young-generation collection or two and were promoted, so the old space
// filled with garbage until a full collection. A page is now a few strings, and memory stays flat.
//
// The lines are the event as the API gives it (AuditEvent, the list's `events`), keys in the same order;
// `changes` is PostgreSQL's rendering of the jsonb value (`{"role": {"to": "admin"}}`: the same JSON,
// with a space after colons and commas). CSV cells are quoted, `"` doubled, and a cell starting with
// = + - @ tab or carriage return is prefixed with ' so that a spreadsheet does not run it as a formula.
import type { Queryable } from '../../db/database.ts';
import { whereOf, type EventFilter } from './store.ts';

export type ExportFormat = 'ndjson' | 'csv';

const json = (column: string) => `COALESCE(to_json(${column})::text, 'null')`;
const occurredAt = `to_char(occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** One event as a line of NDJSON (AuditEvent's keys, in its order), newline included. */
const NDJSON_LINE = `'{"id":' || ${json('id')} || ',"organizationId":' || ${json('organization_id')}
  || ',"occurredAt":"' || ${occurredAt} || '","action":' || ${json('action')} || ',"outcome":' || ${json('outcome')}
  || ',"actor":{"type":' || ${json('actor_type')} || ',"id":' || ${json('actor_id')} || ',"name":' || ${json('actor_name')} || ',"email":' || ${json('actor_email')}
  || '},"target":{"type":' || ${json('target_type')} || ',"id":' || ${json('target_id')} || ',"name":' || ${json('target_name')}
  || '},"ip":' || ${json('ip')} || ',"userAgent":' || ${json('user_agent')} || ',"requestId":' || ${json('request_id')}
  || ',"changes":' || COALESCE(changes::text, 'null') || E'}\\n'`;

function csvCell(value: string): string {
  const defused = `CASE WHEN left(${value}, 1) IN ('=', '+', '-', '@', E'\\t', E'\\r') THEN '''' || ${value} ELSE ${value} END`;
  return `CASE WHEN ${value} IS NULL THEN '' ELSE '"' || replace(${defused}, '"', '""') || '"' END`;
}

export const csvColumns = [
  'id',
  'occurredAt',
  'organizationId',
  'action',
  'outcome',
  'actorType',
  'actorId',
  'actorName',
  'actorEmail',
  'targetType',
  'targetId',
  'targetName',
  'ip',
  'userAgent',
  'requestId',
  'changes',
];
const CSV_LINE = `${[
  'id',
  occurredAt,
  'organization_id',
  'action',
  'outcome',
  'actor_type',
  'actor_id',
  'actor_name',
  'actor_email',
  'target_type',
  'target_id',
  'target_name',
  'ip',
  'user_agent',
  'request_id',
  'changes::text',
]
  .map(csvCell)
  .join(` || ',' || `)} || E'\\r\\n'`;

export interface TextPage {
  /** How many events the page holds (0: none left). */
  count: number;
  /** Where the next page starts (the last event's position in the chain). */
  lastSeq: number;
  lastEventId: string | null;
  text: string;
}

/** Up to `limit` events of the filter after `filter.afterSeq`, oldest first, as one text. */
export async function textPage(
  db: Queryable,
  filter: EventFilter,
  limit: number,
  format: ExportFormat,
): Promise<TextPage> {
  const where = whereOf(filter);
  const { rows } = await db.query<{
    count: number;
    last_seq: number | null;
    last_event_id: string | null;
    text: string | null;
  }>(
    `SELECT count(*)::int AS count, max(seq) AS last_seq, (array_agg(id ORDER BY seq DESC))[1] AS last_event_id, string_agg(line, '' ORDER BY seq) AS text
       FROM (SELECT seq, id, ${format === 'csv' ? CSV_LINE : NDJSON_LINE} AS line FROM audit_events WHERE ${where.sql} ORDER BY seq ASC LIMIT ${Math.trunc(limit)}) page`,
    where.params,
  );
  const row = rows[0]!;
  return { count: row.count, lastSeq: Number(row.last_seq ?? 0), lastEventId: row.last_event_id, text: row.text ?? '' };
}
