// `attributes` and `excludedAttributes` (RFC 7644 3.9): which attributes of a resource are returned.
// A name is an attribute path ("name.givenName"), optionally fully qualified by its schema URN
// ("urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:employeeNumber", 3.10). URNs contain
// dots and colons of their own, so the URN is matched against the known schemas before the path is
// split; an extension's attributes live under its URN in the resource, so its path starts there.
import { resourceSchemas, type ResourceKind } from './schema.ts';

type Doc = Record<string, unknown>;

/** A parsed name: the lowercased keys from the resource's top level down, e.g. ["name", "givenname"]. */
type Path = string[];

export interface ProjectionQuery {
  attributes?: string | undefined;
  excludedAttributes?: string | undefined;
}

// Returned whatever the query asks (id and schemas are "returned: always"; meta is kept for clients
// that read the location and version of what they asked for).
const ALWAYS = new Set(['id', 'schemas', 'meta']);

function isObject(value: unknown): value is Doc {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function parseName(kind: ResourceKind, raw: string): Path {
  const name = raw.trim().toLowerCase();
  const { core, extensions } = resourceSchemas[kind];
  for (const schema of [core, ...extensions]) {
    const urn = schema.id.toLowerCase();
    const prefix = schema === core ? [] : [urn];
    if (name === urn) return prefix;
    if (name.startsWith(`${urn}:`)) return [...prefix, ...name.slice(urn.length + 1).split('.')];
  }
  return name.split('.');
}

function parseNames(kind: ResourceKind, list: string | undefined): Path[] {
  return (list ?? '')
    .split(',')
    .filter((name) => name.trim() !== '')
    .map((name) => parseName(kind, name))
    .filter((path) => path.length > 0);
}

/** The paths that continue below `key`, or 'all' when one of them ends at it. */
function below(paths: Path[], key: string): Path[] | 'all' {
  const rest: Path[] = [];
  for (const path of paths) {
    if (path[0] !== key.toLowerCase()) continue;
    if (path.length === 1) return 'all';
    rest.push(path.slice(1));
  }
  return rest;
}

function isEmpty(value: unknown): boolean {
  return isObject(value) && Object.keys(value).length === 0;
}

/** `value` with only the sub-attributes `paths` name (in every element of a multi-valued one); undefined when none is left. */
function keep(value: unknown, paths: Path[]): unknown {
  if (Array.isArray(value)) {
    const elements = value.map((element) => keep(element, paths)).filter((element) => element !== undefined);
    return elements.length > 0 ? elements : undefined;
  }
  if (!isObject(value)) return undefined; // a sub-attribute of a simple value names nothing
  const out: Doc = {};
  for (const [key, item] of Object.entries(value)) {
    const rest = below(paths, key);
    if (rest === 'all') out[key] = item;
    else if (rest.length > 0) {
      const kept = keep(item, rest);
      if (kept !== undefined) out[key] = kept;
    }
  }
  return isEmpty(out) ? undefined : out;
}

/** `value` without the sub-attributes `paths` name. */
function drop(value: unknown, paths: Path[]): unknown {
  if (Array.isArray(value)) return value.map((element) => drop(element, paths));
  if (!isObject(value)) return value;
  const out: Doc = {};
  for (const [key, item] of Object.entries(value)) {
    const rest = below(paths, key);
    if (rest === 'all') continue;
    out[key] = rest.length > 0 ? drop(item, rest) : item;
  }
  return out;
}

/** The resource as `attributes` / `excludedAttributes` ask for it (`attributes` wins when both are given). */
export function project(kind: ResourceKind, resource: Doc, query: ProjectionQuery): Doc {
  const include = parseNames(kind, query.attributes);
  const exclude = parseNames(kind, query.excludedAttributes);
  if (include.length === 0 && exclude.length === 0) return resource;
  const out: Doc = {};
  for (const [key, value] of Object.entries(resource)) {
    if (ALWAYS.has(key.toLowerCase())) {
      out[key] = value;
      continue;
    }
    if (include.length > 0) {
      const rest = below(include, key);
      const kept = rest === 'all' ? value : rest.length > 0 ? keep(value, rest) : undefined;
      if (kept !== undefined) out[key] = kept;
    } else {
      const rest = below(exclude, key);
      if (rest !== 'all') out[key] = rest.length > 0 ? drop(value, rest) : value;
    }
  }
  return out;
}

/** Whether the query leaves out the top-level attribute `name` (so it need not be loaded at all). */
export function leavesOut(kind: ResourceKind, query: ProjectionQuery, name: string): boolean {
  const lower = name.toLowerCase();
  const include = parseNames(kind, query.attributes);
  if (include.length > 0) return !include.some((path) => path[0] === lower);
  return parseNames(kind, query.excludedAttributes).some((path) => path.length === 1 && path[0] === lower);
}
