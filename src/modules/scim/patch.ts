// SCIM PATCH (RFC 7644 3.5.2) applied to a resource document, the way identity providers send it:
// Entra ID capitalises op names ("Replace"), sends booleans as "True"/"False" and uses filtered
// paths (emails[type eq "work"].value) even when no such element exists yet; Okta sends path-less
// "replace" with a value object (which may include the read-only id) and removes group members
// with members[value eq "..."]. The result is a new document; the caller validates and stores it.
import { ScimError } from './errors.ts';
import { matchesFilter, parsePatchPath, type Filter, type PatchPath } from './filter.ts';
import {
  coreAttributes,
  findAttribute,
  findSchema,
  resourceSchemas,
  type AttributeDef,
  type ResourceKind,
} from './schema.ts';

export interface PatchOperation {
  op: string;
  path?: string;
  value?: unknown;
}

type Doc = Record<string, unknown>;
type OpName = 'add' | 'replace' | 'remove';

const READ_ONLY_TOP = new Set(['id', 'meta', 'schemas']);

function isObject(value: unknown): value is Doc {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function clone<T>(value: T): T {
  return structuredClone(value);
}

/** The key under which `name` lives in `container`: the existing spelling, else the schema's, else as given. */
function keyFor(container: Doc, name: string, def: AttributeDef | undefined): string {
  const lower = name.toLowerCase();
  for (const key of Object.keys(container)) if (key.toLowerCase() === lower) return key;
  return def?.name ?? name;
}

function sameElement(a: unknown, b: unknown): boolean {
  if (isObject(a) && isObject(b) && 'value' in a && 'value' in b) return a.value === b.value;
  return JSON.stringify(a) === JSON.stringify(b);
}

function truthy(value: unknown): boolean {
  return value === true || (typeof value === 'string' && value.toLowerCase() === 'true');
}

/** After adding elements flagged primary, no other element may stay primary (RFC 7643 2.4). */
function keepSinglePrimary(list: unknown[], added: unknown[]): void {
  const newPrimary = added.find((element) => isObject(element) && truthy(element.primary));
  if (!newPrimary) return;
  for (const element of list)
    if (element !== newPrimary && isObject(element) && truthy(element.primary)) element.primary = false;
}

/** Elements that match an `a eq x and b eq y` filter can be created from it; anything else cannot. */
function elementFromFilter(filter: Filter): Doc | null {
  if (filter.type === 'compare' && filter.op === 'eq' && !filter.attr.sub && !filter.attr.uri)
    return { [filter.attr.name]: filter.value };
  if (filter.type === 'and') {
    const left = elementFromFilter(filter.left);
    const right = elementFromFilter(filter.right);
    return left && right ? { ...left, ...right } : null;
  }
  return null;
}

interface Target {
  container: Doc | undefined;
  defs: AttributeDef[];
  /** set when the path names an extension schema: the container must be created on write */
  extensionUrn?: string;
}

class Patcher {
  readonly kind: ResourceKind;
  readonly doc: Doc;
  constructor(kind: ResourceKind, doc: Doc) {
    this.kind = kind;
    this.doc = doc;
  }

  apply(operation: PatchOperation): void {
    if (!isObject(operation)) throw new ScimError(400, 'each operation must be an object', 'invalidSyntax');
    const op = typeof operation.op === 'string' ? operation.op.toLowerCase() : '';
    if (op !== 'add' && op !== 'replace' && op !== 'remove') {
      throw new ScimError(
        400,
        `unknown operation "${String(operation.op)}"; expected add, replace or remove`,
        'invalidSyntax',
      );
    }
    const path = typeof operation.path === 'string' && operation.path.trim() !== '' ? operation.path : undefined;
    if (operation.path !== undefined && operation.path !== null && typeof operation.path !== 'string') {
      throw new ScimError(400, 'path must be a string', 'invalidPath');
    }
    if (path === undefined) {
      if (op === 'remove') throw new ScimError(400, 'a remove operation needs a path', 'noTarget');
      if (!isObject(operation.value))
        throw new ScimError(400, `a ${op} operation without a path needs an object value`, 'invalidValue');
      this.applyValueObject(op, operation.value, undefined);
      return;
    }
    if (op !== 'remove' && operation.value === undefined)
      throw new ScimError(400, `a ${op} operation needs a value`, 'invalidValue');
    this.applyPath(op, parsePatchPath(path), operation.value, path, true);
  }

  /** A path-less add/replace: every key of the value is a path of its own (RFC 7644 3.5.2.1/.3). */
  applyValueObject(op: OpName, value: Doc, uri: string | undefined): void {
    for (const [key, item] of Object.entries(value)) {
      const schema = !uri && /^urn:/i.test(key) ? findSchema(this.kind, key) : undefined;
      if (schema && isObject(item)) {
        if (schema.id === resourceSchemas[this.kind].core.id) this.applyValueObject(op, item, undefined);
        else this.applyValueObject(op, item, schema.id);
        continue;
      }
      // Read-only attributes in a value object are ignored: Okta echoes the id back on every group PATCH.
      if (!uri && READ_ONLY_TOP.has(key.toLowerCase())) continue;
      const pathText = uri ? `${uri}:${key}` : key;
      this.applyPath(op, parsePatchPath(pathText), item, pathText, false);
    }
  }

  resolveTarget(path: PatchPath, create: boolean): Target {
    const uri = path.attr.uri;
    if (!uri) return { container: this.doc, defs: coreAttributes(this.kind) };
    const schema = findSchema(this.kind, uri);
    if (!schema) throw new ScimError(400, `unknown schema "${uri}"`, 'invalidPath');
    if (schema.id === resourceSchemas[this.kind].core.id)
      return { container: this.doc, defs: coreAttributes(this.kind) };
    const key = keyFor(this.doc, schema.id, undefined);
    let container = this.doc[key];
    if (!isObject(container)) {
      if (!create) return { container: undefined, defs: schema.attributes, extensionUrn: schema.id };
      container = {};
      this.doc[key] = container;
      const schemas = Array.isArray(this.doc.schemas) ? (this.doc.schemas as unknown[]) : [];
      if (!schemas.some((s) => typeof s === 'string' && s.toLowerCase() === schema.id.toLowerCase()))
        schemas.push(schema.id);
      this.doc.schemas = schemas;
    }
    return { container: container as Doc, defs: schema.attributes, extensionUrn: schema.id };
  }

  applyPath(op: OpName, path: PatchPath, value: unknown, text: string, explicit: boolean): void {
    const target = this.resolveTarget(path, op !== 'remove');
    const def = findAttribute(target.defs, path.attr.name);
    if (def && def.mutability === 'readOnly') {
      if (!explicit) return;
      throw new ScimError(400, `"${text}" is read-only`, 'mutability');
    }
    const container = target.container;
    if (!container) return; // removing from an extension that is not there: nothing to do
    const key = keyFor(container, path.attr.name, def);
    const multi = def ? def.multiValued : Array.isArray(container[key]) || Array.isArray(value);

    if (path.filter) {
      if (!multi) throw new ScimError(400, `"${text}" filters an attribute that is not multi-valued`, 'invalidPath');
      const subDef = path.subAfterFilter ? findAttribute(def?.subAttributes, path.subAfterFilter) : undefined;
      this.applyFiltered(op, container, key, path.filter, path.subAfterFilter, subDef, value, text);
      return;
    }

    if (path.attr.sub) {
      const subDef = findAttribute(def?.subAttributes, path.attr.sub);
      if (multi) {
        // emails.value with no filter addresses every element's sub-attribute.
        this.applyFiltered(op, container, key, null, path.attr.sub, subDef, value, text);
        return;
      }
      const current = container[key];
      if (op === 'remove') {
        if (isObject(current)) delete current[keyFor(current, path.attr.sub, subDef)];
        return;
      }
      const parent = isObject(current) ? current : {};
      parent[keyFor(parent, path.attr.sub, subDef)] = clone(value);
      container[key] = parent;
      return;
    }

    if (op === 'remove') {
      // Entra ID removes group members with path "members" and the members to drop as the value.
      if (multi && Array.isArray(value) && Array.isArray(container[key])) {
        container[key] = (container[key] as unknown[]).filter((element) => !value.some((v) => sameElement(element, v)));
      } else {
        delete container[key];
      }
      return;
    }

    if (multi) {
      const incoming = (Array.isArray(value) ? value : [value]).map(clone);
      if (op === 'replace') {
        container[key] = incoming;
        keepSinglePrimary(incoming, incoming);
        return;
      }
      const list = Array.isArray(container[key]) ? (container[key] as unknown[]) : [];
      const added: unknown[] = [];
      for (const element of incoming) {
        if (!list.some((existing) => sameElement(existing, element))) {
          list.push(element);
          added.push(element);
        }
      }
      container[key] = list;
      keepSinglePrimary(list, added);
      return;
    }

    if (def?.type === 'complex') {
      // Entra ID sends the enterprise manager as a bare id string; a complex attribute without a value
      // sub-attribute (name) has no place for one.
      const incoming = typeof value === 'string' && findAttribute(def.subAttributes, 'value') ? { value } : value;
      if (!isObject(incoming)) {
        if (incoming === null) {
          delete container[key];
          return;
        }
        throw new ScimError(400, `"${text}" needs an object value`, 'invalidValue');
      }
      // Replacing or adding to a complex attribute sets the given sub-attributes and keeps the others.
      const current = isObject(container[key]) ? (container[key] as Doc) : {};
      for (const [subKey, subValue] of Object.entries(incoming)) {
        current[keyFor(current, subKey, findAttribute(def.subAttributes, subKey))] = clone(subValue);
      }
      container[key] = current;
      return;
    }
    if (value === null) {
      delete container[key];
      return;
    }
    container[key] = clone(value);
  }

  applyFiltered(
    op: OpName,
    container: Doc,
    key: string,
    filter: Filter | null,
    sub: string | undefined,
    subDef: AttributeDef | undefined,
    value: unknown,
    text: string,
  ): void {
    const list = Array.isArray(container[key]) ? (container[key] as unknown[]) : [];
    const matches = list.filter((element) => (filter ? matchesFilter(element, filter) : true));
    if (op === 'remove') {
      if (sub) {
        for (const element of matches) if (isObject(element)) delete element[keyFor(element, sub, subDef)];
      } else {
        container[key] = list.filter((element) => !matches.includes(element));
      }
      return;
    }
    if (matches.length === 0) {
      // Entra ID "adds" emails[type eq "work"].value on a user without a work email: create it.
      const seed = filter ? elementFromFilter(filter) : {};
      // A filter on the very sub-attribute being set (emails[value eq "a"].value = "b") names a value that is not there.
      const contradicts = seed && sub && Object.keys(seed).some((k) => k.toLowerCase() === sub.toLowerCase());
      if (!seed || contradicts) throw new ScimError(400, `no value matches "${text}"`, 'noTarget');
      const element: Doc = { ...seed };
      if (sub) element[subDef?.name ?? sub] = clone(value);
      else if (isObject(value)) Object.assign(element, clone(value));
      else throw new ScimError(400, `"${text}" needs an object value`, 'invalidValue');
      list.push(element);
      container[key] = list;
      keepSinglePrimary(list, [element]);
      return;
    }
    for (const element of matches) {
      if (!isObject(element)) continue;
      if (sub) {
        element[keyFor(element, sub, subDef)] = clone(value);
      } else if (isObject(value)) {
        if (op === 'replace') for (const k of Object.keys(element)) delete element[k];
        Object.assign(element, clone(value));
      } else {
        throw new ScimError(400, `"${text}" needs an object value`, 'invalidValue');
      }
    }
    keepSinglePrimary(
      list,
      sub && sub.toLowerCase() === 'primary' ? matches : matches.filter((m) => !sub && isObject(m)),
    );
  }
}

/** Applies PATCH operations to a copy of `resource` and returns the copy. */
export function applyPatch(kind: ResourceKind, resource: Doc, operations: readonly PatchOperation[]): Doc {
  const patcher = new Patcher(kind, clone(resource));
  for (const operation of operations) patcher.apply(operation);
  return patcher.doc;
}
