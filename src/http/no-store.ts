// `Cache-Control: no-store` as a property of the response schema: a route whose response has a field
// made with `secretString` (http/schemas.ts) gets the header on every answer, whatever its handler
// does, and its OpenAPI operation says so. A response that carries a secret must not be kept by a
// proxy, a CDN or the browser's cache, where the next person at the machine or an operator could read
// it (RFC 9111 5.2.2.5); `Pragma: no-cache` for HTTP/1.0 caches.
import type { onSendHookHandler, RouteOptions } from 'fastify';
import { z } from 'zod';
import { SECRET_FIELD } from './schemas.ts';

/** The OpenAPI extension of an operation whose responses carry a secret (and the header). */
export const NO_STORE = 'x-no-store';

export const noStoreHeaders = { 'cache-control': 'no-store', pragma: 'no-cache' } as const;

interface ZodLike {
  _zod: { def: Record<string, unknown>; innerType?: unknown };
}
const isZod = (value: unknown): value is ZodLike => typeof value === 'object' && value !== null && '_zod' in value;

/**
 * Whether a schema (a Zod schema, a JSON Schema, or a route's `response` map of either) has a field
 * marked secret anywhere inside: objects, arrays, unions, optional and nullable wrappers, lazy schemas.
 */
export function carriesSecret(schema: unknown, seen = new Set<unknown>()): boolean {
  if (typeof schema !== 'object' || schema === null || seen.has(schema)) return false;
  seen.add(schema);
  if (isZod(schema)) {
    if (z.globalRegistry.get(schema as never)?.[SECRET_FIELD] === true) return true;
    const { def } = schema._zod;
    // A lazy schema's target is made on first use.
    if (def.type === 'lazy' && carriesSecret(schema._zod.innerType, seen)) return true;
    return Object.entries(def).some(
      ([key, value]) =>
        key !== 'type' &&
        typeof value === 'object' &&
        value !== null &&
        (isZod(value) ? carriesSecret(value, seen) : Object.values(value).some((child) => carriesSecret(child, seen))),
    );
  }
  const json = schema as Record<string, unknown>;
  if (json[SECRET_FIELD] === true) return true;
  return Object.values(json).some((child) => carriesSecret(child, seen));
}

const sendNoStore: onSendHookHandler = (_request, reply, payload, done) => {
  reply.headers(noStoreHeaders);
  done(null, payload);
};

/**
 * An onRoute hook: a route whose response schema carries a secret sends `Cache-Control: no-store` and
 * `Pragma: no-cache` with every answer (set as the answer leaves, after its handler), and its OpenAPI
 * operation is marked NO_STORE (finishDocument documents the headers).
 */
export function noStoreForSecrets(route: RouteOptions): void {
  const routeSchema = route.schema as Record<string, unknown> | undefined;
  if (!routeSchema || !carriesSecret(routeSchema.response)) return;
  routeSchema[NO_STORE] = true;
  route.onSend = [...[route.onSend ?? []].flat(), sendNoStore];
}

/** The headers an operation marked NO_STORE documents on its successful responses (every answer of it has them). */
export const noStoreHeaderDocs = {
  'Cache-Control': {
    description: '`no-store`, on every answer of this operation: the response carries a secret no cache may keep',
    schema: { type: 'string', const: 'no-store' },
  },
  Pragma: { description: '`no-cache`, for HTTP/1.0 caches', schema: { type: 'string', const: 'no-cache' } },
};
