import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  createOutboundClient,
  OutboundBlockedError,
  OutboundResponseTooLargeError,
  OutboundTimeoutError,
  type OutboundClient,
  rangeLabel,
} from '../../src/platform/outbound.ts';

/** A real HTTP server on 127.0.0.1 whose routes the tests define; counts the requests it saw. */
async function startServer(handler: (req: IncomingMessage, res: ServerResponse) => void) {
  const seen: IncomingMessage[] = [];
  const server: Server = createServer((req, res) => {
    seen.push(req);
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function rejectsBlocked(promise: Promise<unknown>, reason: string) {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof OutboundBlockedError, `expected OutboundBlockedError, got ${String(error)}`);
    assert.equal(error.reason, reason);
    return true;
  });
}

describe('outbound client: address policy', () => {
  const client = createOutboundClient({ allowedPrivateNetworks: [] });
  after(() => client.close());

  test('refuses loopback, private, link-local, CGNAT, unique-local, multicast, unspecified and mapped forms', () => {
    for (const address of [
      '127.0.0.1',
      '10.1.2.3',
      '172.16.0.9',
      '192.168.1.1',
      '169.254.169.254',
      '100.100.100.200',
      '0.0.0.0',
      '224.0.0.1',
      '::1',
      '::',
      'fd00:ec2::254',
      'fe80::1',
      '::ffff:127.0.0.1',
      '::ffff:169.254.169.254',
      '64:ff9b::a00:1',
      '2002:7f00:1::',
    ]) {
      assert.throws(() => client.checkAddress(address), OutboundBlockedError, address);
    }
  });

  test('accepts global unicast addresses', () => {
    for (const address of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111']) client.checkAddress(address);
  });

  test('an allowed network opens exactly that network', () => {
    const allowing = createOutboundClient({ allowedPrivateNetworks: ['10.0.0.0/8'] });
    allowing.checkAddress('10.9.9.9');
    allowing.checkAddress('::ffff:10.9.9.9');
    assert.throws(() => allowing.checkAddress('192.168.0.1'), OutboundBlockedError);
    assert.throws(() => allowing.checkAddress('169.254.169.254'), OutboundBlockedError);
    return allowing.close();
  });

  test('a malformed allowance is a configuration error', () => {
    assert.throws(() => createOutboundClient({ allowedPrivateNetworks: ['not-a-cidr'] }), /ALLOWED_PRIVATE_NETWORKS/);
  });
});

test('range names in messages are the words people use', () => {
  assert.equal(rangeLabel('linkLocal'), 'link-local');
  assert.equal(rangeLabel('uniqueLocal'), 'unique-local');
  assert.equal(rangeLabel('carrierGradeNat'), 'carrier-grade NAT');
  assert.equal(rangeLabel('private'), 'private');
  assert.equal(rangeLabel('someFutureRange'), 'some future range');
});

describe('outbound client: requests', () => {
  let server: Awaited<ReturnType<typeof startServer>>;
  let allowing: OutboundClient;
  let strict: OutboundClient;
  let target = '';

  before(async () => {
    server = await startServer((req, res) => {
      const path = req.url ?? '/';
      if (path === '/ok') {
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ auth: req.headers.authorization ?? null, apiKey: req.headers['x-api-key'] ?? null }));
      } else if (path === '/to-metadata') {
        res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' }).end();
      } else if (path === '/to-private-name') {
        res.writeHead(307, { location: `http://metadata.internal.test:${server.port}/ok` }).end();
      } else if (path === '/to-ipv6-loopback') {
        res.writeHead(301, { location: `http://[::1]:${server.port}/ok` }).end();
      } else if (path === '/to-ok') {
        res.writeHead(302, { location: '/ok' }).end();
      } else if (path === '/to-other-origin') {
        res.writeHead(307, { location: `http://localhost:${server.port}/ok` }).end();
      } else if (path === '/loop') {
        res.writeHead(302, { location: '/loop' }).end();
      } else if (path === '/to-file') {
        res.writeHead(302, { location: 'file:///etc/passwd' }).end();
      } else if (path === '/big-declared') {
        res.writeHead(200, { 'content-length': String(64 * 1024) }).end(Buffer.alloc(64 * 1024, 97));
      } else if (path === '/big-chunked') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        for (let i = 0; i < 64; i += 1) res.write(Buffer.alloc(1024, 98));
        res.end();
      } else if (path.startsWith('/echo')) {
        const chunks: Buffer[] = [];
        req.on('data', (chunk: Buffer) => chunks.push(chunk));
        req.on('end', () =>
          res.writeHead(201, { 'content-type': 'application/json' }).end(
            JSON.stringify({
              url: req.url,
              method: req.method,
              signature: req.headers['x-signature'] ?? null,
              body: Buffer.concat(chunks).toString(),
            }),
          ),
        );
      } else if (path === '/hang') {
        // never answers
      } else if (path === '/stall-body') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('partial');
      } else {
        res.writeHead(404).end();
      }
    });
    target = target || server.url;
    // Names resolve through a test resolver: the private one is what an attacker would register.
    const lookup = async (hostname: string) => {
      if (hostname === 'metadata.internal.test') return [{ address: '169.254.169.254', family: 4 as const }];
      if (hostname === 'mixed.internal.test')
        return [
          { address: '93.184.216.34', family: 4 as const },
          { address: '10.0.0.7', family: 4 as const },
        ];
      if (hostname === 'localhost') return [{ address: '127.0.0.1', family: 4 as const }];
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    };
    allowing = createOutboundClient({ allowedPrivateNetworks: ['127.0.0.0/8'], lookup, timeoutMs: 5_000 });
    strict = createOutboundClient({ allowedPrivateNetworks: [] });
  });

  after(async () => {
    await allowing.close();
    await strict.close();
    await server.close();
  });

  test('loopback is refused without an allowance, before any request reaches the server', async () => {
    const before = server.seen.length;
    await rejectsBlocked(strict.fetch(`${server.url}/ok`), 'private_address');
    assert.equal(server.seen.length, before);
  });

  test('loopback is reachable when allowed', async () => {
    const response = await allowing.fetch(`${server.url}/ok`);
    assert.equal(response.status, 200);
    assert.ok(response instanceof Response);
    assert.deepEqual(await response.json(), { auth: null, apiKey: null });
  });

  test('169.254.169.254 (cloud metadata) is refused even with loopback allowed', async () => {
    await assert.rejects(allowing.fetch('http://169.254.169.254/latest/meta-data/'), (error: unknown) => {
      assert.ok(error instanceof OutboundBlockedError);
      assert.equal(error.reason, 'private_address');
      assert.equal(error.address, '169.254.169.254');
      assert.equal(error.range, 'linkLocal');
      assert.match(error.message, /\(link-local\)/);
      assert.doesNotMatch(error.message, /linkLocal/);
      return true;
    });
  });

  test('a host name that resolves to a private address is refused (system resolver: localhost)', async () => {
    const { port } = server;
    await rejectsBlocked(strict.fetch(`http://localhost:${port}/ok`), 'private_address');
    await assert.rejects(strict.resolve('localhost'), OutboundBlockedError);
  });

  test('a host name is refused when any one of its addresses is private', async () => {
    await rejectsBlocked(allowing.fetch('http://metadata.internal.test/'), 'private_address');
    await rejectsBlocked(allowing.fetch('http://mixed.internal.test/'), 'private_address');
  });

  test('an unknown name fails with the resolver error, not a block', async () => {
    await assert.rejects(allowing.fetch('http://nowhere.internal.test/'), (error: unknown) => {
      assert.ok(!(error instanceof OutboundBlockedError));
      return true;
    });
  });

  test('a redirect to the metadata address is refused as redirect_blocked', async () => {
    await rejectsBlocked(allowing.fetch(`${server.url}/to-metadata`), 'redirect_blocked');
  });

  test('a redirect to a name resolving to a private address is refused at connect time', async () => {
    await rejectsBlocked(allowing.fetch(`${server.url}/to-private-name`), 'redirect_blocked');
  });

  test('a redirect to IPv6 loopback outside the allowance is refused', async () => {
    await rejectsBlocked(allowing.fetch(`${server.url}/to-ipv6-loopback`), 'redirect_blocked');
  });

  test('a redirect to a non-http scheme is refused', async () => {
    await rejectsBlocked(allowing.fetch(`${server.url}/to-file`), 'redirect_blocked');
  });

  test('allowed redirects are followed, and credentials do not cross origins', async () => {
    const headers = { authorization: 'Bearer secret-1', 'x-api-key': 'secret-2' };
    const same = await allowing.fetch(`${server.url}/to-ok`, { headers, credentialHeaders: ['X-Api-Key'] });
    assert.equal(same.status, 200);
    assert.deepEqual(await same.json(), { auth: 'Bearer secret-1', apiKey: 'secret-2' });
    assert.equal(same.url, `${server.url}/ok`);

    // Authorization never crosses origins; another header only when named as a credential.
    const other = await allowing.fetch(`${server.url}/to-other-origin`, { headers, credentialHeaders: ['X-Api-Key'] });
    assert.equal(other.status, 200);
    assert.deepEqual(await other.json(), { auth: null, apiKey: null });
    const unnamed = await allowing.fetch(`${server.url}/to-other-origin`, { headers });
    assert.deepEqual(await unnamed.json(), { auth: null, apiKey: 'secret-2' });
  });

  test('redirect: manual returns the redirect itself', async () => {
    const response = await allowing.fetch(`${server.url}/to-metadata`, { redirect: 'manual' });
    assert.equal(response.status, 302);
    assert.equal(response.headers.get('location'), 'http://169.254.169.254/latest/meta-data/');
  });

  test('redirect loops end', async () => {
    await rejectsBlocked(allowing.fetch(`${server.url}/loop`), 'too_many_redirects');
  });

  test('only http and https are fetched', async () => {
    await rejectsBlocked(allowing.fetch('file:///etc/passwd'), 'unsupported_protocol');
  });

  test('a declared body above the cap is refused before reading', async () => {
    await assert.rejects(
      allowing.fetch(`${server.url}/big-declared`, { maxResponseBytes: 1024 }),
      OutboundResponseTooLargeError,
    );
  });

  test('an undeclared body is cut at the cap while reading', async () => {
    const response = await allowing.fetch(`${server.url}/big-chunked`, { maxResponseBytes: 4096 });
    assert.equal(response.status, 200);
    await assert.rejects(response.text(), OutboundResponseTooLargeError);
    const underCap = await allowing.fetch(`${server.url}/big-chunked`, { maxResponseBytes: 64 * 1024 });
    assert.equal((await underCap.text()).length, 64 * 1024);
  });

  test('a server that never answers times out', async () => {
    await assert.rejects(allowing.fetch(`${server.url}/hang`, { timeoutMs: 200 }), OutboundTimeoutError);
  });

  test('a body that stalls times out while reading', async () => {
    const response = await allowing.fetch(`${server.url}/stall-body`, { timeoutMs: 300 });
    await assert.rejects(response.text(), OutboundTimeoutError);
  });

  test("the caller's own abort signal still works", async () => {
    const controller = new AbortController();
    const pending = allowing.fetch(`${server.url}/hang`, { signal: controller.signal, timeoutMs: 5_000 });
    controller.abort(new Error('caller gave up'));
    await assert.rejects(pending, /caller gave up/);
  });

  // post(): signed deliveries' lighter path, with the same guards.
  test('post sends the body and headers, and reads the answer whole', async () => {
    const answer = await allowing.post(`${server.url}/echo?x=1`, {
      headers: { 'content-type': 'application/json', 'x-signature': 'sha256=ab' },
      body: '{"a":1}',
    });
    assert.equal(answer.status, 201);
    assert.deepEqual(JSON.parse(answer.text), {
      url: '/echo?x=1',
      method: 'POST',
      signature: 'sha256=ab',
      body: '{"a":1}',
    });
    assert.equal(answer.readError, null);
  });

  test('post: loopback is refused without an allowance, and nothing reaches the server', async () => {
    const before = server.seen.length;
    await rejectsBlocked(strict.post(`${server.url}/echo`, { headers: {}, body: 'x' }), 'private_address');
    await rejectsBlocked(
      allowing.post('http://metadata.internal.test/echo', { headers: {}, body: 'x' }),
      'private_address',
    );
    await rejectsBlocked(allowing.post('ftp://127.0.0.1/echo', { headers: {}, body: 'x' }), 'unsupported_protocol');
    await assert.rejects(
      allowing.post(`http://user:pw@127.0.0.1:${server.port}/echo`, { headers: {}, body: 'x' }),
      /includes credentials/,
    );
    assert.equal(server.seen.length, before);
  });

  test('post refuses a redirect rather than following it', async () => {
    const before = server.seen.length;
    await assert.rejects(
      allowing.post(`${server.url}/to-ok`, { headers: {}, body: 'x' }),
      /Redirect to http:\/\/127\.0\.0\.1:\d+ refused/,
    );
    assert.equal(server.seen.length, before + 1, 'the redirect target was not asked');
  });

  test('post: a declared answer above the cap is refused; an undeclared one is cut while reading', async () => {
    await assert.rejects(
      allowing.post(`${server.url}/big-declared`, { headers: {}, body: 'x', maxResponseBytes: 1024 }),
      OutboundResponseTooLargeError,
    );
    const cut = await allowing.post(`${server.url}/big-chunked`, { headers: {}, body: 'x', maxResponseBytes: 4096 });
    assert.equal(cut.status, 200);
    assert.equal(cut.text, '');
    assert.ok(cut.readError instanceof OutboundResponseTooLargeError);
  });

  test('post times out on a server that never answers, and on an answer that stalls', async () => {
    await assert.rejects(
      allowing.post(`${server.url}/hang`, { headers: {}, body: 'x', timeoutMs: 200 }),
      OutboundTimeoutError,
    );
    const stalled = await allowing.post(`${server.url}/stall-body`, { headers: {}, body: 'x', timeoutMs: 300 });
    assert.equal(stalled.status, 200);
    assert.ok(stalled.readError instanceof OutboundTimeoutError);
  });
});
