import { z } from 'zod';
import { errorResponse } from './error-catalog.ts';
import { httpErrors } from './error-codes.ts';
import { invalidRequest } from './errors.ts';

/**
 * The spec's date-time: ISO 8601 UTC ending in `Z`, seconds optional, fractions allowed, and a real
 * calendar date (`2024-02-29T10:00Z` is fine, `2023-02-29T10:00:00Z` is not).
 */
const timestampPattern = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?Z$/;

export function isValidTimestamp(value: string): boolean {
  const match = timestampPattern.exec(value);
  if (!match) return false;
  const [year, month, day, hour, minute, second = '0'] = match.slice(1, 7).map(Number) as number[];
  if (month! < 1 || month! > 12 || hour! > 23 || minute! > 59 || Number(second) > 59) return false;
  // setUTCFullYear, not Date.UTC, which reads years 0-99 as 1900-1999 (year 0 is a leap year, 1900 is not).
  const lastOfMonth = new Date(0);
  lastOfMonth.setUTCFullYear(year!, month!, 0);
  const daysInMonth = lastOfMonth.getUTCDate();
  return day! >= 1 && day! <= daysInMonth;
}

export const timestampSchema = z
  .string()
  // Any number of fraction digits (the spec sets no limit; they are read to the millisecond), within reason.
  .max(64)
  .refine(isValidTimestamp, { message: 'Must be an ISO 8601 UTC date-time ending in Z, on a real calendar date' })
  // A pattern, not `format: date-time`: RFC 3339 requires seconds and allows offsets, the spec neither.
  .meta({
    pattern: timestampPattern.source,
    description:
      'ISO 8601 date-time in UTC ending in `Z`; seconds and fractions optional (`2026-01-31T09:30Z`); offsets such as +00:00 are refused. Responses always give milliseconds.',
    example: '2026-01-31T09:30:00.000Z',
  });

/** How every timestamp leaves the API: millisecond precision, `Z`. */
export function isoTimestamp(date: Date): string {
  return date.toISOString();
}
export function isoTimestampOrNull(date: Date | null | undefined): string | null {
  return date ? date.toISOString() : null;
}

// user:password in a delivery URL would be shown by every read of it, and fetch refuses to send such
// a URL anyway (every delivery would fail, its error quoting the password). The same rule as the MCP
// probe's credentials_in_url.
function carriesCredentials(value: string): boolean {
  try {
    const url = new URL(value);
    return url.username !== '' || url.password !== '';
  } catch {
    return false;
  }
}

/**
 * A URL orgplane POSTs signed deliveries to (a bot connection's deliveryUrl, an audit-log stream's url):
 * http(s), at most 2048 characters, without user:password. Whether its host may be dialed is the
 * outbound policy's to judge (ALLOWED_PRIVATE_NETWORKS), when it is set and at every delivery.
 */
export function deliveryUrlSchema(description: string) {
  return z
    .url({ protocol: /^https?$/, message: 'Must be an http(s) URL' })
    .max(2048)
    .refine((value) => !carriesCredentials(value), {
      message: 'Must not contain user:password; deliveries are authenticated by their X-Orgplane-Signature',
    })
    .describe(description);
}

const crockfordSuffix = '[0-7][0-9a-hjkmnp-tv-z]{25}';

/** A TypeID with the given prefix: `prefix_` + 26 lower-case Crockford base32 characters. */
export function typeIdSchema(prefix: string) {
  return z
    .string()
    .regex(new RegExp(`^${prefix}_${crockfordSuffix}$`), {
      message: `Must be an id like ${prefix}_ followed by 26 base32 characters`,
    })
    .meta({ example: `${prefix}_01jqz3v6b8e9f0g1h2j3k4m5n6` });
}

export const connectionIdSchema = typeIdSchema('emc').meta({
  description: 'Connection id: `emc_` followed by a 26-character base32 suffix (30 characters)',
});

export { errorResponse } from './error-catalog.ts';

/**
 * Response entries for the errors most routes can return, to spread into `schema.response`. A privileged
 * route's 403 gets `reauth` added to its codes in the OpenAPI (http/openapi.ts), where it is marked.
 */
export const commonErrorResponses = {
  400: errorResponse(
    [httpErrors.invalid_request],
    'the request failed validation (`details` says where; an unreadable body has one detail with an empty path)',
  ),
  401: errorResponse(
    [httpErrors.unauthorized],
    'not signed in (no, unknown, expired or revoked session token); no other fields',
  ),
  403: errorResponse([httpErrors.forbidden], undefined, {
    description:
      'forbidden, with a `message` saying what is missing (a role, an active organization, membership); or, on a privileged route ' +
      '(marked `x-requires-fresh-authentication`), `reauth` with `reason: "authentication_too_old"` and a `message`: authenticate again and retry.',
  }),
} as const;

/**
 * An integer query parameter, written in decimal digits. Coercion would read "0x10", "1e1", "+5" or
 * " 5" as numbers too (Number() does); a client sending those has a bug worth a 400 naming it.
 */
export function queryInteger(min: number, max: number, fallback: number) {
  return z.preprocess((value, ctx) => {
    if (typeof value !== 'string') return value;
    if (/^\d{1,15}$/.test(value)) return Number(value);
    ctx.issues.push({ code: 'custom', message: 'Must be a whole number written in digits', input: value });
    return z.NEVER;
  }, z.number().int().min(min).max(max).default(fallback));
}

export const paginationQuerySchema = z.object({
  limit: queryInteger(1, 100, 50),
  cursor: z.string().max(200).optional().describe("Opaque cursor from a previous page's `nextCursor`"),
});

/** Opaque cursors are base64url JSON; tampered ones are rejected as invalid_request. */
export function encodeCursor(value: unknown): string {
  return Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');
}
export function decodeCursor<T>(cursor: string, check: (value: unknown) => value is T): T | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    return check(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

const isAfterCursor = (value: unknown): value is { after: string } =>
  typeof value === 'object' && value !== null && typeof (value as { after?: unknown }).after === 'string';

/** The id to continue after, from an opaque cursor; a tampered cursor is a 400 pointing at `cursor`. */
export function afterFromCursor(cursor: string | undefined): string | undefined {
  if (cursor === undefined) return undefined;
  const decoded = decodeCursor(cursor, isAfterCursor);
  if (!decoded)
    throw invalidRequest([{ message: 'Not a cursor this API issued', path: ['cursor'], in: 'querystring' }]);
  return decoded.after;
}

/** Stores fetch `limit + 1` rows ordered by id; the extra row only says whether a next page exists. */
export function pageOf<T extends { id: string }>(rows: T[], limit: number): { items: T[]; nextCursor: string | null } {
  const items = rows.slice(0, limit);
  const last = items[items.length - 1];
  return { items, nextCursor: rows.length > limit && last ? encodeCursor({ after: last.id }) : null };
}

/** The schema extension (and OpenAPI keyword) that marks a response field carrying a secret. */
export const SECRET_FIELD = 'x-secret';

/**
 * A response field that carries a secret: a session token, a key, a signing secret, or a URL with a
 * token in it. Every route whose response schema has one answers with `Cache-Control: no-store`
 * (http/no-store.ts), so no cache between the server and the client keeps a copy; a handler cannot
 * forget it. Use it for every such field, in responses only (what a client sends is never echoed).
 */
export function secretString(description: string) {
  return z
    .string()
    .meta({ [SECRET_FIELD]: true })
    .describe(description);
}

/** A PKCE code verifier or S256 challenge (RFC 7636: 43 to 128 unreserved characters). */
export const pkceValueSchema = z
  .string()
  .regex(/^[A-Za-z0-9._~-]{43,128}$/, 'Must be 43 to 128 characters of A-Z a-z 0-9 . _ ~ - (RFC 7636)');
