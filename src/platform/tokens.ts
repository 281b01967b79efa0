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

/**
 * A bearer secret that names its tenant: `<prefix><tenant id>.<secret>` (an organization's id, or the
 * user's for a session). The lookup by hash then reads that tenant's rows only, which on a database
 * distributed by tenant is one shard instead of every one (docs/scaling.md). The hash covers the whole
 * token, so a token edited to name another tenant matches nothing.
 */
export function tenantToken(prefix: string, tenantId: string): string {
  return `${prefix}${tenantId}.${randomToken()}`;
}

// A TypeID (src/platform/ids.ts): a lower-case prefix, '_', 26 base32 characters.
const TENANT_ID = /^[a-z]+_[0-9a-z]{26}$/;

/** What finds a token's row: its hash, and its tenant when the token names one (tokens issued before they did, not). */
export interface TokenLookup {
  hash: string;
  tenant: string | undefined;
}

export function tokenLookup(token: string, prefix: string): TokenLookup {
  const dot = token.startsWith(prefix) ? token.indexOf('.', prefix.length) : -1;
  const tenant = dot === -1 ? undefined : token.slice(prefix.length, dot);
  return { hash: hashToken(token), tenant: tenant !== undefined && TENANT_ID.test(tenant) ? tenant : undefined };
}

/**
 * The WHERE condition of a lookup by one token (`$1` its hash, `$2` its tenant when it has one), and
 * its parameters: `tenantColumn = $2` is what lets a distributed database route it to one shard.
 */
export function tokenCondition(
  lookup: TokenLookup,
  hashColumn: string,
  tenantColumn: string,
): { where: string; params: string[] } {
  return lookup.tenant === undefined
    ? { where: `${hashColumn} = $1`, params: [lookup.hash] }
    : { where: `${tenantColumn} = $2 AND ${hashColumn} = $1`, params: [lookup.hash, lookup.tenant] };
}
