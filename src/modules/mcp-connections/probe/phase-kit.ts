// What every probe phase shares: the context phases read and fill in, the JSON-RPC session, the
// per-phase deadline, and the one way a phase fails (a PhaseFailure saying what broke and who can fix it).

import { Protocol, type RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { AnySchema, SchemaOutput } from '@modelcontextprotocol/sdk/server/zod-compat.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  isJSONRPCErrorResponse,
  McpError,
  type ClientNotification,
  type ClientRequest,
  type ClientResult,
  type InitializeResult,
  type JSONRPCMessage,
} from '@modelcontextprotocol/sdk/types.js';
import type { OutboundClient, ResolvedAddress } from '../../../platform/outbound.ts';
import type { Redactor } from './credentials.ts';
import { PhaseFailure, type ActionOwner, type DiagnosticPhase, type ProbePhase } from './diagnostic.ts';

export type ProbeAuthType = 'apikey' | 'none' | 'oauth';

export interface ProbeContext {
  readonly rawUrl: string;
  readonly authType: ProbeAuthType;
  readonly apiKey: string | undefined;
  /** Header that carries the API key: `authorization` sends `Bearer <key>` (the default), any other sends the key as is. */
  readonly apiKeyHeader: string;
  /** A bearer token to send instead of an API key (OAuth access tokens, when a caller has one). */
  readonly bearerToken: string | undefined;
  readonly outbound: OutboundClient;
  /** Remaining milliseconds of the whole probe. */
  readonly remaining: () => number;
  /** Aborted when the whole probe's time is up. */
  readonly signal: AbortSignal;
  readonly maxResponseBytes: number;
  /** Removes the credentials sent from a text (probeConnection applies it to everything it reports). */
  readonly redact: Redactor;

  url?: URL;
  addresses?: ResolvedAddress[];
  transportKind?: 'streamable-http' | 'sse';
  transport?: Transport & {
    setProtocolVersion?: (version: string) => void;
    terminateSession?: () => Promise<void>;
    sessionId?: string;
  };
  session?: ProbeSession;
  /** The initialize exchange as it came back: a result (unvalidated) or a JSON-RPC error. */
  initializeResponse?: { result: Record<string, unknown> } | { error: McpError };
  protocolVersion?: string;
  initializeResult?: InitializeResult;
  tools?: string[];
  /** The tools as listed (unvalidated beyond the SDK's schema), for the catalog. */
  toolDefinitions?: unknown[];
  /** For the catalog: null when the server declares them but listing failed. */
  promptCount?: number | null;
  resourceCount?: number | null;
}

export type PhaseFunction = (ctx: ProbeContext) => Promise<void>;

/** Longest a single phase may take (the whole probe is bounded separately, 15 s by default). */
export const phaseTimeoutsMs: Record<ProbePhase, number> = {
  CONFIGURATION: 1_000,
  NETWORK_DNS: 3_000,
  NETWORK_TCP: 3_000,
  NETWORK_TLS: 4_000,
  HTTP_ROUTING: 5_000,
  MCP_TRANSPORT: 5_000,
  MCP_VERSION: 1_000,
  MCP_INITIALIZE: 1_000,
  MCP_INITIALIZED: 5_000,
  MCP_TOOL_DISCOVERY: 5_000,
};

/** The SDK's JSON-RPC engine without the Client's all-in-one connect, so each MCP step is its own phase. */
export class ProbeSession extends Protocol<ClientRequest, ClientNotification, ClientResult> {
  protected assertCapabilityForMethod(): void {}
  protected assertNotificationCapability(): void {}
  protected assertRequestHandlerCapability(): void {}
  protected assertTaskCapability(): void {}
  protected assertTaskHandlerCapability(): void {}

  // The SDK rejects a request with an McpError both when the server answered with a JSON-RPC error
  // and on its own timeout (-32001) or closed connection (-32000), codes a server may send too
  // (-32000 opens JSON-RPC's server-defined range). Counting the error answers that arrived is what
  // tells the two apart. Only answers to a request count (they carry its id; the probe has one
  // request in flight at a time): an error with a null id (a parse error) answers nothing.
  private errorAnswers = 0;

  override async connect(transport: Transport): Promise<void> {
    await super.connect(transport);
    const deliver = transport.onmessage;
    transport.onmessage = <T extends JSONRPCMessage>(
      message: T,
      extra?: Parameters<NonNullable<Transport['onmessage']>>[1],
    ) => {
      if (isJSONRPCErrorResponse(message) && message.id !== null && message.id !== undefined) this.errorAnswers += 1;
      deliver?.(message, extra);
    };
  }

  /** `request`, except that a JSON-RPC error the server answered with is returned, not thrown. */
  async requestOrServerError<S extends AnySchema>(
    request: ClientRequest,
    resultSchema: S,
    options: RequestOptions,
  ): Promise<{ result: SchemaOutput<S> } | { serverError: McpError }> {
    const answersBefore = this.errorAnswers;
    try {
      return { result: await this.request(request, resultSchema, options) };
    } catch (error) {
      if (error instanceof McpError && this.errorAnswers > answersBefore) return { serverError: error };
      throw error;
    }
  }
}

export class PhaseTimeout extends Error {
  constructor(phase: string, ms: number) {
    super(`${phase} did not complete within ${ms} ms`);
    this.name = 'PhaseTimeout';
  }
}

function phaseBudget(ctx: ProbeContext, phase: ProbePhase): number {
  return Math.max(1, Math.min(phaseTimeoutsMs[phase], ctx.remaining()));
}

/** Runs `work` with an abort signal that fires at the phase's deadline (or the probe's). */
export async function withDeadline<T>(
  ctx: ProbeContext,
  phase: ProbePhase,
  work: (signal: AbortSignal, ms: number) => Promise<T>,
): Promise<T> {
  const ms = phaseBudget(ctx, phase);
  const controller = new AbortController();
  const timeout = new PhaseTimeout(phase, ms);
  const timer = setTimeout(() => controller.abort(timeout), ms);
  const onProbeAbort = () => controller.abort(timeout);
  ctx.signal.addEventListener('abort', onProbeAbort, { once: true });
  try {
    return await Promise.race([
      work(controller.signal, ms),
      new Promise<never>((_, reject) => {
        if (controller.signal.aborted) reject(timeout);
        controller.signal.addEventListener('abort', () => reject(timeout), { once: true });
      }),
    ]);
  } finally {
    clearTimeout(timer);
    ctx.signal.removeEventListener('abort', onProbeAbort);
  }
}

export function fail(
  phase: DiagnosticPhase,
  category: string,
  code: string,
  actionOwner: ActionOwner,
  operatorAction: string,
  message: string,
  extra: { retryable?: boolean; httpStatus?: number; jsonRpcCode?: number; cause?: unknown } = {},
): never {
  throw new PhaseFailure(
    {
      phase,
      category,
      code,
      retryable: extra.retryable ?? false,
      actionOwner,
      operatorAction,
      message,
      ...(extra.httpStatus !== undefined ? { httpStatus: extra.httpStatus } : {}),
      ...(extra.jsonRpcCode !== undefined ? { jsonRpcCode: extra.jsonRpcCode } : {}),
    },
    extra.cause,
  );
}

export function timeoutFailure(phase: ProbePhase, what: string, error: unknown): never {
  fail(
    phase,
    'timeout',
    `${phase.toLowerCase()}_timeout`,
    'vendor',
    `Check that the server answers ${what} promptly, then retry.`,
    `The server did not answer ${what} in time.`,
    { retryable: true, cause: error },
  );
}

export function errorCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; current && depth < 6; depth += 1) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** Headers that carry the credential, as the server expects it (bearer by default). */
export function credentialHeaders(ctx: ProbeContext): Record<string, string> {
  if (ctx.bearerToken) return { authorization: `Bearer ${ctx.bearerToken}` };
  if (ctx.authType === 'apikey' && ctx.apiKey) {
    return ctx.apiKeyHeader === 'authorization'
      ? { authorization: `Bearer ${ctx.apiKey}` }
      : { [ctx.apiKeyHeader]: ctx.apiKey };
  }
  return {};
}

/** `fetch` for the SDK transports: the guarded client, bounded by what is left of the probe. */
export function probeFetch(ctx: ProbeContext) {
  return (url: string | URL, init?: RequestInit) =>
    ctx.outbound.fetch(url, {
      ...init,
      signal: init?.signal ? AbortSignal.any([init.signal, ctx.signal]) : ctx.signal,
      timeoutMs: Math.max(1, ctx.remaining()),
      maxResponseBytes: ctx.maxResponseBytes,
      credentialHeaders: [ctx.apiKeyHeader],
    });
}

export function authFailure(ctx: ProbeContext, status: number) {
  if (status !== 401 && status !== 403) return;
  const sentCredential = Object.keys(credentialHeaders(ctx)).length > 0;
  if (!sentCredential) {
    fail(
      'AUTH_RESOURCE_DISCOVERY',
      'authorization',
      'authorization_required',
      'organization_admin',
      'The server requires credentials: set the authentication type to API key or OAuth.',
      `The server requires authorization (HTTP ${status}).`,
      { httpStatus: status },
    );
  }
  fail(
    'AUTH_RESOURCE_VALIDATION',
    'authorization',
    ctx.bearerToken ? 'credential_rejected' : 'api_key_rejected',
    'organization_admin',
    'Check the credential: it may be wrong, revoked, or lack access to this server.',
    `The server rejected the credential (HTTP ${status}).`,
    { httpStatus: status },
  );
}
