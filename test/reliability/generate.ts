// Request generation from the OpenAPI document with fast-check: values that satisfy an operation's
// schemas (so requests reach the handlers) and the ways callers get them wrong.

import fc from 'fast-check';
import type { JsonSchema, OpenApi, Operation } from './openapi.ts';

export interface Hints {
  /** URLs that format "uri" fields take (loopback servers the test runs, and addresses the outbound guard refuses). */
  uris: string[];
  /** Real values for fields with these names (organizationId, memberIds, teamIds...). */
  byName: Record<string, string[]>;
  /** Whole values (any JSON) for fields with these names, when only such values get past the business rules. */
  fixed?: Record<string, unknown[]>;
}

const timestamps = [
  '2026-01-31T09:30:00.000Z',
  '2024-02-29T10:00Z',
  '1970-01-01T00:00:00Z',
  '2099-12-31T23:59:59.999999999Z',
];

/** Strings that have broken parsers, databases and log pipelines before. */
export const oddStrings = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\ud800',
  '\udfff',
  '\u202eevil',
  '\ufeff',
  '\u200b',
  'ﷺ',
  '𝕏𝕐ℤ',
  '👩‍👩‍👧‍👦',
  'Z̷̢͉̈́a̸͎͗l̵̙̓g̴̰͝o̵̯͘',
  "'; DROP TABLE users; --",
  '" OR 1=1 --',
  '%00',
  '%',
  '../../etc/passwd',
  '<script>alert(1)</script>',
  '${jndi:ldap://x}',
  '\\',
  '\r\n',
  '\t',
  'null',
  'undefined',
  'NaN',
  '-0',
  '1e309',
  '{}',
  '[]',
  'true',
];
export const malformedIds = [
  'emc_',
  'emc_zzzzzzzzzzzzzzzzzzzzzzzzzz',
  'emc_8zzzzzzzzzzzzzzzzzzzzzzzzz',
  'emc_01JQZ3V6B8E9F0G1H2J3K4M5N6',
  'org_01jqz3v6b8e9f0g1h2j3k4m5n6',
  'usr_01jqz3v6b8e9f0g1h2j3k4m5n6',
  'mem_01jqz3v6b8e9f0g1h2j3k4m5n6',
  'team_01jqz3v6b8e9f0g1h2j3k4m5n6',
  '01jqz3v6b8e9f0g1h2j3k4m5n6',
  'emc_01jqz3v6b8e9f0g1h2j3k4m5n',
  'emc_01jqz3v6b8e9f0g1h2j3k4m5n6x',
  '00000000-0000-0000-0000-000000000000',
  '0',
  '-1',
  'a'.repeat(600),
];
export const malformedTimestamps = [
  '2023-02-29T10:00:00Z',
  '2024-13-01T00:00:00Z',
  '2024-01-01',
  '2024-01-01T00:00:00+01:00',
  '2024-01-01T24:00:00Z',
  '2024-01-01T00:60:00Z',
  '99999-01-01T00:00:00Z',
  '2024-01-01T00:00:00.0000000000Z',
  'yesterday',
  '1700000000',
  '2024-01-01 00:00:00Z',
  '0000-00-00T00:00:00Z',
];

function deepValue(depth: number): unknown {
  let value: unknown = 'bottom';
  for (let i = 0; i < depth; i++) value = i % 2 ? [value] : { nested: value };
  return value;
}

/** A value of the wrong kind for any field. */
export const badValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom<unknown>(null, true, false, 0, -1, 1.5, 2 ** 53, -(2 ** 63), 1e308, [], {}, [null], { '': '' }),
  fc.constantFrom(...oddStrings, ...malformedIds, ...malformedTimestamps),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.integer(),
  fc.double(),
  fc.constantFrom(20, 200, 2000).map(deepValue),
  fc.constantFrom(256, 4097, 20_001, 70_000).map((n) => 'x'.repeat(n)),
  fc.jsonValue({ maxDepth: 3 }),
);

function stringArb(schema: JsonSchema, name: string | undefined, hints: Hints): fc.Arbitrary<string> {
  const known = name ? hints.byName[name] : undefined;
  if (known?.length) return fc.constantFrom(...known);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...schema.enum);
  if (schema.const !== undefined) return fc.constant(schema.const);
  const min: number = schema.minLength ?? 0;
  const max: number = schema.maxLength ?? Math.max(min, 64);
  if (schema.format === 'date-time') return fc.constantFrom(...timestamps);
  if (schema.format === 'uri') return fc.constantFrom(...hints.uris);
  if (schema.format === 'email' || name === 'email' || name === 'userName')
    return fc.emailAddress().filter((e) => e.length <= max);
  if (schema.pattern) {
    return fc.stringMatching(new RegExp(schema.pattern)).filter((s) => s.length >= min && s.length <= max);
  }
  return fc.oneof(
    { arbitrary: fc.string({ minLength: Math.max(min, 1), maxLength: Math.min(max, 40) }), weight: 6 },
    {
      arbitrary: fc.string({ unit: 'grapheme', minLength: Math.max(min, 1), maxLength: Math.min(max, 20) }),
      weight: 2,
    },
    // The exact bounds, where off-by-one errors live.
    { arbitrary: fc.constant('m'.repeat(Math.max(min, 1))), weight: 1 },
    { arbitrary: fc.constant('M'.repeat(Math.min(max, 20_000))), weight: 1 },
  );
}

/** Values that satisfy `schema` (as far as JSON Schema says; business rules still refuse many). */
export function valueArb(
  api: OpenApi,
  raw: JsonSchema | undefined,
  hints: Hints,
  name?: string,
  depth = 0,
): fc.Arbitrary<unknown> {
  const schema = raw ? api.resolve(raw) : {};
  if (!schema || depth > 6) return fc.constant(null);
  const fixed = name ? hints.fixed?.[name] : undefined;
  // Mostly the values that work, now and then anything the schema allows.
  if (fixed?.length)
    return fc.oneof(
      { arbitrary: fc.constantFrom(...fixed), weight: 4 },
      valueArb(api, raw, { ...hints, fixed: {} }, name, depth),
    );
  if (Array.isArray(schema.anyOf) || Array.isArray(schema.oneOf)) {
    const options = (schema.anyOf ?? schema.oneOf) as JsonSchema[];
    return fc.oneof(...options.map((option) => valueArb(api, option, hints, name, depth + 1)));
  }
  if (Array.isArray(schema.enum)) return fc.constantFrom(...schema.enum);
  if (schema.const !== undefined) return fc.constant(schema.const);
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'string':
      return stringArb(schema, name, hints);
    case 'integer':
      return fc.integer({
        min: schema.minimum ?? -1000,
        max: Math.min(schema.maximum ?? 1_000_000, Number.MAX_SAFE_INTEGER),
      });
    case 'number':
      return fc.double({
        min: schema.minimum ?? -1e6,
        max: schema.maximum ?? 1e6,
        noNaN: true,
        noDefaultInfinity: true,
      });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array': {
      const itemName = name?.endsWith('s') ? name.slice(0, -1) : name;
      const known = name ? hints.byName[name] : undefined;
      if (known) return fc.subarray(known);
      return fc.array(valueArb(api, schema.items, hints, itemName, depth + 1), {
        minLength: schema.minItems ?? 0,
        maxLength: Math.min(schema.maxItems ?? 3, 3),
      });
    }
    default: {
      const properties: Record<string, JsonSchema> = schema.properties ?? {};
      const keys = Object.keys(properties);
      if (keys.length === 0)
        return type === 'object'
          ? fc.dictionary(fc.string({ maxLength: 10 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 })
          : fc.jsonValue({ maxDepth: 2 });
      const model: Record<string, fc.Arbitrary<unknown>> = {};
      for (const key of keys) model[key] = valueArb(api, properties[key], hints, key, depth + 1);
      return fc.record(model, { requiredKeys: (schema.required ?? []).filter((key: string) => key in model) });
    }
  }
}

/** One way of getting a valid object wrong. */
type Mutation =
  | { kind: 'drop'; pick: number }
  | { kind: 'replace'; pick: number; value: unknown }
  | { kind: 'extra'; key: string; value: unknown }
  | { kind: 'whole'; value: unknown };

const mutationArb: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant('drop' as const), pick: fc.nat() }),
  { arbitrary: fc.record({ kind: fc.constant('replace' as const), pick: fc.nat(), value: badValue }), weight: 4 },
  fc.record({
    kind: fc.constant('extra' as const),
    key: fc.constantFrom('__proto__', 'constructor', 'id', 'organizationId', 'role', 'isAdmin', 'x'),
    value: badValue,
  }),
  fc.record({ kind: fc.constant('whole' as const), value: badValue }),
);

export function mutate(value: unknown, mutation: Mutation): unknown {
  if (mutation.kind === 'whole' || !value || typeof value !== 'object' || Array.isArray(value)) {
    return mutation.kind === 'whole' || mutation.kind === 'replace' ? (mutation as { value: unknown }).value : value;
  }
  const copy: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  const keys = Object.keys(copy);
  if (mutation.kind === 'extra') {
    Object.defineProperty(copy, mutation.key, {
      value: mutation.value,
      enumerable: true,
      configurable: true,
      writable: true,
    });
    return copy;
  }
  if (keys.length === 0) return mutation.kind === 'replace' ? mutation.value : copy;
  const key = keys[mutation.pick % keys.length]!;
  if (mutation.kind === 'drop') delete copy[key];
  else copy[key] = mutation.value;
  return copy;
}

export type Caller = 'owner' | 'admin' | 'member' | 'apiKey' | 'anonymous' | 'garbage' | 'scim' | 'webhook';

export interface GeneratedRequest {
  kind: string;
  caller: Caller;
  params: Record<string, string>;
  /** Raw query string (without `?`). */
  query: string;
  /** Raw body text and its content type, when one is sent. */
  body: string | undefined;
  contentType: string | undefined;
}

function queryString(entries: [string, unknown][]): string {
  const search = new URLSearchParams();
  for (const [key, value] of entries) {
    if (Array.isArray(value))
      for (const item of value) search.append(key, typeof item === 'string' ? item : JSON.stringify(item));
    else search.append(key, typeof value === 'string' ? value : JSON.stringify(value));
  }
  return search.toString();
}

/** Raw bodies no JSON encoder would produce. */
const rawBodies: fc.Arbitrary<{ body: string; contentType: string | undefined; label: string }> = fc.oneof(
  fc
    .constantFrom(
      '{"a":',
      '[',
      'nul',
      '\u0000',
      '{"a":1}garbage',
      '{"a":1,}',
      "{'a':1}",
      '"just a string"',
      '123',
      'null',
      '[]',
      '{"__proto__":{"isAdmin":true},"constructor":{"prototype":{"x":1}}}',
    )
    .map((body) => ({ body, contentType: 'application/json', label: 'malformed-json' })),
  fc
    .constantFrom(1000, 100_000)
    .map((n) => ({ body: '['.repeat(n) + ']'.repeat(n), contentType: 'application/json', label: `nested-array-${n}` })),
  fc.constantFrom(1000, 50_000).map((n) => ({
    body: `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`,
    contentType: 'application/json',
    label: `nested-object-${n}`,
  })),
  fc.constant({
    body: JSON.stringify({ blob: 'x'.repeat(1_100_000) }),
    contentType: 'application/json',
    label: 'over-1MiB',
  }),
  fc.constant({ body: '', contentType: 'application/json', label: 'empty-json' }),
  fc
    .constantFrom(
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/xml',
      'application/json; charset=latin1',
      'application/jsonx',
      '*/*',
    )
    .map((contentType) => ({ body: '{"name":"x"}', contentType, label: `content-type ${contentType}` })),
  fc.constant({ body: '{"name":"x"}', contentType: undefined, label: 'no-content-type' }),
  fc.constant({ body: '\ufeff{"name":"x"}', contentType: 'application/json', label: 'bom' }),
  fc.constant({ body: '{"name":"\\ud800"}', contentType: 'application/json', label: 'lone-surrogate-escape' }),
);

function callerArb(operation: Operation): fc.Arbitrary<Caller> {
  if (operation.security.includes('scimToken')) {
    return fc.oneof(
      { arbitrary: fc.constant<Caller>('scim'), weight: 8 },
      fc.constantFrom<Caller>('anonymous', 'garbage', 'owner'),
    );
  }
  if (operation.path.startsWith('/v1/webhooks/'))
    return fc.oneof(
      { arbitrary: fc.constant<Caller>('webhook'), weight: 8 },
      fc.constantFrom<Caller>('anonymous', 'garbage'),
    );
  return fc.oneof(
    { arbitrary: fc.constant<Caller>('owner'), weight: 12 },
    { arbitrary: fc.constantFrom<Caller>('admin', 'member', 'apiKey'), weight: 6 },
    { arbitrary: fc.constantFrom<Caller>('anonymous', 'garbage'), weight: 2 },
  );
}

/** Every request kind for one operation, weighted towards requests that reach the handler. */
export function requestArb(
  api: OpenApi,
  operation: Operation,
  hints: Hints,
  realParams: Record<string, string>,
): fc.Arbitrary<GeneratedRequest> {
  const pathParams = operation.parameters.filter((p) => p.in === 'path');
  const queryParams = operation.parameters.filter((p) => p.in === 'query');
  const validPath = fc.record(
    Object.fromEntries(
      pathParams.map((p) => [
        p.name,
        realParams[p.name] !== undefined
          ? fc.oneof(
              { arbitrary: fc.constant(realParams[p.name]!), weight: 4 },
              valueArb(api, p.schema, { ...hints, byName: {}, fixed: {} }, p.name).map(String),
            )
          : valueArb(api, p.schema, { ...hints, byName: {}, fixed: {} }, p.name).map(String),
      ]),
    ),
  ) as fc.Arbitrary<Record<string, string>>;
  const badPath = validPath.chain((params) => {
    if (pathParams.length === 0) return fc.constant(params);
    return fc
      .record({
        pick: fc.nat(),
        value: fc.constantFrom(...malformedIds, ...oddStrings.filter(Boolean), 'x'.repeat(2000)),
      })
      .map(({ pick, value }) => ({ ...params, [pathParams[pick % pathParams.length]!.name]: value }));
  });
  const validQuery = fc
    .tuple(
      ...queryParams.map((p) =>
        p.required
          ? valueArb(api, p.schema, hints, p.name)
          : fc.option(valueArb(api, p.schema, hints, p.name), { nil: undefined }),
      ),
    )
    .map((values) =>
      queryString(
        queryParams.flatMap((p, i) => (values[i] === undefined ? [] : [[p.name, values[i]] as [string, unknown]])),
      ),
    );
  const badQuery = fc.oneof(
    queryParams.length > 0
      ? fc
          .record({ pick: fc.nat(), value: badValue })
          .map(({ pick, value }) => queryString([[queryParams[pick % queryParams.length]!.name, value]]))
      : fc.constant(''),
    fc.constantFrom(
      'limit=0',
      'limit=101',
      'limit=-1',
      'limit=1e3',
      'limit=abc',
      'cursor=%FF%FE',
      'cursor=eyJhZnRlciI6MX0',
      `cursor=${'A'.repeat(5000)}`,
      'a=%',
      'limit=1&limit=2',
      `q=${'q'.repeat(1001)}`,
      'startIndex=-5&count=100000',
      'filter=userName%20eq',
      `filter=${encodeURIComponent('userName eq "x" or ((((((((((')}`,
      'status=nonsense',
    ),
  );
  const hasBody = operation.body !== undefined;
  const validBody = hasBody ? valueArb(api, operation.body, hints, '$body') : fc.constant(undefined);
  const json = (value: unknown) => (value === undefined ? undefined : JSON.stringify(value));
  const contentType = operation.path.startsWith('/scim/v2') ? 'application/scim+json' : 'application/json';

  const build = (
    kind: string,
    caller: Caller,
    params: Record<string, string>,
    query: string,
    body: string | undefined,
    type = contentType,
  ): GeneratedRequest => ({ kind, caller, params, query, body, contentType: body === undefined ? undefined : type });

  const kinds: fc.WeightedArbitrary<GeneratedRequest>[] = [
    {
      weight: 10,
      arbitrary: fc
        .tuple(callerArb(operation), validPath, validQuery, validBody)
        .map(([c, p, q, b]) => build('valid', c, p, q, json(b))),
    },
    {
      weight: 2,
      arbitrary: fc
        .tuple(callerArb(operation), badPath, validQuery, validBody)
        .map(([c, p, q, b]) => build('bad-path', c, p, q, json(b))),
    },
    {
      weight: 2,
      arbitrary: fc
        .tuple(callerArb(operation), validPath, badQuery, validBody)
        .map(([c, p, q, b]) => build('bad-query', c, p, q, json(b))),
    },
  ];
  if (hasBody) {
    kinds.push(
      {
        weight: 8,
        arbitrary: fc
          .tuple(callerArb(operation), validPath, validQuery, validBody, mutationArb)
          .map(([c, p, q, b, m]) => build(`mutated-${m.kind}`, c, p, q, json(mutate(b, m)))),
      },
      {
        weight: 3,
        arbitrary: fc
          .tuple(callerArb(operation), validPath, rawBodies)
          .map(([c, p, raw]) => build(`raw ${raw.label}`, c, p, '', raw.body, raw.contentType as string)),
      },
      {
        weight: 1,
        arbitrary: fc.tuple(callerArb(operation), validPath).map(([c, p]) => build('no-body', c, p, '', undefined)),
      },
    );
  } else {
    // An operation without a body still gets one now and then: it must be ignored or refused, not crash.
    kinds.push({
      weight: 1,
      arbitrary: fc
        .tuple(callerArb(operation), validPath, rawBodies)
        .map(([c, p, raw]) => build(`unexpected-body ${raw.label}`, c, p, '', raw.body, raw.contentType as string)),
    });
  }
  return fc.oneof(...kinds);
}
