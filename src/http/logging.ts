import type { FastifyRequest } from 'fastify';
import type { LoggerOptions } from 'pino';

/**
 * Secrets that can reach a log line and must not: credentials in headers, secret fields of any body
 * or object logged, and tokens that travel in URLs (install links, invitations, OAuth callbacks).
 */
const secretFields = [
  'password', 'apiKey', 'key', 'clientSecret', 'botToken', 'token', 'sessionToken', 'scimToken', 'deliverySecret',
  'webhookSecret', 'secret', 'secret_token', 'access_token', 'refresh_token', 'code', 'code_verifier', 'authorization',
];
const secretHeaders = ['authorization', 'cookie', 'x-api-key', 'x-telegram-bot-api-secret-token', 'proxy-authorization'];

export const redactPaths = [
  ...secretHeaders.map((header) => `req.headers["${header}"]`),
  'res.headers["set-cookie"]',
  ...secretFields.flatMap((field) => [field, `*.${field}`, `*.*.${field}`]),
];

const tokenInPath = [
  /(\/install\/)[^/?#]+/,
  /(\/v1\/install-links\/)[^/?#]+/,
  /(\/v1\/invitations\/)[^/?#]+/,
];
const secretQueryParameters = /([?&](?:code|state|token|key|api_key|access_token|secret)=)[^&#]*/gi;

/** The URL as it may be logged: path tokens and secret query values replaced. */
export function redactUrl(url: string): string {
  let safe = url;
  for (const pattern of tokenInPath) safe = safe.replace(pattern, '$1[redacted]');
  return safe.replace(secretQueryParameters, '$1[redacted]');
}

export function loggerOptions(level: string): LoggerOptions {
  return {
    level,
    redact: { paths: redactPaths, censor: '[redacted]' },
    serializers: {
      req(request: FastifyRequest) {
        return { method: request.method, url: redactUrl(request.url), remoteAddress: request.ip };
      },
    },
  };
}
