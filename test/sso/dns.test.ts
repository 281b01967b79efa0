// The TXT resolver and domain normalization, against a real DNS server on loopback.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createTxtResolver, isPublicSuffix, normalizeDomain, joinTxtChunks } from '../../src/modules/sso/dns.ts';
import { startDnsServer, type TestDnsServer } from '../support/dns-server.ts';

let dns: TestDnsServer;
before(async () => {
  dns = await startDnsServer();
});
after(async () => {
  await dns.close();
});

// A generous timeout: a loaded machine can take a while over UDP then TCP. Only the test of a
// server that never answers waits it out, and it asks for a short one.
const resolver = (timeoutMs = 3000) => createTxtResolver({ servers: [dns.address], timeoutMs, tries: 1 });

test('single TXT record is returned as is', async () => {
  dns.setTxt('_orgplane.one.example', ['orgplane-verification=abc']);
  assert.deepEqual(await resolver().resolveTxt('_orgplane.one.example'), {
    status: 'found',
    records: ['orgplane-verification=abc'],
  });
});

test('multi-string TXT record is joined without separators, each record kept apart', async () => {
  const long = 'x'.repeat(250);
  dns.setTxt('_orgplane.multi.example', [['orgplane-verification=', 'abc', 'def'], 'v=spf1 -all', [long, long]]);
  const result = await resolver().resolveTxt('_orgplane.multi.example');
  assert.equal(result.status, 'found');
  assert.deepEqual(
    [...(result as { records: string[] }).records].sort(),
    [long + long, 'orgplane-verification=abcdef', 'v=spf1 -all'].sort(),
  );
});

test('an answer larger than a UDP datagram is fetched (truncation then TCP)', async () => {
  const chunk = 'y'.repeat(255);
  const records = Array.from({ length: 8 }, (_, i) => [String(i), chunk, chunk]);
  dns.setTxt('big.example', records);
  const result = await resolver().resolveTxt('big.example');
  assert.equal(result.status, 'found');
  assert.equal((result as { records: string[] }).records.length, 8);
  assert.ok((result as { records: string[] }).records.includes(`3${chunk}${chunk}`));
});

test('NXDOMAIN and NODATA are "missing", not failures', async () => {
  assert.deepEqual(await resolver().resolveTxt('nothing-here.example'), { status: 'missing', reason: 'nxdomain' });
  dns.setBehaviour('empty.example', { kind: 'nodata' });
  assert.deepEqual(await resolver().resolveTxt('empty.example'), { status: 'missing', reason: 'nodata' });
});

test('SERVFAIL is a retryable failure', async () => {
  dns.setBehaviour('broken.example', { kind: 'servfail' });
  assert.deepEqual(await resolver().resolveTxt('broken.example'), {
    status: 'failed',
    retryable: true,
    code: 'ESERVFAIL',
  });
});

test('a server that never answers is a retryable timeout', async () => {
  dns.setBehaviour('silent.example', { kind: 'silent' });
  assert.deepEqual(await resolver(400).resolveTxt('silent.example'), {
    status: 'failed',
    retryable: true,
    code: 'ETIMEOUT',
  });
});

test('lookups are not cached between calls: a newly published record is seen', async () => {
  dns.clear('fresh.example');
  const r = resolver();
  assert.equal((await r.resolveTxt('fresh.example')).status, 'missing');
  dns.setTxt('fresh.example', ['now-here']);
  assert.deepEqual(await r.resolveTxt('fresh.example'), { status: 'found', records: ['now-here'] });
});

test('joinTxtChunks concatenates character-strings', () => {
  assert.equal(joinTxtChunks(['a', 'b c', '']), 'ab c');
});

test('normalizeDomain: case, trailing dot, whitespace, IDN to punycode', () => {
  assert.equal(normalizeDomain('Example.COM'), 'example.com');
  assert.equal(normalizeDomain(' example.com. '), 'example.com');
  assert.equal(normalizeDomain('Bücher.example'), 'xn--bcher-kva.example');
  assert.equal(normalizeDomain('xn--bcher-kva.example'), 'xn--bcher-kva.example');
  assert.equal(normalizeDomain('münchen.de.'), 'xn--mnchen-3ya.de');
  assert.equal(normalizeDomain('sub.domain.example.org'), 'sub.domain.example.org');
});

test('normalizeDomain refuses what is not a domain', () => {
  for (const bad of [
    '',
    '.',
    'localhost',
    '127.0.0.1',
    'exa mple.com',
    '-bad.example',
    'bad-.example',
    '*.example.com',
    'a..b',
    'http://example.com',
    `${'x'.repeat(64)}.com`,
    'example.com..',
  ]) {
    assert.equal(normalizeDomain(bad), null, bad);
  }
});

test('normalizeDomain refuses a domain with URL parts rather than cutting them off', () => {
  for (const bad of [
    'zz.test/evil',
    'zz.test?x',
    'zz.test\\x',
    'zz.test#x',
    'u@zz.test',
    'zz.test:443',
    'zz%2etest',
    'zz.test\tx',
    '0x7f.1',
    'zz.test／evil',
    'zz.test？x',
  ]) {
    assert.equal(normalizeDomain(bad), null, JSON.stringify(bad));
  }
  // Unicode is IDNA's to map: full-width dots and letters are the same domain.
  assert.equal(normalizeDomain('ＺＺ。test'), 'zz.test');
});

test('isPublicSuffix: the suffixes of the Public Suffix List, private section included, not names under them', () => {
  for (const suffix of ['com', 'co.uk', 'github.io', 'xn--p1ai']) assert.equal(isPublicSuffix(suffix), true, suffix);
  for (const domain of ['example.com', 'acme.co.uk', 'acme.github.io', 'zz.test'])
    assert.equal(isPublicSuffix(domain), false, domain);
});
