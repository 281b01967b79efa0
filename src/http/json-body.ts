// The API's JSON body parser: Fastify's own (which refuses prototype poisoning), and no string with an
// unpaired surrogate. JSON can spell one (`"\ud800"`) although no UTF-8 text can hold it, and the
// database clients would store it as U+FFFD, silently changing what was sent; so it is refused with
// a 400, as NUL is. The SCIM server and the messenger webhook read bodies with parsers of their own.
import type { FastifyInstance } from 'fastify';
import { invalidRequest } from './errors.ts';

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
      item.forEach((entry, index) => pending.push([entry, [...path, index]]));
    } else if (item !== null && typeof item === 'object') {
      for (const [key, entry] of Object.entries(item)) {
        if (!key.isWellFormed()) return [...path, key];
        pending.push([entry, [...path, key]]);
      }
    }
  }
  return undefined;
}

export function registerJsonBodyParser(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    parseJson(request, body as string, (error, value) => {
      if (error) return done(error, undefined);
      const at = SURROGATE_ESCAPE.test(body as string) ? unpairedSurrogateAt(value) : undefined;
      if (at) {
        const message = 'Text cannot contain unpaired surrogates (an escape from \\ud800 to \\udfff without its pair)';
        return done(invalidRequest([{ message, path: at, in: 'body' }], message), undefined);
      }
      done(null, value);
    });
  });
}
