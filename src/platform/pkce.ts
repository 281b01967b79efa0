// PKCE (RFC 7636) as orgplane's own code exchanges check it: S256 only.
import { createHash, timingSafeEqual } from 'node:crypto';

/** Whether `codeVerifier` is the one whose S256 hash was sent as `codeChallenge` (compared in constant time). */
export function pkceVerifierMatches(codeVerifier: string, codeChallenge: string): boolean {
  const hashed = Buffer.from(createHash('sha256').update(codeVerifier).digest('base64url'));
  const expected = Buffer.from(codeChallenge);
  return hashed.length === expected.length && timingSafeEqual(hashed, expected);
}
