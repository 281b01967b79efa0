// probeConnection: runs the phases of ./phases.ts in order within one time budget (15 s by
// default) and answers with the tool names, or with the Diagnostic of the first failing phase.
// runProbeCli: `orgplane probe <url> [--api-key K]`.

import { loadConfig } from '../../../config.ts';
import { createOutboundClient, type OutboundClient } from '../../../platform/outbound.ts';
import { credentialRedactor, type Redactor } from './credentials.ts';
import { boundedCatalog, type ServerCatalog } from './catalog.ts';
import { buildDiagnostic, PhaseFailure, type Diagnostic, type HighestPassed, type ProbePhase } from './diagnostic.ts';
import { phases, type ProbeAuthType, type ProbeContext } from './phases.ts';

export {
  buildDiagnostic,
  highestPassedValues,
  type ActionOwner,
  type Diagnostic,
  type FailureDescription,
  type HighestPassed,
} from './diagnostic.ts';
export { catalogLimits, type CatalogTool, type ServerCatalog } from './catalog.ts';
export { HEADER_VALUE_PATTERN, HEADER_VALUE_RULE } from './credentials.ts';
export { diagnosticSchema } from './schemas.ts';

export const PROBE_TOTAL_TIMEOUT_MS = 15_000;
const DEFAULT_MAX_RESPONSE_BYTES = 1024 * 1024;

export interface ProbeOptions {
  url: string;
  authType: ProbeAuthType;
  apiKey?: string;
  /** Header for the API key; `authorization` (default) sends `Bearer <key>`. */
  apiKeyHeader?: string;
  /** An OAuth access token to present instead of an API key. */
  bearerToken?: string;
  outbound: OutboundClient;
  timeoutMs?: number;
  maxResponseBytes?: number;
  /** Where the full detail of a failure goes, under the diagnostic's referenceId (never to the caller). */
  logger?: { warn(details: Record<string, unknown>, message: string): void };
}

export type ProbeResult =
  | {
      ok: true;
      highestPassed: 'catalog_ready';
      tools: string[];
      protocolVersion: string;
      transport: 'streamable-http' | 'sse';
      catalog: ServerCatalog;
    }
  | { ok: false; diagnostic: Diagnostic };

/** The milestone reached once a phase has passed; `configured` is also the floor when nothing passed. */
const milestoneAfter: Record<ProbePhase, HighestPassed> = {
  CONFIGURATION: 'configured',
  NETWORK_DNS: 'configured',
  NETWORK_TCP: 'reachable',
  NETWORK_TLS: 'reachable',
  HTTP_ROUTING: 'reachable',
  MCP_TRANSPORT: 'reachable',
  MCP_VERSION: 'reachable',
  MCP_INITIALIZE: 'reachable',
  MCP_INITIALIZED: 'protocol_ready',
  MCP_TOOL_DISCOVERY: 'catalog_ready',
};

export async function probeConnection(options: ProbeOptions): Promise<ProbeResult> {
  const totalMs = options.timeoutMs ?? PROBE_TOTAL_TIMEOUT_MS;
  const deadline = Date.now() + totalMs;
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new Error('probe time is up')), totalMs);
  // The one redactor for everything this probe reports: the result, the diagnostic, the log line.
  const redact = credentialRedactor([options.apiKey, options.bearerToken]);
  const ctx: ProbeContext = {
    rawUrl: options.url,
    authType: options.authType,
    apiKey: options.apiKey,
    apiKeyHeader: (options.apiKeyHeader ?? 'authorization').toLowerCase(),
    bearerToken: options.bearerToken,
    outbound: options.outbound,
    remaining: () => Math.max(0, deadline - Date.now()),
    signal: controller.signal,
    maxResponseBytes: options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES,
    redact,
  };

  let highestPassed: HighestPassed = 'configured';
  try {
    for (const phase of phases) {
      await phase.run(ctx);
      highestPassed = milestoneAfter[phase.name];
    }
    return {
      ok: true,
      highestPassed: 'catalog_ready',
      // Tool names are the server's text and end up in responses.
      tools: (ctx.tools ?? []).map(redact),
      protocolVersion: ctx.protocolVersion!,
      transport: ctx.transportKind!,
      catalog: boundedCatalog(
        {
          serverInfo: ctx.initializeResult!.serverInfo,
          protocolVersion: ctx.protocolVersion!,
          capabilities: ctx.initializeResult!.capabilities,
          tools: ctx.toolDefinitions ?? [],
          promptCount: ctx.promptCount ?? null,
          resourceCount: ctx.resourceCount ?? null,
        },
        redact,
      ),
    };
  } catch (error) {
    const failure =
      error instanceof PhaseFailure
        ? error
        : new PhaseFailure(
            {
              phase: 'CONFIGURATION',
              category: 'internal',
              code: 'probe_failed',
              retryable: true,
              actionOwner: 'vendor',
              operatorAction: 'Retry; if it persists, report the reference id to the operator of this service.',
              message: 'The probe failed unexpectedly.',
            },
            error,
          );
    const diagnostic = redactDiagnostic(buildDiagnostic(failure.description, highestPassed, ctx.url), redact);
    options.logger?.warn(
      { referenceId: diagnostic.referenceId, diagnostic, cause: describeCause(failure.cause, redact) },
      'MCP connection probe failed',
    );
    return { ok: false, diagnostic };
  } finally {
    clearTimeout(timer);
    await closeQuietly(ctx);
  }
}

/** Ends the MCP session politely (DELETE for stateful servers) without letting cleanup stall the caller. */
async function closeQuietly(ctx: ProbeContext): Promise<void> {
  const transport = ctx.transport;
  if (!transport) return;
  const ending = (async () => {
    try {
      if (transport.sessionId && transport.terminateSession) await transport.terminateSession();
    } catch {
      // the server may not support DELETE; the session times out on its side
    }
    await ctx.session?.close().catch(() => {});
  })();
  await Promise.race([ending, new Promise((resolve) => setTimeout(resolve, 1_000).unref())]);
}

/**
 * The free text of a diagnostic (it may quote the server) without the credentials sent. The
 * structured fields are this code's own values and stay as they are (the API's enums check them).
 */
function redactDiagnostic(diagnostic: Diagnostic, redact: Redactor): Diagnostic {
  return { ...diagnostic, message: redact(diagnostic.message), operatorAction: redact(diagnostic.operatorAction) };
}

/**
 * The underlying error for the server log: message and code chain, never request headers. Error
 * messages quote what the server answered (JSON-RPC error messages, HTTP error bodies) and what was
 * sent, hence redacted.
 */
function describeCause(cause: unknown, redact: Redactor): unknown {
  const chain: Array<{ name?: string; message?: string; code?: unknown }> = [];
  let current: unknown = cause;
  for (let depth = 0; current && depth < 5; depth += 1) {
    const entry = current as { name?: unknown; message?: unknown; code?: unknown; cause?: unknown };
    chain.push({
      name: typeof entry.name === 'string' ? redact(entry.name) : undefined,
      message: typeof entry.message === 'string' ? redact(entry.message) : undefined,
      code:
        typeof entry.code === 'string' ? redact(entry.code) : typeof entry.code === 'number' ? entry.code : undefined,
    });
    current = entry.cause;
  }
  return chain;
}

export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: Record<string, string | undefined>;
}

const USAGE = `Usage: orgplane probe <url> [--api-key KEY] [--api-key-header NAME] [--timeout MS]

Probes an MCP server the way a connection edit does and prints the result as JSON:
  success: {"ok": true, "highestPassed": "catalog_ready", "tools": [...]}, exit code 0
  failure: {"ok": false, "diagnostic": {...}}, exit code 1
The API key may also come from ORGPLANE_PROBE_API_KEY (keeps it out of shell history).
Outbound calls obey ALLOWED_PRIVATE_NETWORKS like the server does.`;

/** `orgplane probe <url> [--api-key K]`; returns the process exit code (0 ok, 1 probe failed, 2 usage). */
export async function runProbeCli(argv: string[], io: CliIo = defaultIo()): Promise<number> {
  let url: string | undefined;
  let apiKey = io.env.ORGPLANE_PROBE_API_KEY || undefined;
  let apiKeyHeader: string | undefined;
  let timeoutMs: number | undefined;
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i]!;
    const [flag, inline] =
      arg.startsWith('--') && arg.includes('=')
        ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)]
        : [arg, undefined];
    const value = () => inline ?? argv[++i];
    if (flag === '--help' || flag === '-h') {
      io.stdout(`${USAGE}\n`);
      return 0;
    } else if (flag === '--api-key') {
      apiKey = value();
    } else if (flag === '--api-key-header') {
      apiKeyHeader = value();
    } else if (flag === '--timeout') {
      timeoutMs = Number(value());
    } else if (!flag.startsWith('-') && url === undefined) {
      url = arg;
    } else {
      io.stderr(`Unknown argument: ${arg}\n${USAGE}\n`);
      return 2;
    }
  }
  if (!url || (apiKey !== undefined && apiKey.length === 0) || (timeoutMs !== undefined && !(timeoutMs > 0))) {
    io.stderr(`${USAGE}\n`);
    return 2;
  }
  const outbound = createOutboundClient({ allowedPrivateNetworks: loadConfig(io.env).allowedPrivateNetworks });
  try {
    const result = await probeConnection({
      url,
      authType: apiKey ? 'apikey' : 'none',
      ...(apiKey ? { apiKey } : {}),
      ...(apiKeyHeader ? { apiKeyHeader } : {}),
      ...(timeoutMs ? { timeoutMs } : {}),
      outbound,
    });
    io.stdout(`${JSON.stringify(result, null, 2)}\n`);
    return result.ok ? 0 : 1;
  } finally {
    await outbound.close();
  }
}

function defaultIo(): CliIo {
  return {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    env: process.env,
  };
}
