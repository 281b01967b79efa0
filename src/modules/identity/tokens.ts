// The bearer secrets the membership core resolves, and how their lookups are batched.
import type { Database } from '../../db/database.ts';
import { batchesInFlight, createBatcher, type Batcher } from '../../platform/batcher.ts';
import { tokenLookup, type TokenLookup } from '../../platform/tokens.ts';

export const sessionTokenPrefix = 'ops_';
export const apiKeyPrefix = 'opk_';

// Session lookups of concurrent requests share one statement. Batches run side by side only when
// enough lookups wait, so under load the database answers few large statements, not many small ones.
const LOOKUP_BATCH_MAX = 256;
const LOOKUP_OVERLAP_THRESHOLD = 16;

/**
 * A batch's tokens, for its statement: their hashes, the tenants they name, and whether any names none
 * (issued before tokens named their tenant): then the statement cannot keep to the named tenants.
 */
export interface TokenBatch {
  hashes: string[];
  tenants: string[];
  someWithoutTenant: boolean;
}

/** Looks rows up by token in batches; each caller gets the row of its own token's hash, or undefined. */
export function batchedByTokenHash<Row extends { token_hash: string }>(
  db: Database,
  find: (batch: TokenBatch) => Promise<Row[]>,
): Batcher<TokenLookup, Row | undefined> {
  return createBatcher<TokenLookup, Row | undefined>({
    async run(lookups) {
      const tenants = new Set<string>();
      for (const lookup of lookups) if (lookup.tenant !== undefined) tenants.add(lookup.tenant);
      const rows = await find({
        hashes: [...new Set(lookups.map((lookup) => lookup.hash))],
        tenants: [...tenants],
        someWithoutTenant: lookups.some((lookup) => lookup.tenant === undefined),
      });
      const byHash = new Map(rows.map((row) => [row.token_hash, row]));
      return lookups.map((lookup) => byHash.get(lookup.hash));
    },
    maxBatch: LOOKUP_BATCH_MAX,
    maxInFlight: batchesInFlight(db.maxConnections),
    overlapThreshold: LOOKUP_OVERLAP_THRESHOLD,
  });
}

/**
 * A batched lookup by session token: undefined, without a database round trip, for a token that is not
 * a session token at all.
 */
export function sessionTokenLookup<Row extends { token_hash: string }>(
  db: Database,
  find: (batch: TokenBatch) => Promise<Row[]>,
) {
  const lookup = batchedByTokenHash(db, find);
  return async (token: string | undefined): Promise<Row | undefined> =>
    token?.startsWith(sessionTokenPrefix) ? lookup(tokenLookup(token, sessionTokenPrefix)) : undefined;
}
