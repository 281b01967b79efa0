// Cross-origin access for browser apps on the origins the operator lists (CORS_ALLOWED_ORIGINS).
//
// A small hook rather than a plugin: which paths may be read cross-origin is this API's decision
// (the /v1 API and the two public system documents; never the webhook ingress, which only the
// messaging platform calls, nor SCIM, which identity providers call from their servers, nor the pages
// for people), and an origin that is not listed gets no CORS header at all, so the browser blocks it.
//
// No Access-Control-Allow-Credentials: the API authenticates with headers the page sets itself
// (Authorization: Bearer, x-api-key), never with cookies or HTTP authentication the browser keeps, so
// a page needs no credentialed request; and without it a listed origin's page cannot send whatever
// ambient credentials a browser might hold for this host (a proxy's cookie, say).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

export interface CorsOptions {
  /** Exact origins (`https://app.example.com`), as config-schema.ts normalized them. Empty: no CORS at all. */
  allowedOrigins: readonly string[];
  /** Path prefixes under the API that never get CORS headers (the webhook ingress). */
  excludedPrefixes: readonly string[];
}

/** The methods the API's routes use. */
export const corsAllowedMethods = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
/** Request headers a page may set besides the CORS-safelisted ones. */
export const corsAllowedHeaders = ['authorization', 'content-type', 'x-api-key', 'x-request-id'] as const;
/** Response headers a page may read besides the safelisted ones. */
export const corsExposedHeaders = [
  'x-request-id',
  'retry-after',
  'ratelimit-limit',
  'ratelimit-remaining',
  'ratelimit-reset',
] as const;
/** How long a browser may reuse a preflight answer (Chromium caps it at 2 hours). */
export const corsMaxAgeSeconds = 600;

/** System routes a browser app may read cross-origin (public, no secrets). */
const systemPaths = new Set(['/health', '/ready', '/openapi.json']);

function pathOf(url: string): string {
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

/** Adds the CORS hook when origins are listed; with none it adds nothing (same-origin only, as before). */
export function registerCors(app: FastifyInstance, options: CorsOptions): void {
  if (options.allowedOrigins.length === 0) return;
  const allowed = new Set(options.allowedOrigins);
  const covers = (path: string) =>
    (path.startsWith('/v1/') && !options.excludedPrefixes.some((prefix) => path.startsWith(prefix))) ||
    systemPaths.has(path);

  // A synchronous hook, before the body is read: a preflight is answered here, without routing.
  app.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done) => {
    const path = pathOf(request.url);
    if (!covers(path)) return done();
    // The answer depends on Origin wherever CORS applies: caches must keep one copy per origin.
    const origin = request.headers.origin;
    const preflight = request.method === 'OPTIONS' && request.headers['access-control-request-method'] !== undefined;
    reply.header(
      'vary',
      preflight ? 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers' : 'Origin',
    );
    if (typeof origin !== 'string' || !allowed.has(origin)) return done();
    reply.header('access-control-allow-origin', origin);
    if (!preflight) {
      reply.header('access-control-expose-headers', corsExposedHeaders.join(', '));
      return done();
    }
    reply.header('access-control-allow-methods', corsAllowedMethods.join(', '));
    reply.header('access-control-allow-headers', corsAllowedHeaders.join(', '));
    reply.header('access-control-max-age', String(corsMaxAgeSeconds));
    reply.code(204).send();
  });
}
