// Configuration from the environment: what a start refuses, so that a mistake stops the process at
// once with its name rather than failing requests later.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../../src/config.ts';

test('DNS_SERVERS: IP addresses with or without a port are taken; a host name or other text stops the start naming the variable', () => {
  assert.deepEqual(loadConfig({ DNS_SERVERS: ' 192.0.2.53, 192.0.2.54:5353 ,[2001:db8::53]:53,2001:db8::54' }).dnsServers, [
    '192.0.2.53',
    '192.0.2.54:5353',
    '[2001:db8::53]:53',
    '2001:db8::54',
  ]);
  assert.deepEqual(loadConfig({}).dnsServers, []);
  for (const value of ['dns.example.com', '192.0.2.53, resolver.internal', '192.0.2.300', 'tcp://192.0.2.53']) {
    assert.throws(() => loadConfig({ DNS_SERVERS: value }), /Invalid configuration:[\s\S]*DNS_SERVERS: must be IP addresses/, value);
  }
});

test('a key ring with a key where its version belongs is refused without printing the key', async () => {
  const { parseKeyRing } = await import('../../src/platform/secrets.ts');
  const key = Buffer.alloc(32, 7).toString('base64');
  for (const text of [`${key}:v1`, `v2:${key},${key}:v1`]) {
    assert.throws(() => parseKeyRing(text), (error: Error) => /version must look like v1/.test(error.message) && !error.message.includes(key));
  }
  assert.doesNotThrow(() => parseKeyRing(`v2:${key},v1:${key}`));
});
