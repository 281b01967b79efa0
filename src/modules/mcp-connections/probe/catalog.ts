// The server's catalog as a probe saw it (serverInfo, protocol version, capabilities, tools with their
// schemas and annotations, prompt and resource counts), made safe to store and show: bounded in size
// (catalogLimits: a tool beyond them is left out, an oversize field replaced, and `truncated` says so),
// free of the credentials the probe sent (a hostile server may echo them into any text), and free of
// what PostgreSQL's jsonb refuses (NUL characters, lone surrogates) or a recursive reader chokes on
// (nesting deeper than maxDepth).
import type { Redactor } from './credentials.ts';

export const catalogLimits = {
  /** Tools stored per connection; the rest are left out. */
  maxTools: 500,
  /** JSON size of one tool's inputSchema; a larger one is stored as `{"type":"object"}`. */
  maxSchemaBytes: 16 * 1024,
  /** Nesting of one tool's inputSchema (and of capabilities); deeper is treated as oversize. */
  maxDepth: 24,
  maxNameChars: 128,
  maxTitleChars: 256,
  maxDescriptionChars: 4000,
  /** JSON size of all stored tools together. */
  maxTotalBytes: 2 * 1024 * 1024,
};

export interface ToolAnnotations {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

export interface CatalogTool {
  name: string;
  title?: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  annotations?: ToolAnnotations;
}

export interface ServerCatalog {
  serverInfo: { name: string; version: string } | null;
  protocolVersion: string;
  capabilities: Record<string, unknown>;
  tools: CatalogTool[];
  promptCount: number | null;
  resourceCount: number | null;
  truncated: boolean;
}

export interface RawCatalog {
  serverInfo: unknown;
  protocolVersion: string;
  capabilities: unknown;
  tools: unknown[];
  promptCount: number | null;
  resourceCount: number | null;
}

const OVERSIZE_SCHEMA = { type: 'object' } as const;
const hints = ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const;

class TooDeep extends Error {}

/** A text as stored: no credential, NUL or lone surrogate; cut to `max` characters (cut = true). */
function cleanText(redact: Redactor, value: string, max: number): { text: string; cut: boolean } {
  // NUL is removed because PostgreSQL's text cannot hold it.
  const text = redact(value).toWellFormed().replaceAll('\u0000', '');
  return text.length > max ? { text: text.slice(0, max), cut: true } : { text, cut: false };
}

/** A JSON value with every key and string cleaned, at most `maxDepth` deep (TooDeep otherwise). */
function cleanJson(redact: Redactor, value: unknown, depth = 0): unknown {
  if (depth > catalogLimits.maxDepth) throw new TooDeep();
  if (typeof value === 'string') return cleanText(redact, value, Number.MAX_SAFE_INTEGER).text;
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value === 'boolean' || value === null) return value;
  if (Array.isArray(value)) return value.map((item) => cleanJson(redact, item, depth + 1));
  if (typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
      if (item === undefined) continue;
      out[cleanText(redact, key, Number.MAX_SAFE_INTEGER).text] = cleanJson(redact, item, depth + 1);
    }
    return out;
  }
  return null;
}

function asObject(value: unknown): Record<string, unknown> | undefined {
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

function optionalText(redact: Redactor, value: unknown, max: number): { text?: string; cut: boolean } {
  if (typeof value !== 'string') return { cut: false };
  return cleanText(redact, value, max);
}

/** One tool as stored, or null when it cannot be (no usable name). `cut` when a field was shortened or replaced. */
function cleanTool(redact: Redactor, raw: unknown): { tool: CatalogTool | null; cut: boolean } {
  const input = asObject(raw);
  if (!input || typeof input.name !== 'string' || input.name.length === 0) return { tool: null, cut: true };
  const name = cleanText(redact, input.name, catalogLimits.maxNameChars);
  // A shortened name would be another tool's name: such a tool is left out.
  if (name.cut || name.text.length === 0) return { tool: null, cut: true };
  let cut = false;
  const tool: CatalogTool = { name: name.text, inputSchema: { ...OVERSIZE_SCHEMA } };
  const title = optionalText(redact, input.title, catalogLimits.maxTitleChars);
  const description = optionalText(redact, input.description, catalogLimits.maxDescriptionChars);
  if (title.text !== undefined) tool.title = title.text;
  if (description.text !== undefined) tool.description = description.text;
  cut ||= title.cut || description.cut;
  try {
    const schema = asObject(cleanJson(redact, input.inputSchema));
    if (schema && Buffer.byteLength(JSON.stringify(schema)) <= catalogLimits.maxSchemaBytes) tool.inputSchema = schema;
    else cut = true;
  } catch (error) {
    if (!(error instanceof TooDeep)) throw error;
    cut = true;
  }
  const annotations = asObject(input.annotations);
  if (annotations) {
    const kept: ToolAnnotations = {};
    const annotationTitle = optionalText(redact, annotations.title, catalogLimits.maxTitleChars);
    if (annotationTitle.text !== undefined) kept.title = annotationTitle.text;
    for (const hint of hints) if (typeof annotations[hint] === 'boolean') kept[hint] = annotations[hint] as boolean;
    if (Object.keys(kept).length > 0) tool.annotations = kept;
  }
  return { tool, cut };
}

/** The catalog as stored and shown: cleaned and within catalogLimits. */
export function boundedCatalog(raw: RawCatalog, redact: Redactor): ServerCatalog {
  let truncated = false;
  const tools: CatalogTool[] = [];
  const seen = new Set<string>();
  let totalBytes = 0;
  for (const item of raw.tools) {
    if (tools.length >= catalogLimits.maxTools) {
      truncated = true;
      break;
    }
    const { tool, cut } = cleanTool(redact, item);
    truncated ||= cut;
    if (!tool || seen.has(tool.name)) continue;
    const bytes = Buffer.byteLength(JSON.stringify(tool));
    if (totalBytes + bytes > catalogLimits.maxTotalBytes) {
      truncated = true;
      break;
    }
    totalBytes += bytes;
    seen.add(tool.name);
    tools.push(tool);
  }
  const info = asObject(raw.serverInfo);
  const serverInfo =
    info && typeof info.name === 'string'
      ? {
          name: cleanText(redact, info.name, catalogLimits.maxTitleChars).text,
          version: cleanText(redact, typeof info.version === 'string' ? info.version : '', catalogLimits.maxTitleChars)
            .text,
        }
      : null;
  let capabilities: Record<string, unknown> = {};
  try {
    const cleaned = asObject(cleanJson(redact, raw.capabilities));
    if (cleaned && Buffer.byteLength(JSON.stringify(cleaned)) <= catalogLimits.maxSchemaBytes) capabilities = cleaned;
    else truncated = true;
  } catch (error) {
    if (!(error instanceof TooDeep)) throw error;
    truncated = true;
  }
  return {
    serverInfo,
    protocolVersion: cleanText(redact, raw.protocolVersion, 64).text,
    capabilities,
    tools,
    promptCount: raw.promptCount,
    resourceCount: raw.resourceCount,
    truncated,
  };
}
