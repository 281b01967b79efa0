// What a database error says about its cause, read from its SQLSTATE (`code`: PostgreSQL's driver and
// PGlite both carry it there).

function sqlStateOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null | undefined)?.code;
  // A SQLSTATE is five characters; a socket error's code (ECONNRESET...) is a longer word.
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && /^[0-9]/.test(code) ? code : undefined;
}

/** A unique constraint refused the row (23505). */
export function isUniqueViolation(error: unknown): boolean {
  return sqlStateOf(error) === '23505';
}

/**
 * The database refused what a statement carried (class 22, data exception; 23, integrity constraint
 * violation; 54, program limit exceeded, such as a value too large), as opposed to being unreachable,
 * restarting, out of resources or rolling back a transaction for concurrency: a cause that can belong
 * to one row of a statement, and stays with it when the statement is retried.
 */
export function isDataError(error: unknown): boolean {
  const state = sqlStateOf(error);
  return state !== undefined && ['22', '23', '54'].includes(state.slice(0, 2));
}
