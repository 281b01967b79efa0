// The OpenAPI document's finishing touches, applied to what @fastify/swagger and the Zod type
// provider generate.

import { STATUS_CODES } from 'node:http';

type Json = unknown;

const schemaRefPrefix = '#/components/schemas/';

function collectRefs(value: Json, into: Set<string>): void {
  if (Array.isArray(value)) {
    for (const item of value) collectRefs(item, into);
  } else if (value && typeof value === 'object') {
    for (const [key, child] of Object.entries(value)) {
      if (key === '$ref' && typeof child === 'string' && child.startsWith(schemaRefPrefix)) into.add(child.slice(schemaRefPrefix.length));
      else collectRefs(child, into);
    }
  }
}

/**
 * A route schema flag for a body that may be left out (the route fills in its defaults):
 * `{ [BODY_OPTIONAL]: true }`. @fastify/swagger always writes `requestBody.required: true`.
 */
export const BODY_OPTIONAL = 'x-body-optional';

/** What the generated document needs before it is served. */
export function finishDocument<T extends { paths?: Json; components?: { schemas?: Record<string, Json> } }>(document: T): T {
  for (const item of Object.values((document.paths ?? {}) as Record<string, Record<string, Record<string, any>>>)) {
    for (const operation of Object.values(item)) {
      if (!operation || typeof operation !== 'object') continue;
      if (BODY_OPTIONAL in operation) {
        if (operation.requestBody) operation.requestBody.required = false;
        delete operation[BODY_OPTIONAL];
      }
      // @fastify/swagger's placeholder for a response schema without a description: the status's name says more.
      for (const [status, response] of Object.entries<Record<string, any>>(operation.responses ?? {})) {
        if (response.description === 'Default Response') response.description = STATUS_CODES[status] ?? 'Response';
      }
    }
  }
  return withoutUnusedSchemas(document);
}

/**
 * Drops the component schemas no operation reaches. The type provider emits every registered schema
 * twice (as read in requests, `<id>Input`, and as written in responses, `<id>`), and a reader of the
 * document should not meet a request-only schema's response twin, or the other way round.
 */
function withoutUnusedSchemas<T extends { paths?: Json; components?: { schemas?: Record<string, Json> } }>(document: T): T {
  const schemas = document.components?.schemas;
  if (!schemas) return document;
  const used = new Set<string>();
  collectRefs(document.paths, used);
  const pending = [...used];
  while (pending.length > 0) {
    const reached = new Set<string>();
    collectRefs(schemas[pending.pop()!], reached);
    for (const name of reached) {
      if (!used.has(name)) {
        used.add(name);
        pending.push(name);
      }
    }
  }
  const kept = Object.fromEntries(Object.entries(schemas).filter(([name]) => used.has(name)));
  return { ...document, components: { ...document.components, schemas: kept } };
}
