// SQL of the desktop app's sign-in codes (migrations 0900, 0902). Keyed by the hash of a one-time code, which
// belongs to exactly one person.
import type { Queryable } from '../../db/database.ts';

export interface DesktopSignInCodeRow {
  user_id: string;
  organization_id: string | null;
  code_challenge: string;
  redirect_uri: string;
  auth_method: 'password' | 'sso';
  /** When the browser session that asked for the code last authenticated: the app's session inherits it. */
  authenticated_at: Date;
}

export async function insertDesktopSignInCode(
  db: Queryable,
  row: DesktopSignInCodeRow & { code_hash: string; ttlSeconds: number },
): Promise<void> {
  await db.query('DELETE FROM desktop_sign_in_codes WHERE expires_at < now()', []);
  await db.query(
    `INSERT INTO desktop_sign_in_codes (code_hash, user_id, organization_id, code_challenge, redirect_uri, auth_method, authenticated_at, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, now() + make_interval(secs => $8))`,
    [
      row.code_hash,
      row.user_id,
      row.organization_id,
      row.code_challenge,
      row.redirect_uri,
      row.auth_method,
      row.authenticated_at,
      row.ttlSeconds,
    ],
  );
}

/**
 * Takes a code: once only (whatever the exchange then decides), and only before it expires. The time
 * comes from a joined one-row subquery: Citus refuses now() in the RETURNING clause of a DELETE.
 */
export async function takeDesktopSignInCode(
  db: Queryable,
  codeHash: string,
): Promise<DesktopSignInCodeRow | undefined> {
  const { rows } = await db.query<DesktopSignInCodeRow & { live: boolean }>(
    'DELETE FROM desktop_sign_in_codes c USING (SELECT now() AS now) clock WHERE c.code_hash = $1 RETURNING c.*, c.expires_at > clock.now AS live',
    [codeHash],
  );
  return rows[0]?.live ? rows[0] : undefined;
}
