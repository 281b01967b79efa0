import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  probeConnection,
  runProbeCli,
  type ProbeOptions,
  type ProbeResult,
} from '../../src/modules/mcp-connections/probe/index.ts';
import { createOutboundClient, type OutboundClient } from '../../src/platform/outbound.ts';
import {
  closedPort,
  startLegacySseServer,
  startPlainServer,
  startSelfSignedServer,
  startStreamableServer,
  type RunningServer,
} from '../support/mcp-servers.ts';

const LOOPBACK = ['127.0.0.0/8', '::1/128'];

let outbound: OutboundClient;
const started: RunningServer[] = [];

async function server<T extends RunningServer>(start: Promise<T>): Promise<T> {
  const running = await start;
  started.push(running);
  return running;
}

function probe(options: Partial<ProbeOptions> & { url: string }): Promise<ProbeResult> {
  return probeConnection({ authType: 'none', outbound, ...options });
}

function failed(result: ProbeResult) {
  assert.equal(result.ok, false, `expected a failure, got ${JSON.stringify(result)}`);
  if (result.ok) throw new Error('unreachable');
  const { diagnostic } = result;
  // Every required field of the spec's Diagnostic is always there.
  for (const field of [
    'referenceId',
    'phase',
    'category',
    'code',
    'highestPassed',
    'retryable',
    'actionOwner',
    'operatorAction',
    'message',
  ]) {
    assert.ok(field in diagnostic, `diagnostic lacks ${field}`);
  }
  assert.equal(typeof diagnostic.retryable, 'boolean');
  assert.ok(diagnostic.operatorAction.length > 0 && diagnostic.message.length > 0);
  return diagnostic;
}

before(() => {
  outbound = createOutboundClient({ allowedPrivateNetworks: LOOPBACK });
});

after(async () => {
  await Promise.all(started.map((running) => running.close()));
  await outbound.close();
});

describe('probe: servers that work', () => {
  test('stateless Streamable HTTP: catalog_ready with the tool names', async () => {
    const mcp = await server(startStreamableServer({ tools: ['search', 'fetch'] }));
    const result = await probe({ url: mcp.url });
    assert.deepEqual(result, {
      ok: true,
      highestPassed: 'catalog_ready',
      tools: ['search', 'fetch'],
      protocolVersion: '2025-11-25',
      transport: 'streamable-http',
      catalog: {
        serverInfo: { name: 'orgplane-test-server', version: '1.0.0' },
        protocolVersion: '2025-11-25',
        capabilities: { tools: {} },
        tools: ['search', 'fetch'].map((name) => ({
          name,
          description: `the ${name} tool`,
          inputSchema: { type: 'object' },
        })),
        promptCount: 0,
        resourceCount: 0,
        truncated: false,
      },
    });
  });

  test('stateful Streamable HTTP: uses the session and ends it afterwards', async () => {
    const mcp = await server(startStreamableServer({ stateful: true, tools: ['a'] }));
    const result = await probe({ url: mcp.url });
    assert.equal(result.ok, true);
    assert.deepEqual(result.ok && result.tools, ['a']);
    assert.ok(mcp.requests.includes('DELETE /mcp'), `session not ended: ${mcp.requests.join(', ')}`);
    assert.equal((mcp as RunningServer & { sessionCount: number }).sessionCount, 0);
  });

  test('legacy HTTP+SSE: found after Streamable HTTP is refused', async () => {
    const mcp = await server(startLegacySseServer({ tools: ['old-tool'] }));
    const result = await probe({ url: mcp.url });
    assert.equal(result.ok, true, JSON.stringify(result));
    assert.equal(result.ok && result.transport, 'sse');
    assert.deepEqual(result.ok && result.tools, ['old-tool']);
    assert.ok(mcp.requests.some((line) => line.startsWith('POST /messages?sessionId=')));
  });

  test('an API key is sent as a bearer token by default', async () => {
    const mcp = await server(startStreamableServer({ apiKey: 'key-123' }));
    const result = await probe({ url: mcp.url, authType: 'apikey', apiKey: 'key-123' });
    assert.equal(result.ok, true, JSON.stringify(result));
  });

  test('an API key goes in another header when the server expects that', async () => {
    const mcp = await server(startStreamableServer({ apiKey: 'key-456', apiKeyHeader: 'x-api-key' }));
    assert.equal(
      (await probe({ url: mcp.url, authType: 'apikey', apiKey: 'key-456', apiKeyHeader: 'X-API-Key' })).ok,
      true,
    );
    // As a bearer token, the same key is refused by this server.
    const asBearer = failed(await probe({ url: mcp.url, authType: 'apikey', apiKey: 'key-456' }));
    assert.equal(asBearer.code, 'api_key_rejected');
  });

  test('legacy SSE with an API key', async () => {
    const mcp = await server(startLegacySseServer({ apiKey: 'sse-key' }));
    assert.equal((await probe({ url: mcp.url, authType: 'apikey', apiKey: 'sse-key' })).ok, true);
  });
});

describe('probe: each failing phase', () => {
  test('CONFIGURATION: not a URL, wrong scheme, credentials in the URL, missing API key', async () => {
    const cases: Array<[Partial<ProbeOptions> & { url: string }, string]> = [
      [{ url: 'not a url' }, 'invalid_url'],
      [{ url: 'ftp://example.com/mcp' }, 'unsupported_scheme'],
      [{ url: 'https://user:pass@example.com/mcp' }, 'credentials_in_url'],
      [{ url: 'https://example.com/mcp', authType: 'apikey' }, 'api_key_missing'],
    ];
    for (const [options, code] of cases) {
      const diagnostic = failed(await probe(options));
      assert.equal(diagnostic.phase, 'CONFIGURATION');
      assert.equal(diagnostic.code, code);
      assert.equal(diagnostic.highestPassed, 'configured');
      assert.equal(diagnostic.actionOwner, 'organization_admin');
    }
  });

  test('NETWORK_DNS: a name that does not resolve', async () => {
    const diagnostic = failed(await probe({ url: 'http://no-such-host.invalid/mcp' }));
    assert.equal(diagnostic.phase, 'NETWORK_DNS');
    assert.match(diagnostic.code, /^dns_/);
    assert.equal(diagnostic.highestPassed, 'configured');
  });

  test('NETWORK_TCP: a closed port', async () => {
    const port = await closedPort();
    const diagnostic = failed(await probe({ url: `http://127.0.0.1:${port}/mcp` }));
    assert.equal(diagnostic.phase, 'NETWORK_TCP');
    assert.equal(diagnostic.code, 'connection_refused');
    assert.equal(diagnostic.highestPassed, 'configured');
    assert.equal(diagnostic.retryable, true);
    assert.deepEqual(diagnostic.outbound?.origin, `http://127.0.0.1:${port}`);
  });

  test('NETWORK_TLS: a self-signed certificate', async () => {
    const mcp = await server(startSelfSignedServer());
    const diagnostic = failed(await probe({ url: mcp.url }));
    assert.equal(diagnostic.phase, 'NETWORK_TLS');
    assert.equal(diagnostic.code, 'tls_certificate_untrusted');
    assert.equal(diagnostic.highestPassed, 'reachable');
    assert.equal(diagnostic.actionOwner, 'vendor');
    assert.deepEqual(mcp.requests, [], 'no HTTP request may follow a failed TLS check');
  });

  test('NETWORK_TLS passes with a trusted certificate, and refuses one that names another host', async () => {
    const mcp = await server(startSelfSignedServer({ tools: ['over-tls'] }));
    const trusting = createOutboundClient({
      allowedPrivateNetworks: LOOPBACK,
      ca: mcp.cert,
      lookup: async () => [{ address: '127.0.0.1', family: 4 }],
    });
    try {
      const ok = await probeConnection({ url: mcp.url, authType: 'none', outbound: trusting });
      assert.equal(ok.ok, true, JSON.stringify(ok));
      assert.deepEqual(ok.ok && ok.tools, ['over-tls']);
      // The certificate names 127.0.0.1 and localhost; this name resolves to 127.0.0.1 too.
      const otherName = mcp.url.replace('127.0.0.1', 'mcp.other-name.test');
      const mismatch = failed(await probeConnection({ url: otherName, authType: 'none', outbound: trusting }));
      assert.equal(mismatch.phase, 'NETWORK_TLS');
      assert.equal(mismatch.code, 'tls_hostname_mismatch');
    } finally {
      await trusting.close();
    }
  });

  test('HTTP_ROUTING: a 404 route', async () => {
    const mcp = await server(
      startPlainServer((_req, res) => res.writeHead(404, { 'content-type': 'text/plain' }).end('nothing here')),
    );
    const diagnostic = failed(await probe({ url: mcp.url }));
    assert.equal(diagnostic.phase, 'HTTP_ROUTING');
    assert.equal(diagnostic.code, 'endpoint_not_found');
    assert.equal(diagnostic.httpStatus, 404);
    assert.equal(diagnostic.highestPassed, 'reachable');
  });

  test('HTTP_ROUTING: an HTML page', async () => {
    const mcp = await server(
      startPlainServer((_req, res) =>
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><title>Welcome</title>'),
      ),
    );
    const diagnostic = failed(await probe({ url: mcp.url }));
    assert.equal(diagnostic.phase, 'HTTP_ROUTING');
    assert.equal(diagnostic.code, 'not_mcp_endpoint');
    assert.equal(diagnostic.httpStatus, 200);
  });

  test('MCP_TRANSPORT: a plain-text 400 passes routing, then fails to carry initialize', async () => {
    const mcp = await server(
      startPlainServer((_req, res) => res.writeHead(400, { 'content-type': 'text/plain' }).end('Bad Request')),
    );
    const diagnostic = failed(await probe({ url: mcp.url }));
    assert.equal(diagnostic.phase, 'MCP_TRANSPORT');
    assert.equal(diagnostic.code, 'transport_error');
    assert.equal(diagnostic.httpStatus, 400);
    assert.equal(diagnostic.highestPassed, 'reachable');
  });

  test('HTTP_ROUTING: a server error is retryable and the vendor acts', async () => {
    const mcp = await server(startPlainServer((_req, res) => res.writeHead(503).end()));
    const diagnostic = failed(await probe({ url: mcp.url }));
    assert.equal(diagnostic.code, 'server_error');
    assert.equal(diagnostic.httpStatus, 503);
    assert.equal(diagnostic.retryable, true);
    assert.equal(diagnostic.actionOwner, 'vendor');
  });

  test('authorization: no key where one is required, and a wrong key', async () => {
    const mcp = await server(startStreamableServer({ apiKey: 'right' }));
    const missing = failed(await probe({ url: mcp.url }));
    assert.equal(missing.phase, 'AUTH_RESOURCE_DISCOVERY');
    assert.equal(missing.code, 'authorization_required');
    assert.equal(missing.httpStatus, 401);
    assert.equal(missing.highestPassed, 'reachable');
    const wrong = failed(await probe({ url: mcp.url, authType: 'apikey', apiKey: 'wrong-key-zq9' }));
    assert.equal(wrong.phase, 'AUTH_RESOURCE_VALIDATION');
    assert.equal(wrong.code, 'api_key_rejected');
    assert.ok(!JSON.stringify(wrong).includes('wrong-key-zq9'), 'the key must not echo');
  });

  test('MCP_VERSION: a server that only speaks an unsupported protocol version', async () => {
    const mcp = await server(startStreamableServer({ fault: 'unsupported_version' }));
    const diagnostic = failed(await probe({ url: mcp.url }));
    assert.equal(diagnostic.phase, 'MCP_VERSION');
    assert.equal(diagnostic.code, 'unsupported_protocol_version');
    assert.equal(diagnostic.highestPassed, 'reachable');
  });

  test('MCP_INITIALIZE: a server that answers initialize with an error', async () => {
    const mcp = await server(startStreamableServer({ fault: 'initialize_error' }));
    const diagnostic = failed(await probe({ url: mcp.url }));
    assert.equal(diagnostic.phase, 'MCP_INITIALIZE');
    assert.equal(diagnostic.code, 'initialize_rejected');
    assert.equal(diagnostic.jsonRpcCode, -32602);
    assert.equal(diagnostic.highestPassed, 'reachable');
  });

  test('MCP_TOOL_DISCOVERY: a server whose tools/list fails', async () => {
    const mcp = await server(startStreamableServer({ fault: 'tools_list_error', stateful: true }));
    const diagnostic = failed(await probe({ url: mcp.url }));
    assert.equal(diagnostic.phase, 'MCP_TOOL_DISCOVERY');
    assert.equal(diagnostic.code, 'tools_list_failed');
    assert.equal(diagnostic.jsonRpcCode, -32603);
    assert.equal(diagnostic.highestPassed, 'protocol_ready');
  });

  // -32000 and -32001 are also the codes the SDK gives its own closed connection and timeout; a
  // server's answer with them is still the server's answer, not a transport failure.
  test('MCP_INITIALIZE and MCP_TOOL_DISCOVERY: a server error answered with -32000 or -32001', async () => {
    const refusing = await server(startStreamableServer({ fault: 'initialize_error', errorCode: -32000 }));
    const initialize = failed(await probe({ url: refusing.url }));
    assert.equal(initialize.phase, 'MCP_INITIALIZE');
    assert.equal(initialize.code, 'initialize_rejected');
    assert.equal(initialize.jsonRpcCode, -32000);
    const listing = await server(
      startStreamableServer({ fault: 'tools_list_error', errorCode: -32001, stateful: true }),
    );
    const tools = failed(await probe({ url: listing.url }));
    assert.equal(tools.phase, 'MCP_TOOL_DISCOVERY');
    assert.equal(tools.code, 'tools_list_failed');
    assert.equal(tools.jsonRpcCode, -32001);
  });

  test('MCP_TOOL_DISCOVERY over legacy SSE too', async () => {
    const mcp = await server(startLegacySseServer({ fault: 'tools_list_error' }));
    const diagnostic = failed(await probe({ url: mcp.url }));
    assert.equal(diagnostic.phase, 'MCP_TOOL_DISCOVERY');
    assert.equal(diagnostic.highestPassed, 'protocol_ready');
  });

  test('a tool catalog beyond the response cap is refused at MCP_TOOL_DISCOVERY', async () => {
    const tools = Array.from({ length: 2_000 }, (_, i) => `tool_${i}_${'x'.repeat(40)}`);
    const mcp = await server(startStreamableServer({ tools }));
    const diagnostic = failed(await probe({ url: mcp.url, maxResponseBytes: 64 * 1024 }));
    assert.equal(diagnostic.phase, 'MCP_TOOL_DISCOVERY');
    assert.equal(diagnostic.code, 'response_too_large');
    assert.equal(diagnostic.highestPassed, 'protocol_ready');
    const whole = await probe({ url: mcp.url });
    assert.equal(whole.ok && whole.tools.length, 2_000, 'the same catalog within the default cap');
  });

  test('a server that never answers ends in a retryable timeout within the bound', async () => {
    const mcp = await server(startPlainServer(() => {}));
    const diagnostic = failed(await probe({ url: mcp.url, timeoutMs: 400 }));
    assert.equal(diagnostic.phase, 'HTTP_ROUTING');
    assert.equal(diagnostic.category, 'timeout');
    assert.equal(diagnostic.retryable, true);
  });

  test('the full detail goes to the log under the referenceId, a secret path only as a hash', async () => {
    const port = await closedPort();
    const logged: Array<Record<string, unknown>> = [];
    const result = await probe({
      url: `http://127.0.0.1:${port}/mcp/sk-live-secret-path?token=abc`,
      logger: { warn: (details) => logged.push(details) },
    });
    const diagnostic = failed(result);
    assert.equal(logged.length, 1);
    assert.equal(logged[0]!.referenceId, diagnostic.referenceId);
    assert.match(diagnostic.outbound!.pathHash, /^[0-9a-f]{16}$/);
    const text = JSON.stringify(result);
    assert.ok(!text.includes('sk-live-secret-path') && !text.includes('token=abc'), text);
  });
});

describe('probe: the credentials sent never come back out', () => {
  /** Everything the probe reported: its result and what it logged, as the log would hold it. */
  async function reported(options: Partial<ProbeOptions> & { url: string }) {
    const logged: Array<Record<string, unknown>> = [];
    const result = await probe({ ...options, logger: { warn: (details) => logged.push(details) } });
    return { result, logged, text: JSON.stringify(result) + JSON.stringify(logged) };
  }

  test('CONFIGURATION: an API key or a token that is no HTTP header value is refused before any request, unquoted', async () => {
    const mcp = await server(startStreamableServer());
    for (const [options, code] of [
      [{ authType: 'apikey', apiKey: 'sk-live-nl-5e1f\nX-Injected: 1' }, 'invalid_api_key'],
      [{ authType: 'apikey', apiKey: 'sk-live-nul-8c2d\u0000' }, 'invalid_api_key'],
      [{ bearerToken: 'tok-cr-7a9b\r' }, 'invalid_credential'],
    ] as const) {
      const { result, logged, text } = await reported({ url: mcp.url, ...options });
      const diagnostic = failed(result);
      assert.equal(diagnostic.phase, 'CONFIGURATION');
      assert.equal(diagnostic.code, code);
      assert.equal(logged.length, 1);
      for (const fragment of ['sk-live-nl-5e1f', 'sk-live-nul-8c2d', 'tok-cr-7a9b'])
        assert.ok(!text.includes(fragment), text);
    }
    assert.deepEqual(mcp.requests, [], 'nothing was sent');
  });

  test('a bearer token echoed in a JSON-RPC error is redacted in the log', async () => {
    const token = 'oauth-at-3f9e1c7a5b2d4086e';
    const mcp = await server(startStreamableServer({ fault: 'echo_credential_in_error' }));
    const { result, text } = await reported({ url: mcp.url, bearerToken: token });
    assert.equal(failed(result).phase, 'MCP_INITIALIZE');
    assert.ok(!text.includes(token), text);
    assert.ok(text.includes('unknown credential: Bearer [redacted]'), text);
  });

  test('a key echoed in an HTTP error body the SDK quotes is redacted, JSON-escaped too', async () => {
    const key = 'sk-"quoted"\\key-0d4e8b';
    // Routing passes (a JSON 400 is a stateful MCP server refusing a session-less ping); initialize gets the same answer.
    const mcp = await server(
      startPlainServer((req, res) => {
        res
          .writeHead(400, { 'content-type': 'application/json' })
          .end(JSON.stringify({ error: `bad credential ${req.headers['x-api-key']}` }));
      }),
    );
    const { result, logged } = await reported({
      url: mcp.url,
      authType: 'apikey',
      apiKey: key,
      apiKeyHeader: 'x-api-key',
    });
    assert.equal(failed(result).phase, 'MCP_TRANSPORT');
    const messages = (logged[0]!.cause as Array<{ message?: string }>).map((entry) => entry.message ?? '').join('\n');
    assert.ok(messages.includes('bad credential [redacted]'), messages);
    for (const form of [key, JSON.stringify(key).slice(1, -1)]) assert.ok(!messages.includes(form), messages);
  });

  test('tool names that carry the key are redacted in the result', async () => {
    const key = 'sk-live-tools-6b1d9f';
    const mcp = await server(startStreamableServer({ apiKey: key, tools: ['search', `leak-${key}`] }));
    const result = await probe({ url: mcp.url, authType: 'apikey', apiKey: key });
    assert.equal(result.ok, true);
    if (result.ok) assert.deepEqual(result.tools, ['search', 'leak-[redacted]']);
  });
});

describe('probe: outbound policy (SSRF)', () => {
  test('169.254.169.254 is refused before any connection', async () => {
    const diagnostic = failed(await probe({ url: 'http://169.254.169.254/latest/meta-data/' }));
    assert.equal(diagnostic.phase, 'NETWORK_DNS');
    assert.equal(diagnostic.code, 'address_blocked');
    assert.equal(diagnostic.category, 'network_policy');
    assert.equal(diagnostic.actionOwner, 'network_admin');
    // said the way people say it, not as the library's identifier
    assert.equal(
      diagnostic.message,
      'The host resolves to an address in a link-local range, which this service does not dial.',
    );
  });

  test('loopback without an allowance is refused, and the server sees nothing', async () => {
    const strict = createOutboundClient({ allowedPrivateNetworks: [] });
    const mcp = await server(startStreamableServer());
    const diagnostic = failed(await probeConnection({ url: mcp.url, authType: 'none', outbound: strict }));
    await strict.close();
    assert.equal(diagnostic.code, 'address_blocked');
    assert.deepEqual(mcp.requests, []);
  });

  test('a name that resolves to a private address is refused (localhost, and a custom resolver)', async () => {
    const strict = createOutboundClient({ allowedPrivateNetworks: [] });
    const viaSystem = failed(
      await probeConnection({ url: 'http://localhost:9/mcp', authType: 'none', outbound: strict }),
    );
    assert.equal(viaSystem.code, 'address_blocked');
    const rebinding = createOutboundClient({
      allowedPrivateNetworks: LOOPBACK,
      lookup: async () => [{ address: '10.20.30.40', family: 4 }],
    });
    const viaResolver = failed(
      await probeConnection({ url: 'https://mcp.tenant.example/mcp', authType: 'none', outbound: rebinding }),
    );
    assert.equal(viaResolver.phase, 'NETWORK_DNS');
    assert.equal(viaResolver.code, 'address_blocked');
    await strict.close();
    await rebinding.close();
  });

  test('a redirect to a private address is refused', async () => {
    const redirecting = await server(
      startPlainServer((_req, res) =>
        res.writeHead(307, { location: 'http://169.254.169.254/latest/meta-data/' }).end(),
      ),
    );
    const diagnostic = failed(await probe({ url: redirecting.url }));
    assert.equal(diagnostic.phase, 'HTTP_ROUTING');
    assert.equal(diagnostic.code, 'redirect_blocked');
    assert.equal(diagnostic.highestPassed, 'reachable');
  });
});

describe('orgplane probe (CLI)', () => {
  function io(env: Record<string, string | undefined> = {}) {
    const out: string[] = [];
    const err: string[] = [];
    return {
      out,
      err,
      io: {
        stdout: (text: string) => out.push(text),
        stderr: (text: string) => err.push(text),
        env: { ALLOWED_PRIVATE_NETWORKS: LOOPBACK.join(','), ...env },
      },
    };
  }

  test('prints highestPassed and the tools, exit code 0', async () => {
    const mcp = await server(startStreamableServer({ apiKey: 'cli-key', tools: ['t1'] }));
    const run = io();
    assert.equal(await runProbeCli([mcp.url, '--api-key', 'cli-key'], run.io), 0);
    const printed = JSON.parse(run.out.join(''));
    assert.equal(printed.highestPassed, 'catalog_ready');
    assert.deepEqual(printed.tools, ['t1']);
  });

  test('prints the diagnostic and exits non-zero on failure', async () => {
    const mcp = await server(startStreamableServer({ apiKey: 'cli-key' }));
    const run = io({ ORGPLANE_PROBE_API_KEY: 'not-the-key' });
    assert.equal(await runProbeCli([mcp.url], run.io), 1);
    const printed = JSON.parse(run.out.join(''));
    assert.equal(printed.ok, false);
    assert.equal(printed.diagnostic.code, 'api_key_rejected');
    assert.ok(!run.out.join('').includes('not-the-key'));
  });

  test('obeys ALLOWED_PRIVATE_NETWORKS', async () => {
    const mcp = await server(startStreamableServer());
    const run = io({ ALLOWED_PRIVATE_NETWORKS: '' });
    assert.equal(await runProbeCli([mcp.url], run.io), 1);
    assert.equal(JSON.parse(run.out.join('')).diagnostic.code, 'address_blocked');
  });

  test('usage errors exit 2', async () => {
    const run = io();
    assert.equal(await runProbeCli([], run.io), 2);
    assert.equal(await runProbeCli(['http://x', '--bogus'], run.io), 2);
    assert.match(run.err.join(''), /Usage: orgplane probe/);
  });
});
