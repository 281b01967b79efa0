// The `state` parameter: signed, short-lived, bound to one pending authorization.
//
// Format: base64url(JSON payload) "." base64url(HMAC-SHA256(payload)). The key is derived from
// the server secret with HKDF under a label of its own, so it is never the key that encrypts
// credentials. The signature stops forgery and tampering (another connection, identity, member
// or callback mode); the expiry bounds its life; single use is enforced in the database, where
// the pending authorization named by `id` is deleted when the callback claims it.

import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';

export type CallbackMode = 'shared-v1' | 'isolated-v1';
export type CredentialSubject = 'member' | 'shared';

export interface StatePayload {
  v: 1;
  /** The pending authorization's id: what single use is enforced on. */
  id: string;
  org: string;
  cid: string;
  /** Fingerprint of the connection identity (url, authType, credentialMode) at authorize time. */
  idf: string;
  /** The member who asked; for a shared identity, the administrator. */
  mid: string;
  sub: CredentialSubject;
  mode: CallbackMode;
  /** Expiry, seconds since the epoch. */
  exp: number;
}

export type StateCheck =
  | { ok: true; payload: StatePayload }
  | { ok: false; reason: 'malformed' | 'bad_signature' | 'expired' };

const MAX_STATE_LENGTH = 2048;

export function deriveStateKey(serverSecret: string | Buffer): Buffer {
  return Buffer.from(hkdfSync('sha256', serverSecret, 'orgplane', 'mcp-oauth-state/v1', 32));
}

function mac(key: Buffer, body: string): Buffer {
  return createHmac('sha256', key).update(body, 'ascii').digest();
}

export function signState(payload: StatePayload, key: Buffer): string {
  const body = Buffer.from(JSON.stringify(payload), 'utf8').toString('base64url');
  return `${body}.${mac(key, body).toString('base64url')}`;
}

function isPayload(value: unknown): value is StatePayload {
  const p = value as Record<string, unknown>;
  return (
    typeof p === 'object' &&
    p !== null &&
    p.v === 1 &&
    typeof p.id === 'string' &&
    typeof p.org === 'string' &&
    typeof p.cid === 'string' &&
    typeof p.idf === 'string' &&
    typeof p.mid === 'string' &&
    (p.sub === 'member' || p.sub === 'shared') &&
    (p.mode === 'shared-v1' || p.mode === 'isolated-v1') &&
    typeof p.exp === 'number' &&
    Number.isFinite(p.exp)
  );
}

/** Checks signature, shape and expiry. It does not check single use: that is the database's job. */
export function verifyState(state: string | null | undefined, key: Buffer, now: Date = new Date()): StateCheck {
  if (!state || state.length > MAX_STATE_LENGTH) return { ok: false, reason: 'malformed' };
  const parts = state.split('.');
  if (parts.length !== 2 || !/^[A-Za-z0-9_-]+$/.test(parts[0]!) || !/^[A-Za-z0-9_-]+$/.test(parts[1]!)) {
    return { ok: false, reason: 'malformed' };
  }
  const [body, signature] = parts as [string, string];
  // Compared as the canonical encoding, so a signature with altered padding bits (another string
  // that decodes to the same bytes) is refused too: a state has exactly one valid spelling.
  const given = Buffer.from(signature, 'ascii');
  const expected = Buffer.from(mac(key, body).toString('base64url'), 'ascii');
  if (given.length !== expected.length || !timingSafeEqual(given, expected))
    return { ok: false, reason: 'bad_signature' };
  let payload: unknown;
  try {
    payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
  } catch {
    return { ok: false, reason: 'malformed' };
  }
  if (!isPayload(payload)) return { ok: false, reason: 'malformed' };
  if (payload.exp * 1000 <= now.getTime()) return { ok: false, reason: 'expired' };
  return { ok: true, payload };
}
