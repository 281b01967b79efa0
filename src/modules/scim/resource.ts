// Bringing a client-sent User or Group into canonical form before it is validated and stored:
// attribute names spelled as the schema spells them, "True"/"False" strings made booleans,
// server-owned attributes (id, meta, schemas, User.groups), write-only ones (password) and
// attributes of no schema dropped.
import { ScimError } from './errors.ts';
import {
  coreAttributes,
  findAttribute,
  findSchema,
  resourceSchemas,
  type AttributeDef,
  type ResourceKind,
} from './schema.ts';

type Doc = Record<string, unknown>;

const SERVER_OWNED = new Set(['id', 'meta', 'schemas']);

function isObject(value: unknown): value is Doc {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

export function toBoolean(value: unknown, name: string): boolean {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'string') {
    const lower = value.trim().toLowerCase();
    if (lower === 'true') return true;
    if (lower === 'false') return false;
  }
  throw new ScimError(400, `${name} must be a boolean`, 'invalidValue');
}

function normalizeValue(def: AttributeDef, value: unknown, name: string): unknown {
  if (def.multiValued) {
    const list = Array.isArray(value) ? value : [value];
    return list.filter((item) => item !== null && item !== undefined).map((item) => normalizeSingle(def, item, name));
  }
  return normalizeSingle(def, value, name);
}

function normalizeSingle(def: AttributeDef, value: unknown, name: string): unknown {
  if (def.type === 'boolean') return toBoolean(value, name);
  if (def.type === 'complex' && def.subAttributes) {
    if (!isObject(value)) {
      // A bare string for a complex attribute that has a value is that value (Entra ID sends the
      // manager that way); for one without (name), there is nothing it could mean.
      if (typeof value === 'string' && findAttribute(def.subAttributes, 'value')) return { value };
      throw new ScimError(400, `${name} must be an object`, 'invalidValue');
    }
    return normalizeAttributes(value, def.subAttributes, name, false);
  }
  return value;
}

function normalizeAttributes(input: Doc, defs: AttributeDef[], prefix: string, dropReadOnly: boolean): Doc {
  const out: Doc = {};
  for (const [key, value] of Object.entries(input)) {
    const def = findAttribute(defs, key);
    const name = prefix ? `${prefix}.${def?.name ?? key}` : (def?.name ?? key);
    if (value === null || value === undefined) continue; // null means "unassigned" (RFC 7644 3.5.1)
    // Unknown attributes are ignored, as a service provider may (RFC 7644 3.3): kept, they would be
    // echoed back as if this server knew what they mean.
    if (!def) continue;
    if (def.mutability === 'writeOnly') continue; // never stored, never returned
    if (dropReadOnly && def.mutability === 'readOnly') continue;
    out[def.name] = normalizeValue(def, value, name);
  }
  return out;
}

/** Canonical form of a client-sent resource body (POST/PUT) or of a PATCH result. */
export function normalizeResource(kind: ResourceKind, input: unknown): Doc {
  if (!isObject(input)) throw new ScimError(400, 'the request body must be a JSON object', 'invalidSyntax');
  const { core } = resourceSchemas[kind];
  const defs = coreAttributes(kind);
  const top: Doc = {};
  const extensions: Doc = {};
  for (const [key, value] of Object.entries(input)) {
    if (SERVER_OWNED.has(key.toLowerCase())) continue;
    const schema = /^urn:/i.test(key) ? findSchema(kind, key) : undefined;
    if (schema) {
      if (!isObject(value)) continue;
      if (schema.id === core.id) Object.assign(top, normalizeAttributes(value, defs, '', true));
      else extensions[schema.id] = normalizeAttributes(value, schema.attributes, schema.id, true);
      continue;
    }
    Object.assign(top, normalizeAttributes({ [key]: value }, defs, '', true));
  }
  const result: Doc = {
    schemas: [core.id, ...Object.keys(extensions).filter((urn) => Object.keys(extensions[urn] as Doc).length > 0)],
  };
  Object.assign(result, top);
  for (const [urn, value] of Object.entries(extensions)) if (Object.keys(value as Doc).length > 0) result[urn] = value;
  return result;
}

/** The e-mail address a user should be known by in the organization: primary, then work, then any, then userName. */
export function pickEmail(user: Doc): string | null {
  const emails = Array.isArray(user.emails) ? (user.emails as unknown[]).filter(isObject) : [];
  const withValue = emails.filter((e) => typeof e.value === 'string' && EMAIL.test(e.value as string));
  const chosen =
    withValue.find((e) => e.primary === true) ??
    withValue.find((e) => String(e.type).toLowerCase() === 'work') ??
    withValue[0];
  if (chosen) return (chosen.value as string).trim().toLowerCase();
  if (typeof user.userName === 'string' && EMAIL.test(user.userName.trim())) return user.userName.trim().toLowerCase();
  return null;
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** A display name for the member record: displayName, then given + family name, then the formatted name. */
export function pickName(user: Doc): string | null {
  if (typeof user.displayName === 'string' && user.displayName.trim()) return user.displayName.trim();
  const name = isObject(user.name) ? user.name : {};
  const parts = [name.givenName, name.familyName].filter((p): p is string => typeof p === 'string' && p.trim() !== '');
  if (parts.length > 0) return parts.join(' ');
  if (typeof name.formatted === 'string' && name.formatted.trim()) return name.formatted.trim();
  return null;
}
