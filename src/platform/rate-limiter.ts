import type { Queryable } from '../db/database.ts';

export interface RateLimitResult {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the current window ends. */
  resetSeconds: number;
  /**
   * Takes this hit back, in the window it was counted in: for an attempt that turned out not to count
   * (a successful sign-in, say). Never below zero.
   */
  release(): Promise<void>;
}

export interface RateLimiter {
  hit(bucket: string, limit: number, windowSeconds: number): Promise<RateLimitResult>;
}

/**
 * Fixed-window counters in the database, so a limit holds across every process. One upsert per hit:
 * the row lock taken by ON CONFLICT makes concurrent hits count exactly.
 */
export function createRateLimiter(db: Queryable): RateLimiter {
  let hitsSincePrune = 0;
  return {
    async hit(bucket, limit, windowSeconds) {
      const { rows } = await db.query<{ hits: number; window_start: Date; reset_seconds: number }>(
        `WITH window_start AS (
           SELECT to_timestamp(floor(extract(epoch FROM now()) / $2) * $2) AS at
         )
         INSERT INTO rate_limit_counters AS counter (bucket, window_start, hits)
         SELECT $1, at, 1 FROM window_start
         ON CONFLICT (bucket, window_start) DO UPDATE SET hits = counter.hits + 1
         RETURNING hits, window_start,
           ceil(extract(epoch FROM (window_start + make_interval(secs => $2)) - now()))::int AS reset_seconds`,
        [bucket, windowSeconds],
      );
      const row = rows[0]!;
      if (++hitsSincePrune >= 1000) {
        hitsSincePrune = 0;
        // Old windows are useless; dropping them now and then keeps the table small.
        await db.query(`DELETE FROM rate_limit_counters WHERE window_start < now() - interval '1 day'`);
      }
      return {
        allowed: row.hits <= limit,
        limit,
        remaining: Math.max(0, limit - row.hits),
        resetSeconds: Math.max(1, row.reset_seconds),
        async release() {
          await db.query(
            'UPDATE rate_limit_counters SET hits = hits - 1 WHERE bucket = $1 AND window_start = $2 AND hits > 0',
            [bucket, row.window_start],
          );
        },
      };
    },
  };
}

/**
 * Drops the counters whose bucket names `id` (an organization being erased: `mcp-probe:org:<id>`). A
 * counter holds no data but a count; it goes so that nothing names the organization after it.
 */
export async function forgetRateLimitsNaming(tx: Queryable, id: string): Promise<void> {
  await tx.query('DELETE FROM rate_limit_counters WHERE strpos(bucket, $1) > 0', [id]);
}
