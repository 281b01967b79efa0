// A tools/call through orgplane's own MCP client code. orgplane has no route that calls a tool yet,
// so the conformance scenarios that expect one get it here: the probe's phases, in order, open the
// session exactly as POST .../test does (guarded outbound client, the SDK transport, initialize,
// the negotiated version, notifications/initialized, tools/list), and then the probe's session
// sends the tools/call. A refusal comes back with its WWW-Authenticate (for orgplane's step-up).
import { CallToolResultSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createOutboundClient } from '../../src/platform/outbound.ts';
import { phases, type ProbeContext } from '../../src/modules/mcp-connections/probe/phases.ts';
import { credentialRedactor } from '../../src/modules/mcp-connections/probe/credentials.ts';

const outbound = createOutboundClient({ allowedPrivateNetworks: ['127.0.0.0/8', '::1/128'] });

/** What came back: the result, or the HTTP status the server refused the call with. */
export type ToolCallOutcome =
  | { result: CallToolResult }
  | { httpStatus: number; wwwAuthenticate: string | null; error: Error };

export async function callToolAsProbe(
  url: string,
  bearerToken: string | undefined,
  name: string,
  args: Record<string, unknown>,
): Promise<ToolCallOutcome> {
  let wwwAuthenticate: string | null = null;
  // The SDK's transport error keeps the status, not the headers: the challenge is read on the way.
  const watched = {
    ...outbound,
    fetch: async (...args: Parameters<typeof outbound.fetch>) => {
      const response = await outbound.fetch(...args);
      if (response.status === 401 || response.status === 403)
        wwwAuthenticate = response.headers.get('www-authenticate');
      return response;
    },
  };
  const controller = new AbortController();
  const deadline = Date.now() + 15_000;
  const ctx: ProbeContext = {
    rawUrl: url,
    authType: 'none',
    apiKey: undefined,
    apiKeyHeader: 'authorization',
    bearerToken,
    outbound: watched,
    remaining: () => Math.max(0, deadline - Date.now()),
    signal: controller.signal,
    maxResponseBytes: 1024 * 1024,
    redact: credentialRedactor([bearerToken]),
  };
  try {
    for (const phase of phases) await phase.run(ctx);
    try {
      const result = await ctx.session!.request(
        { method: 'tools/call', params: { name, arguments: args } },
        CallToolResultSchema,
        { timeout: ctx.remaining() },
      );
      return { result: result as CallToolResult };
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (typeof code === 'number' && code >= 400 && code <= 599)
        return { httpStatus: code, wwwAuthenticate, error: error as Error };
      throw error;
    }
  } finally {
    controller.abort();
    await ctx.session?.close().catch(() => {});
  }
}
