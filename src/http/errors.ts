import { maxHeaderSize } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors, isResponseSerializationError } from 'fastify-type-provider-zod';

/** An error a route means to return: it becomes `{ error: code, message?, ...extra }` with `statusCode`. */
export class ApiError extends Error {
  readonly statusCode: number;
  readonly code: string;
  readonly extra: Record<string, unknown> | undefined;
  readonly hasMessage: boolean;
  /** Response headers that go with this error (Retry-After, RateLimit-*). */
  headers: Record<string, string> = {};

  constructor(statusCode: number, code: string, message?: string, extra?: Record<string, unknown>) {
    super(message ?? code);
    this.name = 'ApiError';
    this.statusCode = statusCode;
    this.code = code;
    this.extra = extra;
    this.hasMessage = message !== undefined;
  }

  toBody(): { error: string; message?: string; [field: string]: unknown } {
    return { error: this.code, ...(this.hasMessage ? { message: this.message } : {}), ...this.extra };
  }
}

export interface ValidationDetail {
  message: string;
  path: (string | number)[];
  /** Which part of the request failed: body, querystring, params or headers. */
  in?: string;
}

export const invalidRequest = (details: ValidationDetail[], message = 'The request is not valid') =>
  new ApiError(400, 'invalid_request', message, { details });
/** A 400 for a request that could not be read as a whole: its one detail names no field (spec: every 400 has details). */
export const unreadableRequest = (message: string) => invalidRequest([{ message, path: [] }], message);
export const unauthorized = () => new ApiError(401, 'unauthorized');
export const forbidden = (message = 'You are not allowed to do this') => new ApiError(403, 'forbidden', message);
/**
 * What authenticate() (http/auth.ts) answers a caller who is not an active member of the active
 * organization, or who lacks a role there. A module that checks the member again inside its write's
 * transaction (the membership may have changed since the hook ran) answers with these too, so a
 * caller refused late gets what a caller refused early gets.
 */
export const notAnActiveMember = () => forbidden('This session has no active organization you are a member of');
export const lacksRole = (roles: readonly string[]) =>
  forbidden(`This needs the role ${roles.join(' or ')} in the active organization`);

/**
 * What a write answers when, inside its transaction, the acting member turns out to be no longer
 * active or no longer in a role the write needs (see identity's holdActingMember). Each route keeps
 * the answers its own early check gives, so a caller refused late is told what one refused early is.
 */
export interface MemberRefusals {
  inactive: () => ApiError;
  lacksRole: () => ApiError;
}
/** The refusals of a route behind authenticate(): 403 for both. */
export const refusedLikeAuthenticate = (roles: readonly string[] = []): MemberRefusals => ({
  inactive: notAnActiveMember,
  lacksRole: () => lacksRole(roles),
});

/**
 * The spec's 403 `reauth`: the session's person last authenticated longer ago than a privileged
 * operation allows (REAUTH_MAX_AGE_SECONDS); they authenticate again and retry.
 */
export const reauthRequired = (maxAgeSeconds: number) =>
  new ApiError(
    403,
    'reauth',
    `This needs a recent sign-in: authenticate again (POST /v1/auth/reauthenticate with your password, or SSO with reauthenticate: true) within ${maxAgeSeconds} seconds before retrying`,
    { reason: 'authentication_too_old' },
  );

export const notFound = (code: string, message: string) => new ApiError(404, code, message);
/** The spec's `organization_not_found` of the SCIM token and SSO domain endpoints: no other fields. */
export const organizationNotFound = () => new ApiError(404, 'organization_not_found');
export const conflict = (code: string, message: string) => new ApiError(409, code, message);

/** The standard RateLimit-* headers (IETF draft) for a limiter result; send them on every limited route. */
export function rateLimitHeaders(result: {
  limit: number;
  remaining: number;
  resetSeconds: number;
}): Record<string, string> {
  return {
    'ratelimit-limit': String(result.limit),
    'ratelimit-remaining': String(result.remaining),
    'ratelimit-reset': String(result.resetSeconds),
  };
}

/** 429 `rate_limited` with `message`, Retry-After and the RateLimit-* headers. */
export function rateLimited(
  result: { limit: number; remaining: number; resetSeconds: number },
  message: string,
): ApiError {
  const error = new ApiError(429, 'rate_limited', message);
  error.headers = { ...rateLimitHeaders(result), 'retry-after': String(result.resetSeconds) };
  return error;
}

// Fastify's own client errors, named the way this API names errors.
const frameworkCodes: Record<string, { status: number; code: string; message: string }> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: {
    status: 415,
    code: 'unsupported_media_type',
    message: 'Send the body as application/json',
  },
  FST_ERR_CTP_BODY_TOO_LARGE: { status: 413, code: 'payload_too_large', message: 'The request body is too large' },
  FST_ERR_CTP_INVALID_JSON_BODY: { status: 400, code: 'invalid_request', message: 'The body is not valid JSON' },
  FST_ERR_CTP_EMPTY_JSON_BODY: {
    status: 400,
    code: 'invalid_request',
    message: 'The body is empty but content-type is application/json',
  },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: {
    status: 400,
    code: 'invalid_request',
    message: 'Content-Length does not match the body',
  },
  FST_ERR_BAD_URL: { status: 400, code: 'invalid_request', message: 'The URL is not valid' },
  FST_ERR_INVALID_URL: { status: 400, code: 'invalid_request', message: 'The URL is not valid' },
  FST_ERR_MAX_PARAM_LENGTH: { status: 414, code: 'uri_too_long', message: 'A path parameter is too long' },
};

/**
 * Connections with a request in flight whose body is capped: bytes that follow its declared
 * Content-Length and are no request are the rest of a body larger than declared, which the cap
 * refuses (413) like any other. Set by such a route while its request is being handled.
 */
export const connectionsWithCappedBody = new WeakSet<Socket>();

/**
 * How a part of the server with its own error dialect (SCIM under /scim/v2) answers a request the HTTP
 * parser refused before routing: `status` and a human `message` in, its content type and body out.
 */
export interface PreRoutingDialect {
  /** Paths it answers for: exactly this, or under it (`/scim/v2`, `/scim/v2/...`, `/scim/v2?...`). */
  prefix: string;
  answer(status: number, message: string): { contentType: string; body: unknown };
}

/**
 * The request line's path, when the bytes the parser was given when it failed begin with one
 * (absolute-form targets give their path), and the line's length (infinite when its end is not among
 * those bytes). Undefined when those bytes are not the start of a request (the rest of a header
 * block that arrived in several pieces, say).
 */
export function requestLineOf(raw: Buffer | undefined): { path: string; length: number } | undefined {
  if (!raw || raw.length === 0) return undefined;
  const text = raw.subarray(0, 65_536).toString('latin1');
  const match = /^(?:\r?\n)*[A-Z]{1,20} ([^\s]+)/.exec(text);
  if (!match) return undefined;
  let path = match[1]!;
  if (!path.startsWith('/')) {
    try {
      path = new URL(path).pathname;
    } catch {
      return undefined;
    }
  }
  const end = text.indexOf('\n', match.index + match[0].length);
  return { path, length: end === -1 ? Number.POSITIVE_INFINITY : end - match.index };
}

const underPrefix = (path: string, prefix: string) =>
  path === prefix || path.startsWith(`${prefix}/`) || path.startsWith(`${prefix}?`);

/**
 * Errors the HTTP parser raises before Fastify sees a request (oversized headers or request line,
 * malformed HTTP): written straight to the socket, in the API's error shape, or in a dialect's own for
 * a request whose path (read from the raw bytes, when they hold the request line) is under its prefix.
 * A request line that alone exceeds the parser's limit (Node's maxHeaderSize, which counts it) is 414;
 * a header block, 431.
 */
export function createClientErrorHandler(dialects: readonly PreRoutingDialect[] = []) {
  return function clientErrorHandler(failure: Error, socket: Socket) {
    // Node's parser errors carry their code and the bytes it was given (rawPacket).
    const error = failure as NodeJS.ErrnoException & { rawPacket?: Buffer };
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    const line = requestLineOf(error.rawPacket);
    const [status, reason, body]: [number, string, { error: string; message?: string; [field: string]: unknown }] =
      error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'Request Timeout', { error: 'request_timeout', message: 'The request took too long to arrive' }]
        : error.code === 'HPE_HEADER_OVERFLOW' && line && line.length >= maxHeaderSize
          ? [414, 'URI Too Long', { error: 'uri_too_long', message: 'The request line is too long' }]
          : error.code === 'HPE_HEADER_OVERFLOW'
            ? [
                431,
                'Request Header Fields Too Large',
                { error: 'request_header_fields_too_large', message: 'The request line or headers are too large' },
              ]
            : connectionsWithCappedBody.has(socket)
              ? [413, 'Payload Too Large', { error: 'payload_too_large' }]
              : [400, 'Bad Request', unreadableRequest('The request is not valid HTTP').toBody()];
    const dialect = line ? dialects.find((candidate) => underPrefix(line.path, candidate.prefix)) : undefined;
    const answer = dialect ? dialect.answer(status, body.message ?? reason) : { contentType: 'application/json', body };
    const text = JSON.stringify(answer.body);
    if (socket.writable) {
      socket.write(
        `HTTP/1.1 ${status} ${reason}\r\nContent-Length: ${Buffer.byteLength(text)}\r\nContent-Type: ${answer.contentType}\r\nConnection: close\r\n\r\n${text}`,
      );
    }
    socket.destroy(error);
  };
}

/** The parser's refusals in the API's error shape everywhere (no dialects). */
export const clientErrorHandler = createClientErrorHandler();

function detailsFromValidation(error: FastifyError): ValidationDetail[] {
  const location = (error as { validationContext?: string }).validationContext;
  return (error.validation ?? []).map((issue) => {
    // The type provider flattens zod's path into instancePath; array positions come back as numbers.
    const path = issue.instancePath
      .split('/')
      .filter(Boolean)
      .map((part) => (/^(0|[1-9]\d*)$/.test(part) ? Number(part) : part));
    return { message: issue.message ?? 'Invalid value', path, ...(location ? { in: location } : {}) };
  });
}

/** The one place where any thrown error becomes a response; nothing leaves as an unexplained 500. */
export function errorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  if (error instanceof ApiError) {
    if (error.statusCode >= 500) request.log.warn({ err: error }, 'request failed');
    reply.headers(error.headers);
    return reply.status(error.statusCode).send(error.toBody());
  }
  if (hasZodFastifySchemaValidationErrors(error)) {
    return reply.status(400).send(invalidRequest(detailsFromValidation(error)).toBody());
  }
  if (isResponseSerializationError(error)) {
    request.log.error({ err: error, issues: error.cause.issues }, 'response did not match its schema');
    return reply
      .status(500)
      .send({ error: 'internal_error', message: 'Something went wrong on our side', requestId: request.id });
  }
  const known = error.code ? frameworkCodes[error.code] : undefined;
  if (known?.status === 400) return reply.status(400).send(unreadableRequest(known.message).toBody());
  if (known) return reply.status(known.status).send({ error: known.code, message: known.message });
  if (error instanceof SyntaxError || error.statusCode === 400)
    return reply.status(400).send(unreadableRequest('The request could not be read').toBody());
  if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
    return reply.status(error.statusCode).send({ error: 'invalid_request', message: error.message });
  }
  if (isUnstorableText(error))
    return reply
      .status(400)
      .send(unreadableRequest('Text cannot contain the NUL character (U+0000) or unpaired surrogates').toBody());
  if (isDatabaseUnavailable(error)) {
    request.log.warn({ err: error }, 'database unavailable');
    reply.header('retry-after', '5');
    return reply
      .status(503)
      .send({ error: 'service_unavailable', message: 'The database is unavailable; try again shortly' });
  }
  request.log.error({ err: error }, 'unhandled error');
  return reply
    .status(500)
    .send({ error: 'internal_error', message: 'Something went wrong on our side', requestId: request.id });
}

/**
 * True when PostgreSQL refused text the caller sent: U+0000 (22021 in text, 22P05 in jsonb) or an
 * unpaired surrogate escape in jsonb (22P02). The caller's input, so a 400 wherever a route's schema let it through.
 */
export function isUnstorableText(error: unknown): boolean {
  const { code, message = '', detail = '' } = (error ?? {}) as { code?: string; message?: string; detail?: string };
  if (code === '22P05') return true;
  if (code === '22021') return /0x00/.test(message);
  return code === '22P02' && /surrogate/i.test(`${message} ${detail}`);
}

// Error codes that say the database cannot serve right now, whatever the statement: the socket failed
// (ECONNREFUSED, ECONNRESET, ETIMEDOUT, EPIPE), or PostgreSQL says the connection failed (08000,
// 08001, 08003, 08004, 08006), too many connections or no disk (53300, 53100), an operator stopped or
// is recovering it (57P01-57P03), it refused the login (28000, 28P01), or it does not exist (3D000:
// dropped or misnamed). Not the rest of those classes: 08P01 (protocol violation) and 53200 (one
// statement out of memory) come from a statement, and retrying it would not help.
const unavailableCodes = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
  '53100',
  '53300',
  '57P01',
  '57P02',
  '57P03',
  '28000',
  '28P01',
  '3D000',
]);

/** True for errors that mean "the database cannot be reached right now" rather than a bug. */
export function isDatabaseUnavailable(error: unknown): boolean {
  const candidate = error as { code?: string; message?: string } | undefined;
  if (!candidate) return false;
  if (candidate.code && unavailableCodes.has(candidate.code)) return true;
  const message = candidate.message ?? '';
  return /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|database ping timed out/i.test(
    message,
  );
}

export function notFoundHandler(request: FastifyRequest, reply: FastifyReply) {
  return reply.status(404).send({ error: 'not_found', message: `No such route for ${request.method}` });
}
