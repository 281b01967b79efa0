// Step-up re-authentication in tests: a session made to look as if its person authenticated long ago.
import type { TestApp } from '../support/app.ts';
import { hashToken } from '../../src/platform/tokens.ts';

/** Moves the session's last authentication an hour back (past the default REAUTH_MAX_AGE_SECONDS of 900). */
export async function ageSession(app: TestApp, token: string, seconds = 3600): Promise<void> {
  const { rowCount } = await app.db.query(
    `UPDATE sessions SET authenticated_at = now() - make_interval(secs => $2) WHERE token_hash = $1`,
    [hashToken(token), seconds],
  );
  if (rowCount !== 1) throw new Error('no such session');
}

export const reauthBody = { error: 'reauth', reason: 'authentication_too_old' };
