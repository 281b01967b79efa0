// The connection probe, one function per phase, run in this order:
//   CONFIGURATION -> NETWORK_DNS -> NETWORK_TCP -> NETWORK_TLS -> HTTP_ROUTING -> MCP_TRANSPORT
//   -> MCP_VERSION -> MCP_INITIALIZE -> MCP_INITIALIZED -> MCP_TOOL_DISCOVERY
// Each phase reads what earlier phases left in the context, does one thing, and either returns
// or throws a PhaseFailure that says what broke and who can fix it. Every socket and request goes
// to addresses the guarded outbound client has checked: DNS answers come from `outbound.resolve`,
// the TCP/TLS checks dial only those addresses, and all HTTP goes through `outbound.fetch`.

import { connect as netConnect, isIP, type Socket } from 'node:net';
import { connect as tlsConnect, rootCertificates } from 'node:tls';
import { Protocol, type RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { AnySchema, SchemaOutput } from '@modelcontextprotocol/sdk/server/zod-compat.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  InitializeResultSchema,
  isJSONRPCErrorResponse,
  LATEST_PROTOCOL_VERSION,
  ListToolsResultSchema,
  McpError,
  ResultSchema,
  SUPPORTED_PROTOCOL_VERSIONS,
  type ClientNotification,
  type ClientRequest,
  type ClientResult,
  type InitializeResult,
  type JSONRPCMessage,
} from '@modelcontextprotocol/sdk/types.js';
import {
  OutboundBlockedError,
  OutboundResponseTooLargeError,
  OutboundTimeoutError,
  type OutboundClient,
  type ResolvedAddress,
} from '../../../platform/outbound.ts';
import { HEADER_VALUE_RULE, isHeaderValue, type Redactor } from './credentials.ts';
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
  transport?: Transport & { setProtocolVersion?: (version: string) => void; terminateSession?: () => Promise<void>; sessionId?: string };
  session?: ProbeSession;
  /** The initialize exchange as it came back: a result (unvalidated) or a JSON-RPC error. */
  initializeResponse?: { result: Record<string, unknown> } | { error: McpError };
  protocolVersion?: string;
  initializeResult?: InitializeResult;
  tools?: string[];
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

const MAX_TOOL_PAGES = 20;
const CLIENT_INFO = { name: 'orgplane-probe', version: '1.0.0' };

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
    transport.onmessage = <T extends JSONRPCMessage>(message: T, extra?: Parameters<NonNullable<Transport['onmessage']>>[1]) => {
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

class PhaseTimeout extends Error {
  constructor(phase: string, ms: number) {
    super(`${phase} did not complete within ${ms} ms`);
    this.name = 'PhaseTimeout';
  }
}

function phaseBudget(ctx: ProbeContext, phase: ProbePhase): number {
  return Math.max(1, Math.min(phaseTimeoutsMs[phase], ctx.remaining()));
}

/** Runs `work` with an abort signal that fires at the phase's deadline (or the probe's). */
async function withDeadline<T>(ctx: ProbeContext, phase: ProbePhase, work: (signal: AbortSignal, ms: number) => Promise<T>): Promise<T> {
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

function fail(
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

function timeoutFailure(phase: ProbePhase, what: string, error: unknown): never {
  fail(phase, 'timeout', `${phase.toLowerCase()}_timeout`, 'vendor', `Check that the server answers ${what} promptly, then retry.`,
    `The server did not answer ${what} in time.`, { retryable: true, cause: error });
}

function errorCode(error: unknown): string | undefined {
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
    return ctx.apiKeyHeader === 'authorization' ? { authorization: `Bearer ${ctx.apiKey}` } : { [ctx.apiKeyHeader]: ctx.apiKey };
  }
  return {};
}

/** `fetch` for the SDK transports: the guarded client, bounded by what is left of the probe. */
function probeFetch(ctx: ProbeContext) {
  return (url: string | URL, init?: RequestInit) =>
    ctx.outbound.fetch(url, {
      ...init,
      signal: init?.signal ? AbortSignal.any([init.signal, ctx.signal]) : ctx.signal,
      timeoutMs: Math.max(1, ctx.remaining()),
      maxResponseBytes: ctx.maxResponseBytes,
      credentialHeaders: [ctx.apiKeyHeader],
    });
}

// ---------------------------------------------------------------------------------------------
// CONFIGURATION: the URL is an absolute http(s) URL without embedded credentials, and the
// credential the auth type needs is present.
export const configuration: PhaseFunction = async (ctx) => {
  let url: URL;
  try {
    url = new URL(ctx.rawUrl);
  } catch (error) {
    fail('CONFIGURATION', 'configuration', 'invalid_url', 'organization_admin', 'Enter the absolute URL of the MCP endpoint, e.g. https://mcp.example.com/mcp.',
      'The connection URL is not a valid absolute URL.', { cause: error });
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    fail('CONFIGURATION', 'configuration', 'unsupported_scheme', 'organization_admin', 'Use an http:// or https:// URL.',
      `The URL scheme ${url.protocol} is not supported; MCP over HTTP needs http or https.`);
  }
  if (url.username || url.password) {
    fail('CONFIGURATION', 'configuration', 'credentials_in_url', 'organization_admin', 'Remove user:password from the URL and put the secret in the API key field.',
      'The URL carries credentials; they would be sent and logged with every request.');
  }
  if (ctx.authType === 'apikey' && !ctx.apiKey) {
    fail('CONFIGURATION', 'configuration', 'api_key_missing', 'organization_admin', 'Provide the API key for this server.',
      'The connection uses API-key authentication but no API key is available.');
  }
  // Refused before any request: fetch would throw an error that quotes the whole header value.
  // (The API refuses such keys at input; this covers stored ones, tokens and the CLI.)
  if (ctx.authType === 'apikey' && ctx.apiKey && !isHeaderValue(ctx.apiKey)) {
    fail('CONFIGURATION', 'configuration', 'invalid_api_key', 'organization_admin', `Enter the API key again; it may contain only ${HEADER_VALUE_RULE}.`,
      'The API key contains characters that cannot be sent in an HTTP header.');
  }
  if (ctx.bearerToken && !isHeaderValue(ctx.bearerToken)) {
    fail('CONFIGURATION', 'configuration', 'invalid_credential', 'organization_admin', 'Connect again to obtain a new credential.',
      'The stored credential contains characters that cannot be sent in an HTTP header.');
  }
  url.hash = '';
  ctx.url = url;
};

// NETWORK_DNS: the host name resolves, and every address it resolves to may be dialed.
export const networkDns: PhaseFunction = async (ctx) => {
  const url = ctx.url!;
  try {
    ctx.addresses = await withDeadline(ctx, 'NETWORK_DNS', () => ctx.outbound.resolve(url.hostname));
  } catch (error) {
    if (error instanceof PhaseTimeout) timeoutFailure('NETWORK_DNS', 'the DNS lookup of the host name', error);
    if (error instanceof OutboundBlockedError) {
      fail('NETWORK_DNS', 'network_policy', 'address_blocked', 'network_admin',
        'Use a publicly reachable endpoint, or have the operator allow this network in ALLOWED_PRIVATE_NETWORKS.',
        `The host resolves to an address in a ${error.range ?? 'private'} range, which this service does not dial.`, { cause: error });
    }
    const code = errorCode(error);
    if (code === 'EAI_AGAIN' || code === 'ETIMEOUT' || code === 'ESERVFAIL') {
      fail('NETWORK_DNS', 'dns', 'dns_unavailable', 'network_admin', 'The DNS lookup failed temporarily; retry, and check the resolver if it persists.',
        'The host name could not be resolved right now.', { retryable: true, cause: error });
    }
    fail('NETWORK_DNS', 'dns', 'dns_not_found', 'organization_admin', 'Check the host name in the URL.',
      'The host name does not resolve to any address.', { cause: error });
  }
};

function defaultPort(url: URL): number {
  return url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
}

// NETWORK_TCP: a TCP connection opens to one of the checked addresses.
export const networkTcp: PhaseFunction = async (ctx) => {
  const port = defaultPort(ctx.url!);
  let lastError: unknown;
  for (const { address } of ctx.addresses!.slice(0, 4)) {
    try {
      await withDeadline(ctx, 'NETWORK_TCP', (signal) => openSocket(() => netConnect({ host: address, port }), 'connect', signal));
      return;
    } catch (error) {
      lastError = error;
      if (error instanceof PhaseTimeout) break;
    }
  }
  if (lastError instanceof PhaseTimeout) {
    fail('NETWORK_TCP', 'network', 'connection_timeout', 'network_admin', 'Check that a firewall lets this service reach the server, then retry.',
      `No TCP connection to port ${port} within the time allowed.`, { retryable: true, cause: lastError });
  }
  const code = errorCode(lastError);
  if (code === 'ECONNREFUSED') {
    fail('NETWORK_TCP', 'network', 'connection_refused', 'vendor', `Check that the MCP server is running and listening on port ${port}.`,
      `The server refused the connection on port ${port}.`, { retryable: true, cause: lastError });
  }
  fail('NETWORK_TCP', 'network', 'host_unreachable', 'network_admin', 'Check routing and firewalls between this service and the server.',
    `The server could not be reached on port ${port}${code ? ` (${code})` : ''}.`, { retryable: true, cause: lastError });
};

/** Opens a socket, waits for `event`, and closes it: the check is the handshake itself. */
function openSocket(open: () => Socket, event: 'connect' | 'secureConnect', signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = open();
    const onAbort = () => socket.destroy();
    signal.addEventListener('abort', onAbort, { once: true });
    socket.once(event, () => {
      signal.removeEventListener('abort', onAbort);
      socket.destroy();
      resolve();
    });
    socket.once('error', (error) => {
      signal.removeEventListener('abort', onAbort);
      socket.destroy();
      reject(error);
    });
  });
}

const UNTRUSTED_CERT_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_UNTRUSTED',
]);

// NETWORK_TLS: for https, the handshake succeeds and the certificate is valid for the host name.
export const networkTls: PhaseFunction = async (ctx) => {
  const url = ctx.url!;
  if (url.protocol !== 'https:') return;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const address = ctx.addresses![0]!.address;
  try {
    await withDeadline(ctx, 'NETWORK_TLS', (signal) =>
      openSocket(
        () =>
          tlsConnect({
            host: address,
            port: defaultPort(url),
            // SNI and the certificate check use the name from the URL (servername); the socket goes to the checked address.
            ...(isIP(host) === 0 ? { servername: host } : {}),
            ALPNProtocols: ['http/1.1'],
            // The same trust as the HTTP requests that follow (extra CAs exist only in tests).
            ...(ctx.outbound.ca ? { ca: ([] as string[]).concat(ctx.outbound.ca, rootCertificates) } : {}),
          }),
        'secureConnect',
        signal,
      ),
    );
  } catch (error) {
    if (error instanceof PhaseTimeout) timeoutFailure('NETWORK_TLS', 'the TLS handshake', error);
    const code = errorCode(error) ?? '';
    if (UNTRUSTED_CERT_CODES.has(code)) {
      fail('NETWORK_TLS', 'tls', 'tls_certificate_untrusted', 'vendor', 'Serve a certificate issued by a publicly trusted authority.',
        'The server certificate is not signed by a trusted certificate authority (self-signed or incomplete chain).', { cause: error });
    }
    if (code === 'CERT_HAS_EXPIRED' || code === 'CERT_NOT_YET_VALID') {
      fail('NETWORK_TLS', 'tls', 'tls_certificate_expired', 'vendor', 'Renew the server certificate.',
        'The server certificate is expired or not yet valid.', { cause: error });
    }
    if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') {
      fail('NETWORK_TLS', 'tls', 'tls_hostname_mismatch', 'vendor', 'Serve a certificate that names this host, or use the host name the certificate names.',
        'The server certificate does not match the host name of the URL.', { cause: error });
    }
    fail('NETWORK_TLS', 'tls', 'tls_handshake_failed', 'vendor', 'Check the TLS configuration of the server (protocols, ciphers, certificate).',
      'The TLS handshake with the server failed.', { retryable: true, cause: error });
  }
};

// HTTP_ROUTING: the URL answers as an MCP endpoint, not a 404 page, a website or an error page.
// It sends a JSON-RPC `ping` (the one request MCP allows before initialize), which creates no
// session. A 404/405 may mean a legacy HTTP+SSE endpoint, recognised by a GET that opens an
// event stream.
export const httpRouting: PhaseFunction = async (ctx) => {
  const url = ctx.url!;
  const auth = credentialHeaders(ctx);
  let post: Response;
  try {
    post = await withDeadline(ctx, 'HTTP_ROUTING', (signal, ms) =>
      ctx.outbound.fetch(url, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 'orgplane-probe-ping', method: 'ping' }),
        signal,
        timeoutMs: ms,
        maxResponseBytes: ctx.maxResponseBytes,
        credentialHeaders: [ctx.apiKeyHeader],
      }),
    );
  } catch (error) {
    routingRequestFailure(error);
  }
  await post.body?.cancel().catch(() => {});
  if (new URL(post.url || url.href).origin !== url.origin) {
    fail('HTTP_ROUTING', 'http', 'redirected_elsewhere', 'organization_admin', 'Use the final URL of the MCP endpoint instead of one that redirects.',
      `The URL redirects to another origin (${new URL(post.url).origin}); MCP clients do not follow such redirects.`, { httpStatus: post.status });
  }
  authFailure(ctx, post.status);

  const type = mediaType(post.headers.get('content-type'));
  if (post.status === 404 || post.status === 405) {
    if (await isLegacySseEndpoint(ctx, url, auth)) {
      ctx.transportKind = 'sse';
      return;
    }
    if (post.status === 404) {
      fail('HTTP_ROUTING', 'http', 'endpoint_not_found', 'organization_admin', 'Check the path of the URL; MCP endpoints are usually at /mcp (or /sse for older servers).',
        'The server has no MCP endpoint at this path (HTTP 404).', { httpStatus: 404 });
    }
    fail('HTTP_ROUTING', 'http', 'method_not_allowed', 'organization_admin', 'Check the path of the URL; this path does not accept MCP requests.',
      'The server does not accept MCP messages at this path (HTTP 405).', { httpStatus: 405 });
  }
  if (post.status === 429) {
    fail('HTTP_ROUTING', 'http', 'rate_limited', 'vendor', 'The server is rate limiting requests; retry later.',
      'The server refused the request as rate limited (HTTP 429).', { retryable: true, httpStatus: 429 });
  }
  if (post.status >= 500) {
    fail('HTTP_ROUTING', 'http', 'server_error', 'vendor', 'The server failed to handle the request; retry, and contact its operator if it persists.',
      `The server answered with an error (HTTP ${post.status}).`, { retryable: true, httpStatus: post.status });
  }
  if (type === 'application/json' || type === 'text/event-stream') {
    // 2xx: a ping answered. 4xx with JSON: an MCP endpoint refusing a session-less ping (stateful servers).
    ctx.transportKind = 'streamable-http';
    return;
  }
  if (post.status >= 400 && type !== 'text/html') {
    // Some stateful servers refuse a session-less request in plain text; initialize will tell.
    ctx.transportKind = 'streamable-http';
    return;
  }
  fail('HTTP_ROUTING', 'http', 'not_mcp_endpoint', 'organization_admin', 'Check the URL: it serves something other than an MCP endpoint (for example a web page).',
    `The URL answered with ${type ?? 'no content type'} (HTTP ${post.status}), not with MCP messages.`, { httpStatus: post.status });
};

function routingRequestFailure(error: unknown): never {
  if (error instanceof PhaseTimeout || error instanceof OutboundTimeoutError) timeoutFailure('HTTP_ROUTING', 'the HTTP request', error);
  if (error instanceof OutboundBlockedError) {
    if (error.reason === 'redirect_blocked' || error.reason === 'too_many_redirects') {
      fail('HTTP_ROUTING', 'network_policy', error.reason, 'network_admin',
        'The server redirects to an address this service does not dial; use the final public URL, or have the operator allow the network.',
        error.reason === 'redirect_blocked' ? 'The server redirected to a refused address.' : 'The server redirected too many times.', { cause: error });
    }
    fail('HTTP_ROUTING', 'network_policy', 'address_blocked', 'network_admin', 'Use a publicly reachable endpoint.',
      'The request was refused by the outbound network policy.', { cause: error });
  }
  if (error instanceof OutboundResponseTooLargeError) {
    fail('HTTP_ROUTING', 'http', 'response_too_large', 'vendor', 'Check that the URL is the MCP endpoint.', 'The response was larger than allowed.', { cause: error });
  }
  fail('HTTP_ROUTING', 'http', 'http_request_failed', 'vendor', 'Check that the server speaks HTTP on this port, then retry.',
    'The HTTP request to the server failed.', { retryable: true, cause: error });
}

function authFailure(ctx: ProbeContext, status: number) {
  if (status !== 401 && status !== 403) return;
  const sentCredential = Object.keys(credentialHeaders(ctx)).length > 0;
  if (!sentCredential) {
    fail('AUTH_RESOURCE_DISCOVERY', 'authorization', 'authorization_required', 'organization_admin',
      'The server requires credentials: set the authentication type to API key or OAuth.',
      `The server requires authorization (HTTP ${status}).`, { httpStatus: status });
  }
  fail('AUTH_RESOURCE_VALIDATION', 'authorization', ctx.bearerToken ? 'credential_rejected' : 'api_key_rejected', 'organization_admin',
    'Check the credential: it may be wrong, revoked, or lack access to this server.',
    `The server rejected the credential (HTTP ${status}).`, { httpStatus: status });
}

async function isLegacySseEndpoint(ctx: ProbeContext, url: URL, auth: Record<string, string>): Promise<boolean> {
  try {
    const get = await withDeadline(ctx, 'HTTP_ROUTING', (signal, ms) =>
      ctx.outbound.fetch(url, { method: 'GET', headers: { ...auth, accept: 'text/event-stream' }, signal, timeoutMs: ms, maxResponseBytes: ctx.maxResponseBytes, credentialHeaders: [ctx.apiKeyHeader] }),
    );
    await get.body?.cancel().catch(() => {});
    authFailure(ctx, get.status);
    return get.ok && mediaType(get.headers.get('content-type')) === 'text/event-stream';
  } catch (error) {
    if (error instanceof PhaseFailure) throw error;
    return false;
  }
}

function mediaType(contentType: string | null): string | undefined {
  return contentType?.split(';')[0]?.trim().toLowerCase() || undefined;
}

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
          reconnectionOptions: { maxRetries: 0, initialReconnectionDelay: 1_000, maxReconnectionDelay: 1_000, reconnectionDelayGrowFactor: 1 },
        });
  const session = new ProbeSession();
  session.onerror = () => {}; // errors surface through the request below
  ctx.transport = transport;
  ctx.session = session;
  try {
    await withDeadline(ctx, 'MCP_TRANSPORT', async (signal, ms) => {
      await session.connect(transport);
      const answer = await session.requestOrServerError(
        { method: 'initialize', params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: CLIENT_INFO } },
        ResultSchema,
        { signal, timeout: ms + 1_000 },
      );
      // A JSON-RPC error from the server still proves the transport works.
      ctx.initializeResponse = 'serverError' in answer ? { error: answer.serverError } : { result: answer.result as Record<string, unknown> };
    });
  } catch (error) {
    if (error instanceof PhaseTimeout || error instanceof OutboundTimeoutError) timeoutFailure('MCP_TRANSPORT', 'the initialize request', error);
    tooLargeFailure('MCP_TRANSPORT', error);
    const status = httpStatusOf(error);
    if (status === 401 || status === 403) authFailure(ctx, status);
    const kind = ctx.transportKind === 'sse' ? 'legacy HTTP+SSE' : 'Streamable HTTP';
    fail('MCP_TRANSPORT', 'transport', 'transport_error', 'vendor', `Check that the server implements the MCP ${kind} transport at this URL.`,
      `The ${kind} transport failed to carry the initialize request${status ? ` (HTTP ${status})` : ''}.`,
      { retryable: status !== undefined && status >= 500, ...(status ? { httpStatus: status } : {}), cause: error });
  }
};

/** A response cut at the size cap, wherever in the SDK's error chain it surfaced. */
function tooLargeFailure(phase: ProbePhase, error: unknown): void {
  let current: unknown = error;
  for (let depth = 0; current && depth < 6; depth += 1) {
    if (current instanceof OutboundResponseTooLargeError) {
      fail(phase, 'transport', 'response_too_large', 'vendor', 'The server sent more than this service reads for one message; reduce the response size.',
        `The server's response exceeded ${current.limitBytes} bytes.`, { cause: error });
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
      fail('MCP_VERSION', 'protocol', 'unsupported_protocol_version', 'vendor',
        `Update the server to a supported MCP protocol version (${SUPPORTED_PROTOCOL_VERSIONS.join(', ')}).`,
        'The server refused every protocol version this service speaks.', { jsonRpcCode: response.error.code, cause: response.error });
    }
    return; // another error to initialize: judged by MCP_INITIALIZE
  }
  const version = response.result.protocolVersion;
  if (typeof version !== 'string' || !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
    fail('MCP_VERSION', 'protocol', 'unsupported_protocol_version', 'vendor',
      `Update the server to a supported MCP protocol version (${SUPPORTED_PROTOCOL_VERSIONS.join(', ')}).`,
      // Redacted before it is cut: a cut credential would no longer be recognised (a hostile server may answer with the header it got).
      `The server answered with protocol version ${typeof version === 'string' ? JSON.stringify(ctx.redact(version).slice(0, 32)) : 'none'}, which this service does not speak.`);
  }
  ctx.protocolVersion = version;
  ctx.transport!.setProtocolVersion?.(version);
};

// MCP_INITIALIZE: initialize succeeded with a well-formed result.
export const mcpInitialize: PhaseFunction = async (ctx) => {
  const response = ctx.initializeResponse!;
  if ('error' in response) {
    fail('MCP_INITIALIZE', 'protocol', 'initialize_rejected', 'vendor', 'Check the server logs for why it refused to initialize.',
      'The server answered initialize with an error.', { jsonRpcCode: response.error.code, cause: response.error });
  }
  const parsed = InitializeResultSchema.safeParse(response.result);
  if (!parsed.success) {
    fail('MCP_INITIALIZE', 'protocol', 'invalid_initialize_result', 'vendor', 'The server must answer initialize with capabilities and serverInfo as MCP defines.',
      'The server answered initialize with a malformed result.', { cause: parsed.error });
  }
  ctx.initializeResult = parsed.data;
};

// MCP_INITIALIZED: the server accepts the `notifications/initialized` that opens the session.
export const mcpInitialized: PhaseFunction = async (ctx) => {
  try {
    await withDeadline(ctx, 'MCP_INITIALIZED', () => ctx.session!.notification({ method: 'notifications/initialized' }));
  } catch (error) {
    if (error instanceof PhaseTimeout || error instanceof OutboundTimeoutError) timeoutFailure('MCP_INITIALIZED', 'the initialized notification', error);
    const status = httpStatusOf(error);
    fail('MCP_INITIALIZED', 'protocol', 'initialized_rejected', 'vendor', 'Check that the server accepts notifications/initialized after initialize.',
      `The server refused the initialized notification${status ? ` (HTTP ${status})` : ''}.`, { ...(status ? { httpStatus: status } : {}), cause: error });
  }
};

// MCP_TOOL_DISCOVERY: tools/list returns the tool catalog (all pages, bounded).
export const mcpToolDiscovery: PhaseFunction = async (ctx) => {
  if (!ctx.initializeResult!.capabilities.tools) {
    ctx.tools = []; // the server offers no tools: an empty catalog is the correct answer
    return;
  }
  const names: string[] = [];
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
          fail('MCP_TOOL_DISCOVERY', 'protocol', 'tools_list_failed', 'vendor', 'Check the server logs for why listing tools failed.',
            'The server answered tools/list with an error.', { jsonRpcCode: error.code, cause: error });
        }
        const result = answer.result;
        for (const tool of result.tools) names.push(tool.name);
        cursor = result.nextCursor;
        if (!cursor) break;
      }
    });
  } catch (error) {
    if (error instanceof PhaseTimeout || error instanceof OutboundTimeoutError) timeoutFailure('MCP_TOOL_DISCOVERY', 'tools/list', error);
    if (error instanceof PhaseFailure) throw error;
    tooLargeFailure('MCP_TOOL_DISCOVERY', error);
    const status = httpStatusOf(error);
    if (status === 401 || status === 403) authFailure(ctx, status);
    const malformed = error instanceof Error && (error.name === 'ZodError' || error.name === '$ZodError');
    fail('MCP_TOOL_DISCOVERY', 'protocol', malformed ? 'invalid_tools_list' : 'tools_list_failed', 'vendor', 'Check that the server implements tools/list as MCP defines.',
      malformed ? 'The server answered tools/list with a malformed result.' : `Listing tools failed${status ? ` (HTTP ${status})` : ''}.`,
      { ...(status ? { httpStatus: status } : {}), cause: error });
  }
  ctx.tools = names;
};

/** The phases in order, each with the milestone reached once it has passed. */
export const phases: ReadonlyArray<{ name: ProbePhase; run: PhaseFunction }> = [
  { name: 'CONFIGURATION', run: configuration },
  { name: 'NETWORK_DNS', run: networkDns },
  { name: 'NETWORK_TCP', run: networkTcp },
  { name: 'NETWORK_TLS', run: networkTls },
  { name: 'HTTP_ROUTING', run: httpRouting },
  { name: 'MCP_TRANSPORT', run: mcpTransport },
  { name: 'MCP_VERSION', run: mcpVersion },
  { name: 'MCP_INITIALIZE', run: mcpInitialize },
  { name: 'MCP_INITIALIZED', run: mcpInitialized },
  { name: 'MCP_TOOL_DISCOVERY', run: mcpToolDiscovery },
];
