// The signed state: what it binds, and every way a forged, altered or stale one is refused.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  deriveStateKey,
  signState,
  verifyState,
  type StatePayload,
} from '../../src/modules/mcp-connections/oauth/state.ts';

const key = deriveStateKey('server-secret-one');
const payload: StatePayload = {
  v: 1,
  id: 'moa_01jd0000000000000000000000',
  org: 'org_01jd0000000000000000000000',
  cid: 'emc_01jd0000000000000000000000',
  idf: 'f'.repeat(64),
  mid: 'mem_01jd0000000000000000000000',
  sub: 'member',
  mode: 'isolated-v1',
  exp: Math.floor(Date.now() / 1000) + 600,
};

test('a signed state verifies and returns what it binds', () => {
  const state = signState(payload, key);
  assert.match(state, /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
  assert.deepEqual(verifyState(state, key), { ok: true, payload });
});

test('the key is derived: different secrets give different keys, and not the secret itself', () => {
  const other = deriveStateKey('server-secret-two');
  assert.notDeepEqual(other, key);
  assert.equal(key.length, 32);
  assert.deepEqual(verifyState(signState(payload, other), key), { ok: false, reason: 'bad_signature' });
});

test('any change to the payload breaks the signature', () => {
  const state = signState(payload, key);
  const [body, sig] = state.split('.') as [string, string];
  for (const change of [
    { cid: 'emc_01jd0000000000000000000001' },
    { mid: 'mem_other' },
    { mode: 'shared-v1' },
    { idf: '0'.repeat(64) },
    { sub: 'shared' },
    { exp: payload.exp + 3600 },
  ]) {
    const forged = Buffer.from(JSON.stringify({ ...payload, ...change })).toString('base64url');
    assert.deepEqual(verifyState(`${forged}.${sig}`, key), { ok: false, reason: 'bad_signature' });
  }
  // Any other spelling of the signature, including one that differs only in the padding bits of
  // its last character (and so decodes to the same bytes), is refused.
  for (const last of ['A', 'B', 'C', 'D', 'E']) {
    if (sig.endsWith(last)) continue;
    assert.deepEqual(verifyState(`${body}.${sig.slice(0, -1)}${last}`, key), { ok: false, reason: 'bad_signature' });
  }
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  const paddingVariant = sig.slice(0, -1) + alphabet[alphabet.indexOf(sig.at(-1)!) ^ 1];
  assert.deepEqual(
    Buffer.from(paddingVariant, 'base64url'),
    Buffer.from(sig, 'base64url'),
    'same bytes, other spelling',
  );
  assert.deepEqual(verifyState(`${body}.${paddingVariant}`, key), { ok: false, reason: 'bad_signature' });
  const first = sig[0] === 'A' ? 'B' : 'A';
  assert.deepEqual(verifyState(`${body}.${first}${sig.slice(1)}`, key), { ok: false, reason: 'bad_signature' });
});

test('expired, malformed and oversized states are refused', () => {
  const past = signState({ ...payload, exp: Math.floor(Date.now() / 1000) - 1 }, key);
  assert.deepEqual(verifyState(past, key), { ok: false, reason: 'expired' });
  const valid = signState(payload, key);
  assert.deepEqual(verifyState(valid, key, new Date((payload.exp + 1) * 1000)), { ok: false, reason: 'expired' });
  for (const bad of ['', 'abc', 'a.b.c', '.', 'a.', '$$$.###', 'x'.repeat(5000), undefined, null]) {
    assert.equal(verifyState(bad as string, key).ok, false, String(bad));
  }
  // A correctly signed body that is not a state payload.
  const body = Buffer.from(JSON.stringify({ v: 2 })).toString('base64url');
  const signed = signState({ ...payload }, key);
  assert.equal(verifyState(`${body}.${signed.split('.')[1]}`, key).ok, false);
});
