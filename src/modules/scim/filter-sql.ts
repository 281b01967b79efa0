// SCIM filters (filter.ts parses them) as SQL conditions over the scim_users and scim_groups columns
// and their JSON resources: which attribute is which column, and how each operator compares.
import { ScimError } from './errors.ts';
import type { AttrPath, Filter } from './filter.ts';

type Column = { sql: string; kind: 'text' | 'exact' | 'boolean' };
type Multi = { multi: string; where?: string; element: (attr: AttrPath) => Column | null };
export type Resolver = (attr: AttrPath) => Column | Multi | null;

/** Compiles a parsed SCIM filter to a SQL condition with numbered parameters appended to `params`. */
export function compileFilter(filter: Filter, resolve: Resolver, params: unknown[]): string {
  const param = (value: unknown) => {
    params.push(value);
    return `$${params.length}`;
  };
  const compare = (column: Column, op: string, value: unknown): string => {
    if (op === 'pr')
      return column.kind === 'boolean'
        ? `${column.sql} IS NOT NULL`
        : `(${column.sql} IS NOT NULL AND ${column.sql} <> '')`;
    if (value === null) {
      if (op === 'eq') return `${column.sql} IS NULL`;
      if (op === 'ne') return `${column.sql} IS NOT NULL`;
      throw new ScimError(400, `operator "${op}" cannot compare with null`, 'invalidFilter');
    }
    if (column.kind === 'boolean') {
      if (typeof value !== 'boolean' || (op !== 'eq' && op !== 'ne'))
        throw new ScimError(400, 'boolean attributes support eq and ne with true or false', 'invalidFilter');
      return op === 'eq' ? `${column.sql} = ${param(value)}` : `${column.sql} IS DISTINCT FROM ${param(value)}`;
    }
    if (typeof value !== 'string')
      throw new ScimError(400, 'string attributes are compared with a quoted string', 'invalidFilter');
    const col = column.kind === 'text' ? `lower(${column.sql})` : column.sql;
    const val = column.kind === 'text' ? `lower(${param(value)})` : param(value);
    switch (op) {
      case 'eq':
        return `${col} = ${val}`;
      case 'ne':
        return `(${column.sql} IS NULL OR ${col} <> ${val})`;
      case 'co':
        return `strpos(${col}, ${val}) > 0`;
      case 'sw':
        return `starts_with(${col}, ${val})`;
      case 'ew':
        return `right(${col}, length(${val})) = ${val}`;
      default:
        throw new ScimError(
          400,
          `operator "${op}" is not supported here; use eq, ne, co, sw, ew or pr`,
          'invalidFilter',
        );
    }
  };
  const unsupported = (attr: AttrPath) =>
    new ScimError(
      400,
      `filtering on "${[attr.name, attr.sub].filter(Boolean).join('.')}" is not supported`,
      'invalidFilter',
    );

  const walk = (node: Filter, resolver: Resolver): string => {
    switch (node.type) {
      case 'and':
      case 'or':
        return `(${walk(node.left, resolver)} ${node.type.toUpperCase()} ${walk(node.right, resolver)})`;
      case 'not':
        return `(NOT COALESCE(${walk(node.filter, resolver)}, false))`;
      case 'present':
      case 'compare': {
        const op = node.type === 'present' ? 'pr' : node.op;
        const value = node.type === 'present' ? undefined : node.value;
        const target = resolver(node.attr);
        if (!target) throw unsupported(node.attr);
        if ('multi' in target) {
          // emails.value eq "x": any element matches
          const column = target.element({ name: node.attr.sub ?? 'value' });
          if (!column) throw unsupported(node.attr);
          return `EXISTS (SELECT 1 FROM ${target.multi} WHERE ${target.where ? `${target.where} AND ` : ''}${compare(column, op, value)})`;
        }
        return compare(target, op, value);
      }
      case 'valuePath': {
        const target = resolver({ name: node.attr.name, ...(node.attr.uri ? { uri: node.attr.uri } : {}) });
        if (!target || !('multi' in target)) throw unsupported(node.attr);
        const inner: Resolver = (attr) => (attr.sub || attr.uri ? null : target.element(attr));
        return `EXISTS (SELECT 1 FROM ${target.multi} WHERE ${target.where ? `${target.where} AND ` : ''}${walk(node.filter, inner)})`;
      }
    }
  };
  return walk(filter, resolve);
}

const USER_URN = 'urn:ietf:params:scim:schemas:core:2.0:user';
const GROUP_URN = 'urn:ietf:params:scim:schemas:core:2.0:group';

const jsonArray = (expr: string) =>
  `jsonb_array_elements(CASE WHEN jsonb_typeof(${expr}) = 'array' THEN ${expr} ELSE '[]'::jsonb END) AS e(v)`;

export const userResolver: Resolver = (attr) => {
  if (attr.uri && attr.uri.toLowerCase() !== USER_URN) return null;
  const name = attr.name.toLowerCase();
  const sub = attr.sub?.toLowerCase();
  if (sub && name !== 'emails' && name !== 'name' && name !== 'meta') return null;
  switch (name) {
    case 'id':
      return { sql: 'u.id', kind: 'exact' };
    case 'username':
      return { sql: 'u.user_name', kind: 'text' };
    case 'externalid':
      return { sql: 'u.external_id', kind: 'exact' };
    case 'displayname':
      return { sql: 'u.display_name', kind: 'text' };
    case 'active':
      return { sql: 'u.active', kind: 'boolean' };
    case 'name':
      if (sub === 'givenname') return { sql: "(u.resource->'name'->>'givenName')", kind: 'text' };
      if (sub === 'familyname') return { sql: "(u.resource->'name'->>'familyName')", kind: 'text' };
      return null;
    case 'emails':
      return {
        multi: jsonArray("u.resource->'emails'"),
        element: (a) => {
          const n = a.name.toLowerCase();
          if (n === 'value') return { sql: "(e.v->>'value')", kind: 'text' };
          if (n === 'type') return { sql: "(e.v->>'type')", kind: 'text' };
          if (n === 'primary') return { sql: "(e.v->>'primary')::boolean", kind: 'boolean' };
          return null;
        },
      };
    default:
      return null;
  }
};

export const groupResolver: Resolver = (attr) => {
  if (attr.uri && attr.uri.toLowerCase() !== GROUP_URN) return null;
  const name = attr.name.toLowerCase();
  if (attr.sub && name !== 'members') return null;
  switch (name) {
    case 'id':
      return { sql: 'g.id', kind: 'exact' };
    case 'displayname':
      return { sql: 'g.display_name', kind: 'text' };
    case 'externalid':
      return { sql: 'g.external_id', kind: 'exact' };
    case 'members':
      return {
        multi: 'scim_group_members e',
        where: 'e.group_id = g.id',
        element: (a) => (a.name.toLowerCase() === 'value' ? { sql: 'e.scim_user_id', kind: 'exact' } : null),
      };
    default:
      return null;
  }
};
