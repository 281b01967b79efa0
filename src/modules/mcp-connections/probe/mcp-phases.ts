// The MCP phases of the probe: MCP_TRANSPORT, MCP_VERSION, MCP_INITIALIZE, MCP_INITIALIZED, MCP_TOOL_DISCOVERY.

import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import {
  InitializeResultSchema,
  LATEST_PROTOCOL_VERSION,
  ListPromptsResultSchema,
  ListResourcesResultSchema,
  ListToolsResultSchema,
  type McpError,
  ResultSchema,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/sdk/types.js';
import { OutboundResponseTooLargeError, OutboundTimeoutError } from '../../../platform/outbound.ts';
import { PhaseFailure, type ProbePhase } from './diagnostic.ts';
import {
  type PhaseFunction,
  type ProbeContext,
  withDeadline,
  fail,
  timeoutFailure,
  probeFetch,
  authFailure,
  PhaseTimeout,
  credentialHeaders,
  ProbeSession,
} from './phase-kit.ts';

const MAX_TOOL_PAGES = 20;
const CLIENT_INFO = { name: 'orgplane-probe', version: '1.0.0' };

// MCP_TRANSPORT: the SDK transport (Streamable HTTP, or legacy SSE) carries the initialize
// request and brings back a JSON-RPC response. What the response says is judged by the next phases.
export const mcpTransport: PhaseFunction = async (ctx) => {
  const url = ctx.url!;
  const fetch = probeFetch(ctx);
  const requestInit = { headers: credentialHeaders(ctx) };
  const transport =
    ctx.transportKind === 'sse'
      ? new SSEClientTransport(url, { fetch, requestInit, eventSourceInit: { fetch } })
      : new StreamableHTTPClientTransport(url, {
          fetch,
          requestInit,
          // A probe never waits to resume a dropped stream.
          reconnectionOptions: {
            maxRetries: 0,
            initialReconnectionDelay: 1_000,
            maxReconnectionDelay: 1_000,
            reconnectionDelayGrowFactor: 1,
          },
        });
  const session = new ProbeSession();
  session.onerror = () => {}; // errors surface through the request below
  ctx.transport = transport;
  ctx.session = session;
  try {
    await withDeadline(ctx, 'MCP_TRANSPORT', async (signal, ms) => {
      await session.connect(transport);
      const answer = await session.requestOrServerError(
        {
          method: 'initialize',
          params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: CLIENT_INFO },
        },
        ResultSchema,
        { signal, timeout: ms + 1_000 },
      );
      // A JSON-RPC error from the server still proves the transport works.
      ctx.initializeResponse =
        'serverError' in answer ? { error: answer.serverError } : { result: answer.result as Record<string, unknown> };
    });
  } catch (error) {
    if (error instanceof PhaseTimeout || error instanceof OutboundTimeoutError)
      timeoutFailure('MCP_TRANSPORT', 'the initialize request', error);
    tooLargeFailure('MCP_TRANSPORT', error);
    const status = httpStatusOf(error);
    if (status === 401 || status === 403) authFailure(ctx, status);
    const kind = ctx.transportKind === 'sse' ? 'legacy HTTP+SSE' : 'Streamable HTTP';
    fail(
      'MCP_TRANSPORT',
      'transport',
      'transport_error',
      'vendor',
      `Check that the server implements the MCP ${kind} transport at this URL.`,
      `The ${kind} transport failed to carry the initialize request${status ? ` (HTTP ${status})` : ''}.`,
      { retryable: status !== undefined && status >= 500, ...(status ? { httpStatus: status } : {}), cause: error },
    );
  }
};

/** A response cut at the size cap, wherever in the SDK's error chain it surfaced. */
function tooLargeFailure(phase: ProbePhase, error: unknown): void {
  let current: unknown = error;
  for (let depth = 0; current && depth < 6; depth += 1) {
    if (current instanceof OutboundResponseTooLargeError) {
      fail(
        phase,
        'transport',
        'response_too_large',
        'vendor',
        'The server sent more than this service reads for one message; reduce the response size.',
        `The server's response exceeded ${current.limitBytes} bytes.`,
        { cause: error },
      );
    }
    current = (current as { cause?: unknown }).cause;
  }
}

function httpStatusOf(error: unknown): number | undefined {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'number' && code >= 100 && code <= 599 ? code : undefined;
}

function isVersionError(error: McpError): boolean {
  const data = error.data as { supported?: unknown } | undefined;
  return Array.isArray(data?.supported) || /protocol version/i.test(error.message);
}

// MCP_VERSION: client and server agree on a protocol version this SDK speaks.
export const mcpVersion: PhaseFunction = async (ctx) => {
  const response = ctx.initializeResponse!;
  if ('error' in response) {
    if (isVersionError(response.error)) {
      fail(
        'MCP_VERSION',
        'protocol',
        'unsupported_protocol_version',
        'vendor',
        `Update the server to a supported MCP protocol version (${SUPPORTED_PROTOCOL_VERSIONS.join(', ')}).`,
        'The server refused every protocol version this service speaks.',
        { jsonRpcCode: response.error.code, cause: response.error },
      );
    }
    return; // another error to initialize: judged by MCP_INITIALIZE
  }
  const version = response.result.protocolVersion;
  if (typeof version !== 'string' || !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
    fail(
      'MCP_VERSION',
      'protocol',
      'unsupported_protocol_version',
      'vendor',
      `Update the server to a supported MCP protocol version (${SUPPORTED_PROTOCOL_VERSIONS.join(', ')}).`,
      // Redacted before it is cut: a cut credential would no longer be recognised (a hostile server may answer with the header it got).
      `The server answered with protocol version ${typeof version === 'string' ? JSON.stringify(ctx.redact(version).slice(0, 32)) : 'none'}, which this service does not speak.`,
    );
  }
  ctx.protocolVersion = version;
  ctx.transport!.setProtocolVersion?.(version);
};

// MCP_INITIALIZE: initialize succeeded with a well-formed result.
export const mcpInitialize: PhaseFunction = async (ctx) => {
  const response = ctx.initializeResponse!;
  if ('error' in response) {
    fail(
      'MCP_INITIALIZE',
      'protocol',
      'initialize_rejected',
      'vendor',
      'Check the server logs for why it refused to initialize.',
      'The server answered initialize with an error.',
      { jsonRpcCode: response.error.code, cause: response.error },
    );
  }
  const parsed = InitializeResultSchema.safeParse(response.result);
  if (!parsed.success) {
    fail(
      'MCP_INITIALIZE',
      'protocol',
      'invalid_initialize_result',
      'vendor',
      'The server must answer initialize with capabilities and serverInfo as MCP defines.',
      'The server answered initialize with a malformed result.',
      { cause: parsed.error },
    );
  }
  ctx.initializeResult = parsed.data;
};

// MCP_INITIALIZED: the server accepts the `notifications/initialized` that opens the session.
export const mcpInitialized: PhaseFunction = async (ctx) => {
  try {
    await withDeadline(ctx, 'MCP_INITIALIZED', () =>
      ctx.session!.notification({ method: 'notifications/initialized' }),
    );
  } catch (error) {
    if (error instanceof PhaseTimeout || error instanceof OutboundTimeoutError)
      timeoutFailure('MCP_INITIALIZED', 'the initialized notification', error);
    const status = httpStatusOf(error);
    fail(
      'MCP_INITIALIZED',
      'protocol',
      'initialized_rejected',
      'vendor',
      'Check that the server accepts notifications/initialized after initialize.',
      `The server refused the initialized notification${status ? ` (HTTP ${status})` : ''}.`,
      { ...(status ? { httpStatus: status } : {}), cause: error },
    );
  }
};

// MCP_TOOL_DISCOVERY: tools/list returns the tool catalog (all pages, bounded).
export const mcpToolDiscovery: PhaseFunction = async (ctx) => {
  if (!ctx.initializeResult!.capabilities.tools) {
    ctx.tools = []; // the server offers no tools: an empty catalog is the correct answer
    ctx.toolDefinitions = [];
    await countPromptsAndResources(ctx);
    return;
  }
  const names: string[] = [];
  const definitions: unknown[] = [];
  try {
    await withDeadline(ctx, 'MCP_TOOL_DISCOVERY', async (signal, ms) => {
      let cursor: string | undefined;
      for (let page = 0; page < MAX_TOOL_PAGES; page += 1) {
        const answer = await ctx.session!.requestOrServerError(
          { method: 'tools/list', params: cursor ? { cursor } : {} },
          ListToolsResultSchema,
          { signal, timeout: ms + 1_000 },
        );
        if ('serverError' in answer) {
          const error = answer.serverError;
          fail(
            'MCP_TOOL_DISCOVERY',
            'protocol',
            'tools_list_failed',
            'vendor',
            'Check the server logs for why listing tools failed.',
            'The server answered tools/list with an error.',
            { jsonRpcCode: error.code, cause: error },
          );
        }
        const result = answer.result;
        for (const tool of result.tools) {
          names.push(tool.name);
          definitions.push(tool);
        }
        cursor = result.nextCursor;
        if (!cursor) break;
      }
    });
  } catch (error) {
    if (error instanceof PhaseTimeout || error instanceof OutboundTimeoutError)
      timeoutFailure('MCP_TOOL_DISCOVERY', 'tools/list', error);
    if (error instanceof PhaseFailure) throw error;
    tooLargeFailure('MCP_TOOL_DISCOVERY', error);
    const status = httpStatusOf(error);
    if (status === 401 || status === 403) authFailure(ctx, status);
    const malformed = error instanceof Error && (error.name === 'ZodError' || error.name === '$ZodError');
    fail(
      'MCP_TOOL_DISCOVERY',
      'protocol',
      malformed ? 'invalid_tools_list' : 'tools_list_failed',
      'vendor',
      'Check that the server implements tools/list as MCP defines.',
      malformed
        ? 'The server answered tools/list with a malformed result.'
        : `Listing tools failed${status ? ` (HTTP ${status})` : ''}.`,
      { ...(status ? { httpStatus: status } : {}), cause: error },
    );
  }
  ctx.tools = names;
  ctx.toolDefinitions = definitions;
  await countPromptsAndResources(ctx);
};

const MAX_COUNT_PAGES = 5;

/**
 * For the catalog, how many prompts and resources the server offers (when it declares them): a
 * count, not a phase: a failure or a timeout leaves the count unknown (null) and fails nothing.
 */
async function countPromptsAndResources(ctx: ProbeContext): Promise<void> {
  const capabilities = ctx.initializeResult!.capabilities;
  const count = async (method: 'prompts/list' | 'resources/list'): Promise<number | null> => {
    let total = 0;
    let cursor: string | undefined;
    try {
      await withDeadline(ctx, 'MCP_TOOL_DISCOVERY', async (signal, ms) => {
        for (let page = 0; page < MAX_COUNT_PAGES; page += 1) {
          const schema = method === 'prompts/list' ? ListPromptsResultSchema : ListResourcesResultSchema;
          const answer = await ctx.session!.requestOrServerError({ method, params: cursor ? { cursor } : {} }, schema, {
            signal,
            timeout: ms + 1_000,
          });
          if ('serverError' in answer) throw answer.serverError;
          const result = answer.result as { prompts?: unknown[]; resources?: unknown[]; nextCursor?: string };
          total += (result.prompts ?? result.resources ?? []).length;
          cursor = result.nextCursor;
          if (!cursor) return;
        }
      });
    } catch {
      return null;
    }
    return total;
  };
  ctx.promptCount = capabilities.prompts ? await count('prompts/list') : 0;
  ctx.resourceCount = capabilities.resources ? await count('resources/list') : 0;
}
