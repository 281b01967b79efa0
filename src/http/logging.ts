import type { FastifyBaseLogger, FastifyRequest } from 'fastify';
import type { Bindings, ChildLoggerOptions, LoggerOptions } from 'pino';

/**
 * Secrets that can reach a log line and must not: credentials in headers, secret fields of any body
 * or object logged, and tokens that travel in URLs (install links, invitations, OAuth callbacks).
 */
const secretFields = [
  'password',
  'apiKey',
  'key',
  'clientSecret',
  'botToken',
  'token',
  'sessionToken',
  'scimToken',
  'deliverySecret',
  'webhookSecret',
  'secret',
  'secret_token',
  'access_token',
  'refresh_token',
  'code_verifier',
  'authorization',
];
const secretHeaders = [
  'authorization',
  'cookie',
  'x-api-key',
  'x-telegram-bot-api-secret-token',
  'proxy-authorization',
];

export const redactPaths = [
  ...secretHeaders.map((header) => `req.headers["${header}"]`),
  'res.headers["set-cookie"]',
  ...secretFields.flatMap((field) => [field, `*.${field}`, `*.*.${field}`]),
  // An OAuth authorization code travels as the `code` of a callback's query (or a token request's
  // body). Only there: everywhere else `code` names an error (err.code: 23505, ECONNREFUSED, a
  // probe's failure code), which an operator needs to read.
  ...['query.code', '*.query.code', 'body.code', '*.body.code'],
];

const tokenInPath = [/(\/install\/)[^/?#]+/, /(\/v1\/install-links\/)[^/?#]+/, /(\/v1\/invitations\/)[^/?#]+/];
const secretQueryParameters = /([?&](?:code|state|token|key|api_key|access_token|secret)=)[^&#]*/gi;

/**
 * The URL as it may be logged: path tokens and secret query values replaced. The router decodes
 * percent-encoding before it matches (`/v1/install-link%73/<token>` is an install link), so the
 * patterns are matched against the URL with its encoded ASCII characters decoded; other encoded
 * bytes (UTF-8 sequences, which no route or parameter name uses) stay as they came.
 */
export function redactUrl(url: string): string {
  let safe = url.replace(/%([0-7][0-9a-f])/gi, (_encoded, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  for (const pattern of tokenInPath) safe = safe.replace(pattern, '$1[redacted]');
  return safe.replace(secretQueryParameters, '$1[redacted]');
}

const requestIdOfLogger = Symbol('requestId');

/**
 * Fastify's per-request child logger, without the request id as a pino binding: pino runs every
 * binding through the wildcard redaction when the child is made, which on every request cost ~6% of
 * the server's CPU under load (bench/active-org profile). The id cannot hold a secret, so it is
 * kept on the child and written into each line by the `mixin` below, only when a line is written.
 * Children of the request's logger (`request.log.child(...)`) inherit it through the prototype chain.
 */
export function childLoggerFactory(
  logger: FastifyBaseLogger,
  bindings: Bindings,
  options: ChildLoggerOptions,
): FastifyBaseLogger {
  const { reqId, ...others } = bindings;
  // With nothing else to bind, the child is the parent's configuration seen through a new object
  // (what pino's own child() starts from), so a request costs one small object, not a pino child.
  const child =
    Object.keys(others).length > 0 || Object.keys(options).length > 0
      ? logger.child(others, options)
      : (Object.create(logger) as FastifyBaseLogger);
  (child as unknown as Record<symbol, unknown>)[requestIdOfLogger] = reqId;
  return child;
}

export function loggerOptions(level: string): LoggerOptions {
  return {
    level,
    // Children of a request's logger inherit the id through their prototype chain.
    mixin: (_object, _level, logger) => {
      const requestId = (logger as unknown as Record<symbol, unknown>)[requestIdOfLogger];
      return requestId === undefined ? {} : { reqId: requestId };
    },
    redact: { paths: redactPaths, censor: '[redacted]' },
    serializers: {
      req(request: FastifyRequest) {
        return { method: request.method, url: redactUrl(request.url), remoteAddress: request.ip };
      },
    },
  };
}
