// SCIM's rules on the wire, apart from any route: its media type, how deep a body may nest, and how
// a failure (ours, Fastify's, the database's) is answered in SCIM's error shape (RFC 7644 section 3.12).
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { isDatabaseUnavailable, isUnstorableText } from '../../db/errors.ts';
import { ApiError } from '../../http/errors.ts';
import { ScimError, scimErrorBody } from './errors.ts';

export const SCIM_CONTENT_TYPE = 'application/scim+json; charset=utf-8';

/**
 * The deepest nesting of objects and arrays a SCIM body may have (the body itself is level 1). SCIM
 * resources need a handful of levels; a value thousands of levels deep parses, but copying or
 * serializing it overflows the stack, so it is refused before anything runs.
 */
export const MAX_BODY_DEPTH = 64;

/** Whether a JSON text nests deeper than `limit`, counted on the text so no deep value is ever built. */
export function nestsDeeperThan(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // the escaped character cannot end the string
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > limit) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

export function failureBody(error: FastifyError | Error): {
  status: number;
  detail: string;
  scimType?: ScimError['scimType'];
} {
  if (error instanceof ScimError) return { status: error.status, detail: error.message, scimType: error.scimType };
  if (error instanceof ApiError) return { status: error.statusCode, detail: error.message };
  if (hasZodFastifySchemaValidationErrors(error)) {
    const first = error.validation[0];
    return {
      status: 400,
      detail: `Invalid request: ${first?.message ?? 'validation failed'}`,
      scimType: 'invalidSyntax',
    };
  }
  const code = (error as FastifyError).code;
  if (code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE')
    return { status: 415, detail: 'Send the body as application/scim+json or application/json' };
  if (code === 'FST_ERR_CTP_BODY_TOO_LARGE') return { status: 413, detail: 'The request body is too large' };
  if (
    error instanceof SyntaxError ||
    code === 'FST_ERR_CTP_INVALID_JSON_BODY' ||
    code === 'FST_ERR_CTP_EMPTY_JSON_BODY'
  ) {
    return { status: 400, detail: 'The body is not valid JSON', scimType: 'invalidSyntax' };
  }
  // Text PostgreSQL cannot store (U+0000, unpaired surrogates) is the client's input; a lost database is retryable.
  if (isUnstorableText(error))
    return {
      status: 400,
      detail: 'Text cannot contain the NUL character (U+0000) or unpaired surrogates',
      scimType: 'invalidValue',
    };
  if (isDatabaseUnavailable(error)) return { status: 503, detail: 'The database is unavailable; try again shortly' };
  const status = (error as FastifyError).statusCode;
  if (status && status >= 400 && status < 500) return { status, detail: error.message };
  return { status: 500, detail: 'Something went wrong on our side' };
}

/**
 * Answers a request the router refused before any route ran (an undecodable path under /scim/v2,
 * say) in SCIM's error shape, which is what a SCIM client reads.
 */
export function scimFrameworkError(error: FastifyError, _request: FastifyRequest, reply: FastifyReply) {
  const body = failureBody(error);
  return reply
    .status(body.status)
    .header('content-type', SCIM_CONTENT_TYPE)
    .send(scimErrorBody(body.status, body.detail, body.scimType));
}

/**
 * How the SCIM server answers a request the HTTP parser refused before routing (431, 414, 400): the
 * same refusal in SCIM's error shape (http/errors.ts createClientErrorHandler).
 */
export function scimPreRoutingError(status: number, message: string) {
  return { contentType: SCIM_CONTENT_TYPE, body: scimErrorBody(status, message) };
}
