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
