// How a module writes down its error codes once: a catalog (its `error-codes.ts`) gives each code its
// HTTP status and what it means. Throw sites make their errors from it, route schemas declare their error
// responses from it (the OpenAPI's `error` enums come from those declarations, http/openapi.ts), and
// test/system/error-catalogs.test.ts holds the docs and the served document to it.
import { z } from 'zod';
import { ApiError } from './api-error.ts';

/** What a catalog says of one code. */
export interface ErrorCodeEntry {
  /** The status it is answered with; a code answered with more than one lists them, the usual one first. */
  status: number | readonly [number, ...number[]];
  /** What it means, for a reader of the API (the OpenAPI and docs/api say it in their own words too). */
  description: string;
}

/** One code of a catalog: call it to make the error to throw. */
export interface ErrorCode<C extends string = string> {
  readonly code: C;
  /** Every status it is answered with, the usual one first. */
  readonly statuses: readonly number[];
  readonly description: string;
  /** The error, at the code's usual status; without `message`, the body is `{error}` and `extra` alone. */
  (message?: string, extra?: Record<string, unknown>): ApiError;
  /** The error at another status the catalog lists for the code. */
  at(status: number, message?: string, extra?: Record<string, unknown>): ApiError;
}

export type ErrorCatalog<T> = { readonly [K in keyof T & string]: ErrorCode<K> };

function errorCode<C extends string>(code: C, entry: ErrorCodeEntry): ErrorCode<C> {
  const statuses: readonly number[] = typeof entry.status === 'number' ? [entry.status] : entry.status;
  const at = (status: number, message?: string, extra?: Record<string, unknown>) => {
    if (!statuses.includes(status)) throw new Error(`error code ${code} is not answered with ${status}`);
    return new ApiError(status, code, message, extra);
  };
  const make = (message?: string, extra?: Record<string, unknown>) => at(statuses[0]!, message, extra);
  return Object.assign(make, { code, statuses, description: entry.description, at });
}

/** A module's catalog: `{ code: { status, description } }`, its keys the codes as the API spells them. */
export function defineErrorCodes<const T extends Record<string, ErrorCodeEntry>>(entries: T): ErrorCatalog<T> {
  for (const code of Object.keys(entries)) {
    if (!/^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$/.test(code)) throw new Error(`error code ${code} is not snake_case`);
  }
  return Object.fromEntries(
    Object.entries(entries).map(([code, entry]) => [code, errorCode(code, entry)]),
  ) as ErrorCatalog<T>;
}

/** The schema extension an error response's schema carries its codes in; the OpenAPI turns it into the `error` enum. */
export const ERROR_CODES = 'x-error-codes';

const validationDetailSchema = z
  .object({ message: z.string(), path: z.array(z.union([z.string(), z.number()])) })
  .loose();

/** The spec's error body: a snake_case `error`, optionally `message` and `details`, extra keys allowed. */
export const errorBodySchema = z
  .object({
    error: z.string(),
    message: z.string().optional(),
    details: z.array(validationDetailSchema).optional(),
  })
  .loose()
  .meta({ id: 'Error' });

/** "a", "a or b", "a, b or c". */
function listed(codes: readonly string[]): string {
  return codes.length < 2 ? (codes[0] ?? '') : `${codes.slice(0, -1).join(', ')} or ${codes.at(-1)}`;
}

/**
 * An error response of a route, for its `schema.response`: the codes it answers with that status, from
 * the catalogs, and what they mean there (`note`, after the codes). The description is written from them
 * unless `description` says it all in other words; `extend` adds the fields these errors carry.
 */
export function errorResponse<Shape extends z.core.$ZodLooseShape = Record<never, never>>(
  codes: readonly ErrorCode[],
  note?: string,
  options: { description?: string; extend?: Shape } = {},
) {
  if (codes.length === 0) throw new Error('an error response names at least one code');
  const names = codes.map((entry) => entry.code);
  const description = options.description ?? (note ? `${listed(names)}: ${note}` : listed(names));
  const schema = options.extend ? errorBodySchema.extend(options.extend) : errorBodySchema;
  return schema.meta({ description, [ERROR_CODES]: names });
}
