import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

/** A URL-safe random secret with `bytes` bytes of entropy (32 bytes = 256 bits by default). */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

/**
 * How bearer secrets (session, install-link, SCIM, webhook tokens, API keys) are stored.
 * They carry 256 random bits, so a fast hash suffices; a slow one would only cost every request.
 */
export function hashToken(token: string): string {
  return hash('sha256', token, 'hex');
}

/**
 * Whether `token` hashes, as hashToken does, to `storedHash` (a stored hash as raw bytes, for callers
 * that keep it decoded): one digest of the candidate and a constant-time comparison of two digests of
 * equal length, so neither the token's length nor its content changes the time taken.
 */
export function tokenMatchesHash(token: string, storedHash: Buffer): boolean {
  const digest = hash('sha256', token, 'buffer');
  return digest.length === storedHash.length && timingSafeEqual(digest, storedHash);
}
