// The served OpenAPI document as the suite's source of truth: its operations, their response
// schemas compiled with ajv (JSON Schema 2020-12, as OpenAPI 3.1 uses), and the error shape.

import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

// ajv-formats is CommonJS with a default export; under Node's ESM loader it arrives wrapped.
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ??
  addFormatsModule) as unknown as (ajv: Ajv2020) => void;

export type JsonSchema = Record<string, any>;

export interface Operation {
  method: string;
  path: string;
  operationId: string;
  parameters: { in: 'path' | 'query' | 'header'; name: string; required: boolean; schema: JsonSchema }[];
  /** The JSON request body schema, when the operation takes a body. */
  body: JsonSchema | undefined;
  bodyRequired: boolean;
  security: string[];
  responses: Record<string, { schema: JsonSchema | undefined; contentTypes: string[] }>;
}

export interface OpenApi {
  document: Record<string, any>;
  operations: Operation[];
  /** Resolves a `$ref` (one level at a time). */
  resolve(schema: JsonSchema): JsonSchema;
  /** The compiled validator of an operation's response for a status, or undefined when none is documented. */
  responseValidator(operation: Operation, status: number): ValidateFunction | undefined;
}

export async function loadOpenApi(baseUrl: string): Promise<OpenApi> {
  const response = await fetch(`${baseUrl}/openapi.json`);
  if (response.status !== 200) throw new Error(`GET /openapi.json: ${response.status} ${await response.text()}`);
  const document = (await response.json()) as Record<string, any>;
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries<Record<string, any>>(document.paths)) {
    for (const [method, op] of Object.entries<Record<string, any>>(item)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
      const responses: Operation['responses'] = {};
      for (const [status, entry] of Object.entries<Record<string, any>>(op.responses ?? {})) {
        const content = entry.content ?? {};
        responses[status] = { schema: content['application/json']?.schema, contentTypes: Object.keys(content) };
      }
      operations.push({
        method: method.toUpperCase(),
        path,
        operationId: op.operationId,
        parameters: (op.parameters ?? []).map((p: any) => ({
          in: p.in,
          name: p.name,
          required: Boolean(p.required),
          schema: p.schema ?? {},
        })),
        body: op.requestBody?.content?.['application/json']?.schema,
        bodyRequired: Boolean(op.requestBody?.required),
        security: (op.security ?? []).flatMap((entry: Record<string, unknown>) => Object.keys(entry)),
        responses,
      });
    }
  }

  const ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: true });
  addFormats(ajv);
  // Component refs are document-relative (#/components/schemas/X): register the document under an id
  // and point every ref at it.
  const retarget = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(retarget);
    if (value && typeof value === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value))
        out[k] = k === '$ref' && typeof v === 'string' && v.startsWith('#/') ? `openapi.json${v}` : retarget(v);
      return out;
    }
    return value;
  };
  ajv.addSchema({ $id: 'openapi.json', components: retarget(document.components ?? {}) });
  const compiled = new Map<string, ValidateFunction | undefined>();

  return {
    document,
    operations,
    resolve(schema) {
      let current = schema;
      while (current && typeof current.$ref === 'string') {
        const name = current.$ref.replace('#/components/schemas/', '');
        current = document.components.schemas[name];
      }
      return current;
    },
    responseValidator(operation, status) {
      const key = `${operation.operationId} ${status}`;
      if (!compiled.has(key)) {
        const schema = operation.responses[String(status)]?.schema;
        compiled.set(key, schema ? ajv.compile(retarget(schema) as JsonSchema) : undefined);
      }
      return compiled.get(key);
    },
  };
}

const snakeCase = /^[a-z][a-z0-9_]*$/;
// The spec's one exception to snake_case codes: the webhook's Telegram-style `{ok: false, error: "invalid secret"}`.
const documentedNonSnakeCodes = new Set(['invalid secret']);

/** Why a 4xx body does not have the error shape (undefined when it does). SCIM routes answer RFC 7644 errors. */
export function errorShapeProblem(path: string, body: any): string | undefined {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return 'the body is not a JSON object';
  if (path.startsWith('/scim/v2')) {
    if (!Array.isArray(body.schemas) || !body.schemas.includes('urn:ietf:params:scim:api:messages:2.0:Error'))
      return 'no SCIM Error schema';
    if (typeof body.status !== 'string') return 'SCIM error without a string status';
    return undefined;
  }
  if (typeof body.error !== 'string') return '`error` is not a string';
  if (!snakeCase.test(body.error) && !documentedNonSnakeCodes.has(body.error))
    return `\`error\` "${body.error}" is not snake_case`;
  if (body.message !== undefined && typeof body.message !== 'string') return '`message` is not a string';
  if (body.details !== undefined) {
    if (!Array.isArray(body.details)) return '`details` is not an array';
    for (const detail of body.details) {
      if (typeof detail?.message !== 'string' || !Array.isArray(detail?.path)) return 'a detail lacks message or path';
    }
  }
  return undefined;
}

/** Fills `{name}` placeholders of an OpenAPI path. */
export function fillPath(path: string, values: Record<string, string>): string {
  return path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    try {
      return encodeURIComponent(values[name] ?? '');
    } catch {
      // A lone surrogate has no UTF-8 form: send the bytes a careless client would (invalid UTF-8).
      return '%ED%A0%80';
    }
  });
}
