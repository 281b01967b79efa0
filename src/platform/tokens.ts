import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** A URL-safe random secret with `bytes` bytes of entropy (32 bytes = 256 bits by default). */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

/**
 * How bearer secrets (session, install-link, SCIM, webhook tokens, API keys) are stored.
 * They carry 256 random bits, so a fast hash suffices; a slow one would only cost every request.
 */
export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** Constant-time string comparison (compares digests, so differing lengths leak nothing either). */
export function safeEqual(a: string, b: string): boolean {
  const digestA = createHash('sha256').update(a, 'utf8').digest();
  const digestB = createHash('sha256').update(b, 'utf8').digest();
  return timingSafeEqual(digestA, digestB);
}
