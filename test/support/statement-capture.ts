// Records the SQL the app sends while a test runs: every pg client of this process (both backends are
// a pg.Pool) goes through pg.Client.prototype.query, so wrapping it sees every statement with the
// parameters of its first use. For checks of the statements themselves (test/db/tenant-routing.ts).
import pg from 'pg';

export interface CapturedStatement {
  text: string;
  values: unknown[];
}

export interface StatementCapture {
  /** Each distinct statement text seen so far, with the parameters it was first run with. */
  statements(): CapturedStatement[];
  stop(): void;
}

export function captureStatements(): StatementCapture {
  const original = pg.Client.prototype.query;
  const seen = new Map<string, CapturedStatement>();
  const recording = function (this: pg.Client, config: unknown, values?: unknown, callback?: unknown) {
    const text = typeof config === 'string' ? config : (config as { text?: unknown } | null)?.text;
    const params = typeof config === 'string' ? values : ((config as { values?: unknown }).values ?? values);
    if (typeof text === 'string' && !seen.has(text))
      seen.set(text, { text, values: Array.isArray(params) ? [...params] : [] });
    return (original as (...args: unknown[]) => unknown).call(this, config, values, callback);
  };
  pg.Client.prototype.query = recording as typeof original;
  return {
    statements: () => [...seen.values()],
    stop() {
      if (pg.Client.prototype.query === (recording as typeof original)) pg.Client.prototype.query = original;
    },
  };
}
