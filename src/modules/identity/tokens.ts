// The bearer secrets the membership core resolves, and how their lookups are batched.
import type { Database } from '../../db/database.ts';
import { batchesInFlight, createBatcher, type Batcher } from '../../platform/batcher.ts';
import { hashToken } from '../../platform/tokens.ts';

export const sessionTokenPrefix = 'ops_';
export const apiKeyPrefix = 'opk_';

// Session lookups of concurrent requests share one statement. Batches run side by side only when
// enough lookups wait, so under load the database answers few large statements, not many small ones.
const LOOKUP_BATCH_MAX = 256;
const LOOKUP_OVERLAP_THRESHOLD = 16;

/** Looks rows up by token hash in batches; each caller gets the row of its own hash, or undefined. */
export function batchedByTokenHash<Row extends { token_hash: string }>(db: Database, find: (hashes: string[]) => Promise<Row[]>): Batcher<string, Row | undefined> {
  return createBatcher<string, Row | undefined>({
    async run(hashes) {
      const rows = await find([...new Set(hashes)]);
      const byHash = new Map(rows.map((row) => [row.token_hash, row]));
      return hashes.map((hash) => byHash.get(hash));
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
export function sessionTokenLookup<Row extends { token_hash: string }>(db: Database, find: (hashes: string[]) => Promise<Row[]>) {
  const lookup = batchedByTokenHash(db, find);
  return async (token: string | undefined): Promise<Row | undefined> =>
    token?.startsWith(sessionTokenPrefix) ? lookup(hashToken(token)) : undefined;
}
