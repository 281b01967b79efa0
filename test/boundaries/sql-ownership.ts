// Which module owns which table, and which tables a module's SQL writes or locks.
//
// dependency-cruiser sees imports, not SQL: a store can write another module's table without importing
// anything of it. This reads the SQL out of the TypeScript (every string and template literal, found with
// the TypeScript parser) and finds the statements that write (INSERT, UPDATE, DELETE, TRUNCATE, LOCK) or
// take row locks (SELECT ... FOR UPDATE / NO KEY UPDATE / SHARE / KEY SHARE). Plain reads, joins
// included, are not looked at: a view may join another module's tables.
//
// It is a reader of this codebase's SQL, not a SQL parser: keywords in capitals, table names in lower
// case, one statement per literal (a `${...}` inside a template counts with the string literals it holds,
// so `${forUpdate ? 'FOR UPDATE' : ''}` is seen). A write whose table is spliced in at run time is
// reported as such, since no check could tell whose table it is.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

/** Tables that belong to no module: the platform's own (rate limits, the secret key ring's checks). */
export const PLATFORM = '(platform)';

/**
 * Which module a migration's table belongs to, by the migration's number: the ranges of
 * docs/DEVELOPING.md, with the 0300 range cut by its tens (install links 0300, SSO 0310, SCIM 0320) and
 * OAuth's 0200 range counted in mcp-connections, whose folder holds oauth/.
 */
export const MIGRATION_RANGES: readonly { from: number; to: number; module: string }[] = [
  { from: 1, to: 99, module: 'identity' },
  { from: 100, to: 299, module: 'mcp-connections' },
  { from: 300, to: 309, module: 'install-links' },
  { from: 310, to: 319, module: 'sso' },
  { from: 320, to: 399, module: 'scim' },
  { from: 400, to: 499, module: 'memory' },
  { from: 500, to: 599, module: 'messenger' },
  { from: 600, to: 699, module: PLATFORM },
  { from: 700, to: 799, module: 'audit' },
  { from: 900, to: 999, module: 'users' },
];

/**
 * What the ranges do not say. 0001 made every identity table at once; identity is now a membership core
 * (members, and sessions: who a token speaks for) beside one module per resource, each owning its
 * tables. 0002 is the platform's rate limiter.
 */
export const OWNER_BY_TABLE: Readonly<Record<string, string>> = {
  users: 'users',
  sessions: 'identity',
  user_memberships: 'identity',
  organization_owners: 'identity',
  messenger_webhook_routes: 'messenger',
  organizations: 'organizations',
  teams: 'teams',
  team_members: 'teams',
  invitations: 'invitations',
  api_keys: 'api-keys',
  roles: 'roles',
  rate_limit_counters: PLATFORM,
};

/** Every table the migrations create, with its owning module. */
export function tableOwners(migrationsDir: string): Map<string, { owner: string; migration: string }> {
  const owners = new Map<string, { owner: string; migration: string }>();
  for (const migration of readdirSync(migrationsDir)
    .filter((name) => name.endsWith('.sql'))
    .sort()) {
    const number = Number(/^(\d+)_/.exec(migration)?.[1]);
    const sql = readFileSync(join(migrationsDir, migration), 'utf8');
    for (const match of sql.matchAll(/\bCREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?([a-z_][a-z0-9_]*)/gi)) {
      const table = match[1]!.toLowerCase();
      const owner =
        OWNER_BY_TABLE[table] ?? MIGRATION_RANGES.find((range) => number >= range.from && number <= range.to)?.module;
      if (!owner)
        throw new Error(
          `${migration}: no owner for table ${table}: its number is in no range of MIGRATION_RANGES and OWNER_BY_TABLE does not name it`,
        );
      owners.set(table, { owner, migration });
    }
  }
  return owners;
}

export interface TableTouch {
  /** `INSERT`, `UPDATE`, `DELETE`, `TRUNCATE`, `LOCK TABLE` or the lock clause (`FOR UPDATE`, `FOR KEY SHARE`...). */
  how: string;
  /** The table, or null when the statement splices it in at run time. */
  table: string | null;
}

// Stands for a `${...}` that holds no string literal (a column list, a parameter, an identifier).
const SPLICED = '\u0000';
const IDENT = '[a-z_][a-z0-9_]*(?:\\.[a-z_][a-z0-9_]*)?';
const WRITES: readonly { how: string; pattern: RegExp }[] = [
  { how: 'INSERT', pattern: new RegExp(`\\bINSERT\\s+INTO\\s+(${IDENT}|${SPLICED})`, 'g') },
  {
    how: 'UPDATE',
    pattern: new RegExp(
      `(?<!\\b(?:FOR|DO|NO\\s+KEY)\\s+)\\bUPDATE\\s+(?:ONLY\\s+)?(${IDENT}|${SPLICED})(?:\\s+(?:AS\\s+)?[a-z_][a-z0-9_]*)?\\s+SET\\b`,
      'g',
    ),
  },
  { how: 'DELETE', pattern: new RegExp(`\\bDELETE\\s+FROM\\s+(?:ONLY\\s+)?(${IDENT}|${SPLICED})`, 'g') },
  { how: 'TRUNCATE', pattern: new RegExp(`\\bTRUNCATE\\s+(?:TABLE\\s+)?(?:ONLY\\s+)?(${IDENT}|${SPLICED})`, 'g') },
  { how: 'LOCK TABLE', pattern: new RegExp(`\\bLOCK\\s+(?:TABLE\\s+)?(?:ONLY\\s+)?(${IDENT}|${SPLICED})`, 'g') },
];
const ROW_LOCK =
  /\bFOR\s+(UPDATE|NO\s+KEY\s+UPDATE|SHARE|KEY\s+SHARE)\b(?:\s+OF\s+([a-z_][a-z0-9_]*(?:\s*,\s*[a-z_][a-z0-9_]*)*))?/g;
const FROM_ITEM = new RegExp(
  `\\b(FROM|JOIN)\\s+(?:ONLY\\s+)?(${IDENT})(?:\\s+(?:AS\\s+)?(?!(?:WHERE|JOIN|ON|USING|ORDER|GROUP|LIMIT|FOR|LEFT|RIGHT|INNER|FULL|CROSS|WINDOW|HAVING|UNION|OFFSET)\\b)([a-z_][a-z0-9_]*))?`,
  'g',
);

/** The tables one SQL statement writes or row-locks (not those it only reads). */
export function touchedTables(statement: string): TableTouch[] {
  // SQL comments and quoted SQL literals hold no table a statement touches, and may hold parentheses.
  const sql = statement.replace(/--[^\n]*/g, ' ').replace(/'(?:[^']|'')*'/g, "''");
  const touches: TableTouch[] = [];
  for (const { how, pattern } of WRITES) {
    for (const match of sql.matchAll(pattern)) touches.push({ how, table: match[1] === SPLICED ? null : match[1]! });
  }
  const depth = parenthesisDepths(sql);
  for (const match of sql.matchAll(ROW_LOCK)) {
    const how = `FOR ${match[1]!.replace(/\s+/g, ' ')}`;
    // The clause locks rows of its own SELECT's FROM items (not of sub-selects in its WHERE): the tables
    // named at its parenthesis depth between that SELECT and the clause, or those its OF list names.
    const at = match.index;
    let select = at;
    while (
      select > 0 &&
      !(depth[select] === depth[at] && /^SELECT\b/.test(sql.slice(select)) && /\W/.test(sql[select - 1] ?? ' '))
    )
      select--;
    const items: { table: string; alias: string }[] = [];
    for (const item of sql.slice(select, at).matchAll(FROM_ITEM)) {
      if (depth[select + item.index] !== depth[at]) continue;
      items.push({ table: item[2]!, alias: item[3] ?? item[2]! });
    }
    const of = match[2]?.split(',').map((name) => name.trim());
    for (const item of items) {
      if (!of || of.includes(item.alias) || of.includes(item.table)) touches.push({ how, table: item.table });
    }
  }
  return touches;
}

function parenthesisDepths(sql: string): number[] {
  const depths: number[] = [];
  let depth = 0;
  for (const char of sql) {
    if (char === ')') depth--;
    depths.push(depth);
    if (char === '(') depth++;
  }
  return depths;
}

export interface SqlLiteral {
  line: number;
  sql: string;
}

/**
 * Every literal of a TypeScript source that reads as SQL, outermost first: a template with its `${...}`
 * replaced by the string literals they hold, or a chain of literals joined with `+`.
 */
export function sqlLiterals(fileName: string, source: string): SqlLiteral[] {
  const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: SqlLiteral[] = [];
  const visit = (node: ts.Node): void => {
    const text = literalText(node);
    if (text !== undefined) {
      if (/\b(SELECT|INSERT|UPDATE|DELETE|TRUNCATE|LOCK)\b/.test(text)) {
        found.push({ line: file.getLineAndCharacterOfPosition(node.getStart(file)).line + 1, sql: text });
      }
      return;
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

function literalText(node: ts.Node): string | undefined {
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
  if (ts.isTemplateExpression(node)) {
    return node.head.text + node.templateSpans.map((span) => splicedText(span.expression) + span.literal.text).join('');
  }
  if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.PlusToken) {
    const left = literalText(node.left);
    const right = literalText(node.right);
    if (left !== undefined && right !== undefined) return left + right;
  }
  if (ts.isParenthesizedExpression(node)) return literalText(node.expression);
  return undefined;
}

// What a `${...}` adds to the statement: the string literals it holds (both arms of a condition, so a
// conditional lock clause is seen), or a mark that something is spliced in at run time.
function splicedText(expression: ts.Node): string {
  const pieces: string[] = [];
  const collect = (node: ts.Node): void => {
    const text = literalText(node);
    if (text !== undefined) pieces.push(text);
    else ts.forEachChild(node, collect);
  };
  collect(expression);
  return pieces.length > 0 ? ` ${pieces.join(' ')} ` : SPLICED;
}

export interface ForeignTouch {
  file: string;
  line: number;
  module: string;
  how: string;
  table: string | null;
  owner: string;
}

/** Every write or row lock of a module's SQL on a table another module (or the platform) owns. */
export function foreignTouches(root: string, owners: ReadonlyMap<string, { owner: string }>): ForeignTouch[] {
  const modulesDir = join(root, 'src/modules');
  const foreign: ForeignTouch[] = [];
  for (const module of readdirSync(modulesDir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort()) {
    for (const path of (readdirSync(join(modulesDir, module), { recursive: true }) as string[])
      .filter((name) => name.endsWith('.ts'))
      .sort()) {
      const fullPath = join(modulesDir, module, path);
      const file = relative(root, fullPath);
      for (const literal of sqlLiterals(file, readFileSync(fullPath, 'utf8'))) {
        for (const touch of touchedTables(literal.sql)) {
          if (touch.table === null) {
            foreign.push({
              file,
              line: literal.line,
              module,
              how: touch.how,
              table: null,
              owner: 'unknown: the table is spliced in at run time',
            });
            continue;
          }
          // Names no migration creates are a statement's own (CTEs) or another schema's.
          const owner = owners.get(touch.table)?.owner;
          if (owner !== undefined && owner !== module)
            foreign.push({ file, line: literal.line, module, how: touch.how, table: touch.table, owner });
        }
      }
    }
  }
  return foreign;
}

export function describeTouch(touch: ForeignTouch): string {
  return `${touch.file}:${touch.line}: ${touch.how} ${touch.table ?? '${...}'} (module ${touch.module}; the table's owner: ${touch.owner})`;
}
