// The OpenAPI document's finishing touches, applied to what @fastify/swagger and the Zod type
// provider generate.

import { STATUS_CODES } from 'node:http';
import { jsonSchemaTransform } from 'fastify-type-provider-zod';
import { globalRegistry } from 'zod';
import { ERROR_CODES } from './error-catalog.ts';
import { FRESH_AUTHENTICATION } from './auth.ts';
import { httpErrors } from './error-codes.ts';
import { NO_STORE, noStoreHeaderDocs } from './no-store.ts';

type Json = unknown;
/** A JSON object of the document being rewritten: its keys are whatever the OpenAPI schema allows. */
// biome-ignore lint/suspicious/noExplicitAny: walks arbitrary OpenAPI JSON, checked by the document's own validation test
type JsonObject = Record<string, any>;

const schemaRefPrefix = '#/components/schemas/';

function collectRefs(value: Json, into: Set<string>): void {
  if (Array.isArray(value)) {
    for (const item of value) collectRefs(item, into);
  } else if (value && typeof value === 'object') {
    for (const [key, child] of Object.entries(value)) {
      if (key === '$ref' && typeof child === 'string' && child.startsWith(schemaRefPrefix))
        into.add(child.slice(schemaRefPrefix.length));
      else collectRefs(child, into);
    }
  }
}

/**
 * A route schema flag for a body that may be left out (the route fills in its defaults):
 * `{ [BODY_OPTIONAL]: true }`. @fastify/swagger always writes `requestBody.required: true`.
 */
export const BODY_OPTIONAL = 'x-body-optional';

/**
 * The type provider's transform of a route's schema, keeping the codes each error response declares
 * (errorResponse, http/error-catalog.ts): the Zod-to-JSON step keeps no extension of a schema it writes as a
 * `$ref`, so they are read from the Zod schemas here and handed on beside the JSON for finishDocument.
 */
export const routeSchemaTransform: typeof jsonSchemaTransform = (route) => {
  const transformed = jsonSchemaTransform(route);
  const responses = (route.schema as { response?: Record<string, unknown> } | undefined)?.response ?? {};
  const written = (transformed.schema as { response?: Record<string, Record<string, unknown>> }).response ?? {};
  for (const [status, schema] of Object.entries(responses)) {
    const codes = schema && typeof schema === 'object' ? globalRegistry.get(schema as never)?.[ERROR_CODES] : undefined;
    const json = written[status];
    if (!codes || !json) continue;
    // The media type object carries them (an extension is allowed there); finishDocument makes them the enum.
    written[status] = {
      description: json.description,
      content: { 'application/json': { schema: json, [ERROR_CODES]: codes } },
    };
  }
  return transformed;
};

/** What the generated document needs before it is served. */
export function finishDocument<T extends { paths?: Json; components?: { schemas?: Record<string, Json> } }>(
  document: T,
): T {
  for (const item of Object.values((document.paths ?? {}) as Record<string, Record<string, JsonObject>>)) {
    for (const operation of Object.values(item)) {
      if (!operation || typeof operation !== 'object') continue;
      if (BODY_OPTIONAL in operation) {
        if (operation.requestBody) operation.requestBody.required = false;
        delete operation[BODY_OPTIONAL];
      }
      // An operation behind no scheme says so: `security: []` is "no authentication", not "not stated".
      if (!operation.security) operation.security = [];
      // @fastify/swagger's placeholder for a response schema without a description: the status's name says more.
      for (const [status, response] of Object.entries<JsonObject>(operation.responses ?? {})) {
        if (response.description === 'Default Response') response.description = STATUS_CODES[status] ?? 'Response';
        if (Number(status) >= 400) enumerateErrorCodes(response, status, operation);
        if (operation[NO_STORE] && Number(status) < 400)
          response.headers = { ...response.headers, ...noStoreHeaderDocs };
      }
    }
  }
  const finished = withoutUnusedSchemas(document);
  withoutRequestDefaults(finished);
  return finished;
}

/**
 * Gives an error response's `error` the enum of the codes its route declared (routeSchemaTransform), so
 * a generated client can narrow on them: the shared `Error` schema becomes `allOf: [Error, {error: enum}]`;
 * an inline error schema gets the enum on its own `error`. A privileged operation's 403 adds `reauth`.
 */
function enumerateErrorCodes(response: JsonObject, status: string, operation: JsonObject): void {
  for (const media of Object.values<JsonObject>(response.content ?? {})) {
    const declared: string[] | undefined = media[ERROR_CODES];
    delete media[ERROR_CODES];
    const schema = media.schema;
    if (!schema || !declared) continue;
    const codes =
      status === '403' && operation[FRESH_AUTHENTICATION] && declared.includes(httpErrors.forbidden.code)
        ? [...declared, httpErrors.reauth.code]
        : declared;
    if (schema.$ref === `${schemaRefPrefix}Error`) {
      media.schema = {
        allOf: [
          { $ref: schema.$ref },
          { type: 'object', required: ['error'], properties: { error: { type: 'string', enum: codes } } },
        ],
      };
    } else {
      const error = schema.properties?.error;
      if (error && error.type === 'string' && !('const' in error)) error.enum = codes;
    }
  }
}

/**
 * Request bodies: a property's `default` moves into its description. It is what the server fills in
 * when the property is left out, but client generators (openapi-typescript's defaultNonNullable, on by
 * default) read a default as "always present" and would make the caller send it.
 */
function withoutRequestDefaults(document: { paths?: Json; components?: { schemas?: Record<string, Json> } }): void {
  const schemas = document.components?.schemas ?? {};
  const bodies: Json[] = [];
  for (const item of Object.values((document.paths ?? {}) as Record<string, Record<string, JsonObject>>)) {
    for (const operation of Object.values(item)) {
      for (const media of Object.values<JsonObject>(operation?.requestBody?.content ?? {})) bodies.push(media.schema);
    }
  }
  const named = new Set<string>();
  collectRefs(bodies, named);
  const pending = [...named];
  while (pending.length > 0) {
    const reached = new Set<string>();
    collectRefs(schemas[pending.pop()!], reached);
    for (const name of reached) {
      if (named.has(name)) continue;
      named.add(name);
      pending.push(name);
    }
  }
  const responses = new Set<string>();
  collectRefs(
    document.paths &&
      Object.values(document.paths as Record<string, JsonObject>).flatMap((item) =>
        Object.values(item).map((operation) => operation?.responses),
      ),
    responses,
  );
  for (const body of bodies) moveDefaults(body);
  // A component a response uses too keeps its defaults (there they are true: the value is always sent).
  for (const name of named) if (!responses.has(name)) moveDefaults(schemas[name]);
}

function moveDefaults(schema: Json): void {
  if (Array.isArray(schema)) {
    for (const item of schema) moveDefaults(item);
    return;
  }
  if (!schema || typeof schema !== 'object') return;
  const object = schema as JsonObject;
  for (const [key, child] of Object.entries(object)) {
    if (key === 'properties' && child && typeof child === 'object') {
      for (const property of Object.values<JsonObject>(child)) {
        if (property && typeof property === 'object' && 'default' in property) {
          // Said once: a description that already gives the default keeps its own words.
          const note = `Default when left out: \`${JSON.stringify(property.default)}\`.`;
          if (!/\bdefault\b/i.test(String(property.description ?? ''))) {
            property.description = property.description
              ? `${String(property.description).replace(/\.?$/, '.')} ${note}`
              : note;
          }
          delete property.default;
        }
      }
    }
    if (key !== 'example' && key !== 'examples') moveDefaults(child);
  }
}

/**
 * Drops the component schemas no operation reaches. The type provider emits every registered schema
 * twice (as read in requests, `<id>Input`, and as written in responses, `<id>`), and a reader of the
 * document should not meet a request-only schema's response twin, or the other way round.
 */
function withoutUnusedSchemas<T extends { paths?: Json; components?: { schemas?: Record<string, Json> } }>(
  document: T,
): T {
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
