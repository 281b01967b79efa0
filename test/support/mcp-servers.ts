// Real MCP servers for the tests, built on the MCP SDK's own server classes and served over real
// sockets: Streamable HTTP (stateless and stateful), legacy HTTP+SSE, servers that demand an API
// key, and servers that fail at one precise phase of a connection probe.

import { randomUUID } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server as HttpServer,
  type ServerResponse,
} from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import {
  ErrorCode,
  InitializeRequestSchema,
  isInitializeRequest,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';

export interface RunningServer {
  /** The MCP endpoint URL. */
  url: string;
  port: number;
  /** HTTP requests received, in order: "METHOD /path". */
  requests: string[];
  close(): Promise<void>;
}

/** How a test server misbehaves, one MCP phase at a time. */
export type Fault =
  | 'none'
  | 'unsupported_version' // initialize answers with a protocol version nobody supports
  | 'initialize_error' // initialize answers with a JSON-RPC error
  | 'tools_list_error' // tools/list answers with a JSON-RPC error
  // Hostile servers that echo the Authorization header they received (a credential) back:
  | 'echo_credential_in_error' // as the message of a JSON-RPC error to initialize
  | 'echo_credential_in_version'; // as the protocolVersion of initialize

export interface McpServerOptions {
  /** Tool names the server offers. */
  tools?: string[];
  /**
   * The whole tool definitions the server lists (instead of `tools`), read at every tools/list, so a
   * test may change the catalog of a running server. Unchecked: a test may offer what the SDK would refuse.
   */
  toolDefinitions?: () => unknown[];
  /** Prompt names and resource URIs the server offers (declaring those capabilities). */
  prompts?: string[];
  resources?: string[];
  /** Declare no `tools` capability (a server of prompts or resources only). */
  withoutTools?: boolean;
  /** serverInfo of initialize (default orgplane-test-server 1.0.0). */
  serverInfo?: { name: string; version: string };
  /** When set, every request must carry `Authorization: Bearer <apiKey>` (or `headerName: apiKey`). */
  apiKey?: string;
  apiKeyHeader?: string;
  /** Read at every request (stateless servers), so a test may switch it on a running server. */
  fault?: Fault;
  /** The JSON-RPC code of the error an `initialize_error` or `tools_list_error` server answers with. */
  errorCode?: number;
  /** MCP endpoint path (default /mcp; /sse for legacy servers). */
  path?: string;
  /**
   * Streamable HTTP: awaited before each request is answered. A test acts at that exact moment
   * (say, changes the database while the app is probing this server), without timing.
   */
  onRequest?: (req: IncomingMessage) => Promise<void>;
}

/** One SDK Server with the requested tools and fault. */
function buildSdkServer(options: McpServerOptions): Server {
  const capabilities = {
    ...(options.withoutTools ? {} : { tools: {} }),
    ...(options.prompts ? { prompts: {} } : {}),
    ...(options.resources ? { resources: {} } : {}),
  };
  const server = new Server(options.serverInfo ?? { name: 'orgplane-test-server', version: '1.0.0' }, { capabilities });
  const tools = options.tools ?? ['echo', 'add'];
  // The SDK refuses a handler for a capability the server does not declare.
  if (!options.withoutTools) {
    server.setRequestHandler(ListToolsRequestSchema, async () => {
      if (options.fault === 'tools_list_error')
        throw new McpError(options.errorCode ?? ErrorCode.InternalError, 'tool catalog unavailable');
      if (options.toolDefinitions) return { tools: options.toolDefinitions() } as never;
      return {
        tools: tools.map((name) => ({
          name,
          description: `the ${name} tool`,
          inputSchema: { type: 'object' as const },
        })),
      };
    });
  }
  const prompts = options.prompts;
  if (prompts)
    server.setRequestHandler(ListPromptsRequestSchema, async () => ({ prompts: prompts.map((name) => ({ name })) }));
  const resources = options.resources;
  if (resources)
    server.setRequestHandler(ListResourcesRequestSchema, async () => ({
      resources: resources.map((uri) => ({ uri, name: uri })),
    }));
  if (options.fault === 'unsupported_version') {
    server.setRequestHandler(InitializeRequestSchema, async () => ({
      protocolVersion: '1999-01-01',
      capabilities: { tools: {} },
      serverInfo: { name: 'ancient-server', version: '0.0.1' },
    }));
  }
  if (options.fault === 'initialize_error') {
    server.setRequestHandler(InitializeRequestSchema, async () => {
      throw new McpError(options.errorCode ?? ErrorCode.InvalidParams, 'this server refuses to initialize');
    });
  }
  if (options.fault === 'echo_credential_in_error') {
    server.setRequestHandler(InitializeRequestSchema, async (_request, extra) => {
      throw new McpError(
        ErrorCode.InvalidRequest,
        `unknown credential: ${String(extra.requestInfo?.headers.authorization)}`,
      );
    });
  }
  if (options.fault === 'echo_credential_in_version') {
    server.setRequestHandler(InitializeRequestSchema, async (_request, extra) => ({
      protocolVersion: String(extra.requestInfo?.headers.authorization),
      capabilities: { tools: {} },
      serverInfo: { name: 'echoing-server', version: '0.0.1' },
    }));
  }
  return server;
}

function authorized(req: IncomingMessage, options: McpServerOptions): boolean {
  if (options.apiKey === undefined) return true;
  const header = (options.apiKeyHeader ?? 'authorization').toLowerCase();
  const expected = header === 'authorization' ? `Bearer ${options.apiKey}` : options.apiKey;
  return req.headers[header] === expected;
}

function refuse(res: ServerResponse) {
  res
    .writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer error="invalid_token"' })
    .end(JSON.stringify({ error: 'invalid_token' }));
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text ? JSON.parse(text) : undefined;
}

function jsonRpcError(res: ServerResponse, status: number, message: string) {
  res
    .writeHead(status, { 'content-type': 'application/json' })
    .end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}

async function listen(server: HttpServer, path: string, scheme = 'http'): Promise<{ port: number; url: string }> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { port, url: `${scheme}://127.0.0.1:${port}${path}` };
}

function closer(server: HttpServer, cleanup: () => Promise<void> = async () => {}) {
  return async () => {
    await cleanup();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
}

/**
 * Streamable HTTP. Stateless: a fresh SDK server and transport per request, no session id.
 * Stateful: the transport issues an `Mcp-Session-Id` at initialize and requests must carry it.
 */
export async function startStreamableServer(
  options: McpServerOptions & { stateful?: boolean } = {},
): Promise<RunningServer> {
  const path = options.path ?? '/mcp';
  const requests: string[] = [];
  const sessions = new Map<string, StreamableHTTPServerTransport>();

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    requests.push(`${req.method} ${req.url}`);
    await options.onRequest?.(req);
    if (!authorized(req, options)) return refuse(res);
    const url = new URL(req.url ?? '/', 'http://test');
    if (url.pathname !== path) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    if (!options.stateful) {
      const server = buildSdkServer(options);
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      res.on('close', () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(req, res, req.method === 'POST' ? await readJson(req) : undefined);
      return;
    }
    const sessionId = req.headers['mcp-session-id'];
    if (typeof sessionId === 'string') {
      const transport = sessions.get(sessionId);
      if (!transport) return jsonRpcError(res, 404, 'Session not found');
      await transport.handleRequest(req, res, req.method === 'POST' ? await readJson(req) : undefined);
      return;
    }
    if (req.method !== 'POST') return jsonRpcError(res, 400, 'Bad Request: No valid session ID provided');
    const body = await readJson(req);
    if (!isInitializeRequest(body)) return jsonRpcError(res, 400, 'Bad Request: No valid session ID provided');
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        sessions.set(id, transport);
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    await buildSdkServer(options).connect(transport);
    await transport.handleRequest(req, res, body);
  };

  const server = createHttpServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) jsonRpcError(res, 500, String(error));
    });
  });
  const { port, url } = await listen(server, path);
  return {
    url,
    port,
    requests,
    close: closer(server, async () => {
      await Promise.all([...sessions.values()].map((transport) => transport.close()));
    }),
    get sessionCount() {
      return sessions.size;
    },
  } as RunningServer & { sessionCount: number };
}

/** Legacy HTTP+SSE (protocol 2024-11-05): GET <path> opens the stream, POST /messages?sessionId= carries requests. */
export async function startLegacySseServer(options: McpServerOptions = {}): Promise<RunningServer> {
  const path = options.path ?? '/sse';
  const requests: string[] = [];
  const transports = new Map<string, SSEServerTransport>();

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    requests.push(`${req.method} ${req.url}`);
    if (!authorized(req, options)) return refuse(res);
    const url = new URL(req.url ?? '/', 'http://test');
    if (req.method === 'GET' && url.pathname === path) {
      const transport = new SSEServerTransport('/messages', res);
      transports.set(transport.sessionId, transport);
      res.on('close', () => transports.delete(transport.sessionId));
      await buildSdkServer(options).connect(transport);
      return;
    }
    if (req.method === 'POST' && url.pathname === '/messages') {
      const transport = transports.get(url.searchParams.get('sessionId') ?? '');
      if (!transport) {
        res.writeHead(404).end('unknown session');
        return;
      }
      await transport.handlePostMessage(req, res, await readJson(req));
      return;
    }
    // As a typical Express app would answer a POST to the stream path.
    res
      .writeHead(404, { 'content-type': 'text/html' })
      .end(`<!DOCTYPE html><pre>Cannot ${req.method} ${url.pathname}</pre>`);
  };

  const server = createHttpServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  const { port, url } = await listen(server, path);
  return {
    url,
    port,
    requests,
    close: closer(server, async () => {
      await Promise.all([...transports.values()].map((transport) => transport.close()));
    }),
  };
}

/** A plain HTTP server that answers every request with the given handler (404 pages, HTML, redirects). */
export async function startPlainServer(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
  path = '/mcp',
): Promise<RunningServer> {
  const requests: string[] = [];
  const server = createHttpServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    handler(req, res);
  });
  const { port, url } = await listen(server, path);
  return { url, port, requests, close: closer(server) };
}

/** A port on 127.0.0.1 with nothing listening (it was bound, then released). */
export async function closedPort(): Promise<number> {
  const probe = createNetServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

/** A self-signed certificate for 127.0.0.1/localhost, made with openssl for this test run. */
export function selfSignedCertificate(): { key: string; cert: string } {
  const dir = mkdtempSync(join(tmpdir(), 'orgplane-cert-'));
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
        '-days',
        '1',
        '-subj',
        '/CN=localhost',
        '-addext',
        'subjectAltName=IP:127.0.0.1,DNS:localhost',
      ],
      { stdio: 'ignore' },
    );
    return { key: readFileSync(join(dir, 'key.pem'), 'utf8'), cert: readFileSync(join(dir, 'cert.pem'), 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A stateless MCP server behind HTTPS with a self-signed certificate (nobody trusts it). */
export async function startSelfSignedServer(options: McpServerOptions = {}): Promise<RunningServer & { cert: string }> {
  const path = options.path ?? '/mcp';
  const requests: string[] = [];
  const certificate = selfSignedCertificate();
  const server = createHttpsServer(certificate, async (req, res) => {
    requests.push(`${req.method} ${req.url}`);
    const sdkServer = buildSdkServer(options);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await sdkServer.connect(transport);
    await transport.handleRequest(req, res, req.method === 'POST' ? await readJson(req) : undefined);
  });
  const { port, url } = await listen(server as unknown as HttpServer, path, 'https');
  return { url, port, requests, cert: certificate.cert, close: closer(server as unknown as HttpServer) };
}
