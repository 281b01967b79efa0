// What a database error says about its cause, read from its SQLSTATE (`code`) and severity: PostgreSQL's
// driver and PGlite both carry them.

/**
 * The SQLSTATE of an error in one of the numeric classes, the only ones read here. A socket error's
 * code (ECONNRESET, EPIPE) starts with a letter, so it is never taken for one.
 */
function numericSqlStateOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null | undefined)?.code;
  return typeof code === 'string' && /^[0-9]{2}[0-9A-Z]{3}$/.test(code) ? code : undefined;
}

/** A unique constraint refused the row (23505). */
export function isUniqueViolation(error: unknown): boolean {
  return numericSqlStateOf(error) === '23505';
}

/** A foreign key refused the row: what it refers to is not there (23503). */
export function isForeignKeyViolation(error: unknown): boolean {
  return numericSqlStateOf(error) === '23503';
}

/**
 * The database refused what a statement carried (class 22, data exception; 23, integrity constraint
 * violation; 54, program limit exceeded, such as a value too large), as opposed to being unreachable,
 * restarting, out of resources or rolling back a transaction for concurrency: a cause that can belong
 * to one row of a statement, and stays with it when the statement is retried.
 */
export function isDataError(error: unknown): boolean {
  const state = numericSqlStateOf(error);
  return state !== undefined && ['22', '23', '54'].includes(state.slice(0, 2));
}

/**
 * An error the server answered a statement with (an ErrorResponse) that leaves the session usable:
 * any below FATAL. Socket failures, and errors the server ends the session with, are not.
 */
export function isStatementError(error: unknown): boolean {
  const severity = (error as { severity?: unknown } | null | undefined)?.severity;
  return typeof severity === 'string' && severity !== 'FATAL' && severity !== 'PANIC';
}

/**
 * True when PostgreSQL refused text the caller sent: U+0000 (22021 in text, 22P05 in jsonb) or an
 * unpaired surrogate escape in jsonb (22P02). The caller's input, so a 400 wherever a route's schema let it through.
 */
export function isUnstorableText(error: unknown): boolean {
  const { code, message = '', detail = '' } = (error ?? {}) as { code?: string; message?: string; detail?: string };
  if (code === '22P05') return true;
  if (code === '22021') return /0x00/.test(message);
  return code === '22P02' && /surrogate/i.test(`${message} ${detail}`);
}

// Error codes that say the database cannot serve right now, whatever the statement: the socket failed
// (ECONNREFUSED, ECONNRESET, ETIMEDOUT, EPIPE), or PostgreSQL says the connection failed (08000,
// 08001, 08003, 08004, 08006), too many connections or no disk (53300, 53100), an operator stopped or
// is recovering it (57P01-57P03), it refused the login (28000, 28P01), or it does not exist (3D000:
// dropped or misnamed). Not the rest of those classes: 08P01 (protocol violation) and 53200 (one
// statement out of memory) come from a statement, and retrying it would not help.
const unavailableCodes = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
  '53100',
  '53300',
  '57P01',
  '57P02',
  '57P03',
  '28000',
  '28P01',
  '3D000',
]);

/** True for errors that mean "the database cannot be reached right now" rather than a bug. */
export function isDatabaseUnavailable(error: unknown): boolean {
  const candidate = error as { code?: string; message?: string } | undefined;
  if (!candidate) return false;
  if (candidate.code && unavailableCodes.has(candidate.code)) return true;
  const message = candidate.message ?? '';
  return /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|database ping timed out/i.test(
    message,
  );
}
