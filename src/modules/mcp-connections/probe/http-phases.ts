// The HTTP phase of the probe: HTTP_ROUTING.

import {
  OutboundBlockedError,
  OutboundResponseTooLargeError,
  OutboundTimeoutError,
} from '../../../platform/outbound.ts';
import { PhaseFailure } from './diagnostic.ts';
import {
  type ProbeContext,
  type PhaseFunction,
  withDeadline,
  fail,
  timeoutFailure,
  authFailure,
  PhaseTimeout,
  credentialHeaders,
} from './phase-kit.ts';

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
    fail(
      'HTTP_ROUTING',
      'http',
      'redirected_elsewhere',
      'organization_admin',
      'Use the final URL of the MCP endpoint instead of one that redirects.',
      `The URL redirects to another origin (${new URL(post.url).origin}); MCP clients do not follow such redirects.`,
      { httpStatus: post.status },
    );
  }
  authFailure(ctx, post.status);

  const type = mediaType(post.headers.get('content-type'));
  if (post.status === 404 || post.status === 405) {
    if (await isLegacySseEndpoint(ctx, url, auth)) {
      ctx.transportKind = 'sse';
      return;
    }
    if (post.status === 404) {
      fail(
        'HTTP_ROUTING',
        'http',
        'endpoint_not_found',
        'organization_admin',
        'Check the path of the URL; MCP endpoints are usually at /mcp (or /sse for older servers).',
        'The server has no MCP endpoint at this path (HTTP 404).',
        { httpStatus: 404 },
      );
    }
    fail(
      'HTTP_ROUTING',
      'http',
      'method_not_allowed',
      'organization_admin',
      'Check the path of the URL; this path does not accept MCP requests.',
      'The server does not accept MCP messages at this path (HTTP 405).',
      { httpStatus: 405 },
    );
  }
  if (post.status === 429) {
    fail(
      'HTTP_ROUTING',
      'http',
      'rate_limited',
      'vendor',
      'The server is rate limiting requests; retry later.',
      'The server refused the request as rate limited (HTTP 429).',
      { retryable: true, httpStatus: 429 },
    );
  }
  if (post.status >= 500) {
    fail(
      'HTTP_ROUTING',
      'http',
      'server_error',
      'vendor',
      'The server failed to handle the request; retry, and contact its operator if it persists.',
      `The server answered with an error (HTTP ${post.status}).`,
      { retryable: true, httpStatus: post.status },
    );
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
  fail(
    'HTTP_ROUTING',
    'http',
    'not_mcp_endpoint',
    'organization_admin',
    'Check the URL: it serves something other than an MCP endpoint (for example a web page).',
    `The URL answered with ${type ?? 'no content type'} (HTTP ${post.status}), not with MCP messages.`,
    { httpStatus: post.status },
  );
};

function routingRequestFailure(error: unknown): never {
  if (error instanceof PhaseTimeout || error instanceof OutboundTimeoutError)
    timeoutFailure('HTTP_ROUTING', 'the HTTP request', error);
  if (error instanceof OutboundBlockedError) {
    if (error.reason === 'redirect_blocked' || error.reason === 'too_many_redirects') {
      fail(
        'HTTP_ROUTING',
        'network_policy',
        error.reason,
        'network_admin',
        'The server redirects to an address this service does not dial; use the final public URL, or have the operator allow the network.',
        error.reason === 'redirect_blocked'
          ? 'The server redirected to a refused address.'
          : 'The server redirected too many times.',
        { cause: error },
      );
    }
    fail(
      'HTTP_ROUTING',
      'network_policy',
      'address_blocked',
      'network_admin',
      'Use a publicly reachable endpoint.',
      'The request was refused by the outbound network policy.',
      { cause: error },
    );
  }
  if (error instanceof OutboundResponseTooLargeError) {
    fail(
      'HTTP_ROUTING',
      'http',
      'response_too_large',
      'vendor',
      'Check that the URL is the MCP endpoint.',
      'The response was larger than allowed.',
      { cause: error },
    );
  }
  fail(
    'HTTP_ROUTING',
    'http',
    'http_request_failed',
    'vendor',
    'Check that the server speaks HTTP on this port, then retry.',
    'The HTTP request to the server failed.',
    { retryable: true, cause: error },
  );
}

async function isLegacySseEndpoint(ctx: ProbeContext, url: URL, auth: Record<string, string>): Promise<boolean> {
  try {
    const get = await withDeadline(ctx, 'HTTP_ROUTING', (signal, ms) =>
      ctx.outbound.fetch(url, {
        method: 'GET',
        headers: { ...auth, accept: 'text/event-stream' },
        signal,
        timeoutMs: ms,
        maxResponseBytes: ctx.maxResponseBytes,
        credentialHeaders: [ctx.apiKeyHeader],
      }),
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
