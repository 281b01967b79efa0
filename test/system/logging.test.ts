// The server's log configuration (pino with the app's redaction), written to a stream and read back:
// secrets are censored, and what an operator needs to diagnose a failure is not.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import pino from 'pino';
import { loggerOptions } from '../../src/http/logging.ts';

function capture() {
  let text = '';
  const stream = new Writable({
    write: (chunk, _encoding, done) => {
      text += chunk;
      done();
    },
  });
  return { logger: pino(loggerOptions('info'), stream), text: () => text };
}

test("an error's code is logged, an OAuth code in a query or body is not", () => {
  const { logger, text } = capture();
  const databaseError = Object.assign(new Error('duplicate key value violates unique constraint'), { code: '23505' });
  logger.warn({ err: databaseError }, 'request failed');
  logger.warn(
    { connectionId: 'emc_x', phase: 'AUTH_RESOURCE_DISCOVERY', code: 'metadata_missing' },
    'MCP OAuth discovery failed',
  );
  logger.info({ query: { code: 'authorization-code-1', state: 's' } }, 'callback');
  logger.info(
    { request: { body: { code: 'authorization-code-2', grant_type: 'authorization_code' } } },
    'token request',
  );
  logger.info({ credentials: { password: 'a password', apiKey: 'an api key', token: 'a token' } }, 'nested');
  const logged = text();
  assert.match(logged, /"code":"23505"/);
  assert.match(logged, /"code":"metadata_missing"/);
  for (const secret of ['authorization-code-1', 'authorization-code-2', 'a password', 'an api key', 'a token'])
    assert.ok(!logged.includes(secret), secret);
});
