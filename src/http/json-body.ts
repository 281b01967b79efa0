// The API's JSON body parser: Fastify's own (which refuses prototype poisoning), over UTF-8 only, and
// no string with an unpaired surrogate. Each of those would otherwise be stored as U+FFFD, silently
// changing what was sent: bytes that are not UTF-8 (read as UTF-8 they become U+FFFD), a body in
// another charset (the same), and a surrogate that JSON can spell (`"\ud800"`) although no UTF-8 text
// can hold it. So they are refused, as NUL is. The SCIM server reads bodies with a parser of its own
// and uses `utf8BodyText` too; the messenger webhook, which reads any content type, checks the bytes.
import { isUtf8 } from 'node:buffer';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError, invalidRequest } from './errors.ts';

// Only a body that spells a surrogate with an escape can hold an unpaired one: decoded UTF-8 cannot.
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;

/**
 * Where the first string that is not well-formed UTF-16 is (an object key counts as the string at its
 * own path), or undefined when all are. Iterative: bodies may nest deeply.
 */
function unpairedSurrogateAt(value: unknown): (string | number)[] | undefined {
  const pending: [unknown, (string | number)[]][] = [[value, []]];
  while (pending.length > 0) {
    const [item, path] = pending.pop()!;
    if (typeof item === 'string') {
      if (!item.isWellFormed()) return path;
    } else if (Array.isArray(item)) {
      for (const [index, entry] of item.entries()) pending.push([entry, [...path, index]]);
    } else if (item !== null && typeof item === 'object') {
      for (const [key, entry] of Object.entries(item)) {
        if (!key.isWellFormed()) return [...path, key];
        pending.push([entry, [...path, key]]);
      }
    }
  }
  return undefined;
}

// JSON has no charset parameter (RFC 8259: it is UTF-8), but clients send one; any other is refused.
const CHARSET = /;\s*charset\s*=\s*"?([^";\s]*)/i;

/**
 * The body as text, when it is UTF-8 (and the Content-Type names no other charset); otherwise the
 * error to answer: 415 for another charset, 400 for bytes that are not UTF-8.
 */
export function utf8BodyText(request: FastifyRequest, body: Buffer): string | ApiError {
  const charset = CHARSET.exec(request.headers['content-type'] ?? '')?.[1]?.toLowerCase();
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
    return new ApiError(415, 'unsupported_media_type', 'Send JSON as UTF-8 (charset=utf-8, or no charset)');
  }
  if (!isUtf8(body)) {
    const message = 'The body is not valid UTF-8';
    return invalidRequest([{ message, path: [], in: 'body' }], message);
  }
  return body.toString('utf8');
}

export function registerJsonBodyParser(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, raw, done) => {
    const body = utf8BodyText(request, raw as Buffer);
    if (body instanceof ApiError) return done(body, undefined);
    parseJson(request, body, (error, value) => {
      if (error) return done(error, undefined);
      const at = SURROGATE_ESCAPE.test(body) ? unpairedSurrogateAt(value) : undefined;
      if (at) {
        const message = 'Text cannot contain unpaired surrogates (an escape from \\ud800 to \\udfff without its pair)';
        return done(invalidRequest([{ message, path: at, in: 'body' }], message), undefined);
      }
      done(null, value);
    });
  });
}
