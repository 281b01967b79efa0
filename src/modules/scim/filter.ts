// SCIM filter expressions (RFC 7644 3.4.2.2) and PATCH paths (3.5.2): a tokenizer, a recursive
// descent parser with the RFC's precedence (not > and > or), and an in-memory evaluator used for
// value filters inside PATCH paths such as emails[type eq "work"].value.
import { ScimError } from './errors.ts';

export type CompareOp = 'eq' | 'ne' | 'co' | 'sw' | 'ew' | 'gt' | 'ge' | 'lt' | 'le';
export type Literal = string | number | boolean | null;

/** `urn:...:User:name.givenName` -> { uri: 'urn:...:User', name: 'name', sub: 'givenName' } */
export interface AttrPath {
  uri?: string;
  name: string;
  sub?: string;
}

export type Filter =
  | { type: 'compare'; attr: AttrPath; op: CompareOp; value: Literal }
  | { type: 'present'; attr: AttrPath }
  | { type: 'and' | 'or'; left: Filter; right: Filter }
  | { type: 'not'; filter: Filter }
  /** emails[type eq "work" and value co "@example.com"] */
  | { type: 'valuePath'; attr: AttrPath; filter: Filter };

const COMPARE_OPS = new Set<string>(['eq', 'ne', 'co', 'sw', 'ew', 'gt', 'ge', 'lt', 'le']);

type Token =
  | { kind: 'word'; text: string; pos: number }
  | { kind: 'string'; text: string; pos: number }
  | { kind: '(' | ')' | '[' | ']'; pos: number };

const MAX_FILTER_LENGTH = 4096;
const MAX_DEPTH = 32;

function invalid(message: string): ScimError {
  return new ScimError(400, message, 'invalidFilter');
}

function tokenize(input: string): Token[] {
  if (input.length > MAX_FILTER_LENGTH) throw invalid(`filter is longer than ${MAX_FILTER_LENGTH} characters`);
  const tokens: Token[] = [];
  let i = 0;
  while (i < input.length) {
    const ch = input[i]!;
    if (ch === ' ' || ch === '\t' || ch === '\n' || ch === '\r') {
      i++;
    } else if (ch === '(' || ch === ')' || ch === '[' || ch === ']') {
      tokens.push({ kind: ch, pos: i });
      i++;
    } else if (ch === '"') {
      // A JSON string literal: find the closing quote that is not escaped, then let JSON decode it.
      let j = i + 1;
      while (j < input.length && input[j] !== '"') j += input[j] === '\\' ? 2 : 1;
      if (j >= input.length) throw invalid(`unterminated string starting at position ${i}`);
      let text: string;
      try {
        text = JSON.parse(input.slice(i, j + 1)) as string;
      } catch {
        throw invalid(`invalid string literal at position ${i}`);
      }
      tokens.push({ kind: 'string', text, pos: i });
      i = j + 1;
    } else {
      let j = i;
      while (j < input.length && !' \t\n\r()[]"'.includes(input[j]!)) j++;
      tokens.push({ kind: 'word', text: input.slice(i, j), pos: i });
      i = j;
    }
  }
  return tokens;
}

const ATTR_NAME = /^\$?[A-Za-z][A-Za-z0-9_$-]*$/;

/** Parses `name`, `name.sub` or `urn:...:name.sub` (the URI itself contains dots and colons). */
export function parseAttrPath(text: string): AttrPath {
  let uri: string | undefined;
  let rest = text;
  if (/^urn:/i.test(text)) {
    const cut = text.lastIndexOf(':');
    uri = text.slice(0, cut);
    rest = text.slice(cut + 1);
  }
  const dot = rest.indexOf('.');
  const name = dot === -1 ? rest : rest.slice(0, dot);
  const sub = dot === -1 ? undefined : rest.slice(dot + 1);
  if (!ATTR_NAME.test(name) || (sub !== undefined && !ATTR_NAME.test(sub))) {
    throw new ScimError(400, `"${text}" is not a valid attribute path`, 'invalidPath');
  }
  const path: AttrPath = { name };
  if (uri) path.uri = uri;
  if (sub !== undefined) path.sub = sub;
  return path;
}

class Parser {
  private readonly tokens: Token[];
  private index = 0;
  private depth = 0;
  constructor(tokens: Token[]) {
    this.tokens = tokens;
  }

  peek(): Token | undefined {
    return this.tokens[this.index];
  }
  next(): Token | undefined {
    return this.tokens[this.index++];
  }
  atEnd(): boolean {
    return this.index >= this.tokens.length;
  }
  isWord(token: Token | undefined, word: string): boolean {
    return token?.kind === 'word' && token.text.toLowerCase() === word;
  }
  expect(kind: Token['kind'], what: string): Token {
    const token = this.next();
    if (!token || token.kind !== kind)
      throw invalid(`expected ${what}${token ? ` at position ${token.pos}` : ' at the end'}`);
    return token;
  }

  // FILTER := orExpr ; orExpr := andExpr ("or" andExpr)* ; andExpr := unary ("and" unary)*
  parseOr(): Filter {
    let left = this.parseAnd();
    while (this.isWord(this.peek(), 'or')) {
      this.next();
      left = { type: 'or', left, right: this.parseAnd() };
    }
    return left;
  }
  parseAnd(): Filter {
    let left = this.parseUnary();
    while (this.isWord(this.peek(), 'and')) {
      this.next();
      left = { type: 'and', left, right: this.parseUnary() };
    }
    return left;
  }
  parseUnary(): Filter {
    if (++this.depth > MAX_DEPTH) throw invalid('filter is nested too deeply');
    try {
      const token = this.peek();
      if (this.isWord(token, 'not')) {
        this.next();
        this.expect('(', '"(" after "not"');
        const inner = this.parseOr();
        this.expect(')', '")"');
        return { type: 'not', filter: inner };
      }
      if (token?.kind === '(') {
        this.next();
        const inner = this.parseOr();
        this.expect(')', '")"');
        return inner;
      }
      return this.parseAttrExpression();
    } finally {
      this.depth--;
    }
  }
  parseAttrExpression(): Filter {
    const token = this.next();
    if (token?.kind !== 'word')
      throw invalid(`expected an attribute name${token ? ` at position ${token.pos}` : ' at the end'}`);
    const attr = this.attrPath(token.text);
    if (this.peek()?.kind === '[') {
      this.next();
      const inner = this.parseOr();
      this.expect(']', '"]"');
      return { type: 'valuePath', attr, filter: inner };
    }
    const opToken = this.next();
    if (opToken?.kind !== 'word') throw invalid(`expected an operator after "${token.text}"`);
    const op = opToken.text.toLowerCase();
    if (op === 'pr') return { type: 'present', attr };
    if (!COMPARE_OPS.has(op)) throw invalid(`unknown operator "${opToken.text}"`);
    const valueToken = this.next();
    if (!valueToken) throw invalid(`expected a value after "${opToken.text}"`);
    return { type: 'compare', attr, op: op as CompareOp, value: this.literal(valueToken) };
  }
  attrPath(text: string): AttrPath {
    try {
      return parseAttrPath(text);
    } catch {
      throw invalid(`"${text}" is not a valid attribute path`);
    }
  }
  literal(token: Token): Literal {
    if (token.kind === 'string') return token.text;
    if (token.kind !== 'word') throw invalid(`expected a value at position ${token.pos}`);
    const lower = token.text.toLowerCase();
    if (lower === 'true') return true;
    if (lower === 'false') return false;
    if (lower === 'null') return null;
    if (/^-?\d+(\.\d+)?([eE][+-]?\d+)?$/.test(token.text)) return Number(token.text);
    throw invalid(`"${token.text}" is not a value; strings are written in double quotes`);
  }
}

export function parseFilter(input: string): Filter {
  const tokens = tokenize(input);
  if (tokens.length === 0) throw invalid('filter is empty');
  const parser = new Parser(tokens);
  const filter = parser.parseOr();
  if (!parser.atEnd()) throw invalid(`unexpected "${describe(parser.peek()!)}" at position ${parser.peek()!.pos}`);
  return filter;
}

function describe(token: Token): string {
  return token.kind === 'word' || token.kind === 'string' ? token.text : token.kind;
}

/** A PATCH path: an attribute path, or a value path with an optional sub-attribute after "]". */
export interface PatchPath {
  attr: AttrPath;
  filter?: Filter;
  /** the sub-attribute after a value filter: emails[type eq "work"].value -> "value" */
  subAfterFilter?: string;
}

export function parsePatchPath(input: string): PatchPath {
  const text = input.trim();
  const open = text.indexOf('[');
  if (open === -1) return { attr: parseAttrPath(text) };
  const close = text.lastIndexOf(']');
  if (close < open) throw new ScimError(400, `"${input}" is not a valid path`, 'invalidPath');
  const attr = parseAttrPath(text.slice(0, open));
  if (attr.sub) throw new ScimError(400, `"${input}" is not a valid path`, 'invalidPath');
  let filter: Filter;
  try {
    filter = parseFilter(text.slice(open + 1, close));
  } catch (error) {
    throw new ScimError(400, `"${input}" has an invalid value filter: ${(error as Error).message}`, 'invalidPath');
  }
  const tail = text.slice(close + 1);
  if (tail === '') return { attr, filter };
  if (!/^\.\$?[A-Za-z][A-Za-z0-9_$-]*$/.test(tail))
    throw new ScimError(400, `"${input}" is not a valid path`, 'invalidPath');
  return { attr, filter, subAfterFilter: tail.slice(1) };
}

// ---- in-memory evaluation (for value filters on multi-valued attributes) ----

/** Reads a key of an object case-insensitively (SCIM attribute names are case-insensitive). */
export function getCaseInsensitive(object: unknown, name: string): unknown {
  if (object === null || typeof object !== 'object' || Array.isArray(object)) return undefined;
  const record = object as Record<string, unknown>;
  if (name in record) return record[name];
  const lower = name.toLowerCase();
  for (const key of Object.keys(record)) if (key.toLowerCase() === lower) return record[key];
  return undefined;
}

const CASE_EXACT = new Set(['id', 'externalid']);

function valuesAt(resource: unknown, attr: AttrPath): unknown[] {
  let base = resource;
  if (attr.uri) {
    const container = getCaseInsensitive(resource, attr.uri);
    // A core-schema URN prefix addresses the top level.
    base = container === undefined ? resource : container;
  }
  const top = getCaseInsensitive(base, attr.name);
  const list = Array.isArray(top) ? top : top === undefined ? [] : [top];
  if (!attr.sub) return list;
  // A sub-attribute of a multi-valued complex attribute matches if any element's value matches.
  return list.map((item) => getCaseInsensitive(item, attr.sub!)).filter((v) => v !== undefined);
}

function compare(actual: unknown, op: CompareOp, expected: Literal, caseExact: boolean): boolean {
  if (op === 'eq' && expected === null) return actual === null || actual === undefined;
  if (op === 'ne' && expected === null) return actual !== null && actual !== undefined;
  if (typeof expected === 'boolean') {
    const a = typeof actual === 'string' ? actual.toLowerCase() === 'true' : actual;
    if (op === 'eq') return a === expected;
    if (op === 'ne') return a !== expected;
    return false;
  }
  if (typeof expected === 'number') {
    const a = typeof actual === 'number' ? actual : Number(actual);
    if (Number.isNaN(a)) return false;
    switch (op) {
      case 'eq':
        return a === expected;
      case 'ne':
        return a !== expected;
      case 'gt':
        return a > expected;
      case 'ge':
        return a >= expected;
      case 'lt':
        return a < expected;
      case 'le':
        return a <= expected;
      default:
        return false;
    }
  }
  if (typeof actual !== 'string' || typeof expected !== 'string') return op === 'ne';
  const a = caseExact ? actual : actual.toLowerCase();
  const e = caseExact ? expected : expected.toLowerCase();
  switch (op) {
    case 'eq':
      return a === e;
    case 'ne':
      return a !== e;
    case 'co':
      return a.includes(e);
    case 'sw':
      return a.startsWith(e);
    case 'ew':
      return a.endsWith(e);
    case 'gt':
      return a > e;
    case 'ge':
      return a >= e;
    case 'lt':
      return a < e;
    case 'le':
      return a <= e;
  }
}

/** Whether a resource (or one element of a multi-valued attribute) matches a filter. */
export function matchesFilter(resource: unknown, filter: Filter): boolean {
  switch (filter.type) {
    case 'and':
      return matchesFilter(resource, filter.left) && matchesFilter(resource, filter.right);
    case 'or':
      return matchesFilter(resource, filter.left) || matchesFilter(resource, filter.right);
    case 'not':
      return !matchesFilter(resource, filter.filter);
    case 'present':
      return valuesAt(resource, filter.attr).some(
        (v) => v !== null && v !== '' && !(Array.isArray(v) && v.length === 0),
      );
    case 'valuePath': {
      const elements = valuesAt(resource, { ...filter.attr, sub: undefined } as AttrPath);
      return elements.some((element) => matchesFilter(element, filter.filter));
    }
    case 'compare': {
      const caseExact = CASE_EXACT.has(filter.attr.name.toLowerCase()) && !filter.attr.sub;
      const values = valuesAt(resource, filter.attr);
      if (filter.op === 'ne')
        return values.length === 0
          ? filter.value !== null
          : values.every((v) => compare(v, 'ne', filter.value, caseExact));
      if (values.length === 0) return compare(undefined, filter.op, filter.value, caseExact);
      return values.some((v) => compare(v, filter.op, filter.value, caseExact));
    }
  }
}
