// SQL of SSO sign-in: the connection a domain signs in with, the sign-ins in progress, the one-time
// codes, the linked IdP subjects and the connection's health. Every statement names its organization
// or is keyed by a secret's hash that belongs to exactly one.
import type { Queryable } from '../../db/database.ts';
import type { SsoConnectionRow } from './store.ts';

export interface SignInRequestRow {
  state_hash: string;
  organization_id: string;
  connection_id: string;
  nonce: string;
  code_verifier_sealed: string;
  redirect_uri: string;
  client_code_challenge: string;
  reauthenticate: boolean;
  /** Hash of the id of the sign-in's link (GET /v1/auth/sso/authorize?request=). */
  authorize_hash: string;
  /** The identity provider's URL the link sends the browser to. */
  authorization_url_sealed: string;
  /** Hash of the secret of the browser that opened the link first (browser-binding.ts); null until one did. */
  browser_binding_hash: string | null;
  expires_at: Date;
}

/** A sign-in's link, opened: where the browser goes, and the browser the sign-in is bound to. */
export interface OpenedSignIn {
  authorization_url_sealed: string;
  browser_binding_hash: string;
}

/** A sign-in in progress, as its return looks it up before taking it. */
export interface PendingSignIn {
  organization_id: string;
  connection_id: string;
  browser_binding_hash: string | null;
}

export interface SignInCodeRow {
  organization_id: string;
  connection_id: string;
  user_id: string;
  client_code_challenge: string;
  reauthenticate: boolean;
  expires_at: Date;
}

export function createSignInStore() {
  return {
    /** The connection whose verified domain is `domain`. */
    async findByVerifiedDomain(db: Queryable, domain: string): Promise<SsoConnectionRow | undefined> {
      const { rows } = await db.query<SsoConnectionRow>(
        `SELECT * FROM sso_connections WHERE domain = $1 AND domain_verified_at IS NOT NULL`,
        [domain],
      );
      return rows[0];
    },

    async findById(db: Queryable, organizationId: string, connectionId: string): Promise<SsoConnectionRow | undefined> {
      const { rows } = await db.query<SsoConnectionRow>(
        'SELECT * FROM sso_connections WHERE organization_id = $1 AND id = $2',
        [organizationId, connectionId],
      );
      return rows[0];
    },

    async insertRequest(
      db: Queryable,
      row: Omit<SignInRequestRow, 'expires_at' | 'browser_binding_hash'> & { ttlSeconds: number },
    ): Promise<void> {
      await db.query('DELETE FROM sso_sign_in_requests WHERE expires_at < now()', []);
      await db.query(
        `INSERT INTO sso_sign_in_requests (state_hash, organization_id, connection_id, nonce, code_verifier_sealed, redirect_uri,
                                           client_code_challenge, reauthenticate, authorize_hash, authorization_url_sealed, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, now() + make_interval(secs => $11))`,
        [
          row.state_hash,
          row.organization_id,
          row.connection_id,
          row.nonce,
          row.code_verifier_sealed,
          row.redirect_uri,
          row.client_code_challenge,
          row.reauthenticate,
          row.authorize_hash,
          row.authorization_url_sealed,
          row.ttlSeconds,
        ],
      );
    },

    /**
     * Opens the link of a live sign-in in a browser: binds the sign-in to it when no browser opened the
     * link before (the first one keeps it), and answers the bound browser and where the link leads.
     */
    async openRequest(db: Queryable, authorizeHash: string, bindingHash: string): Promise<OpenedSignIn | undefined> {
      const { rows } = await db.query<OpenedSignIn>(
        `UPDATE sso_sign_in_requests SET browser_binding_hash = COALESCE(browser_binding_hash, $2)
          WHERE authorize_hash = $1 AND expires_at > now()
          RETURNING authorization_url_sealed, browser_binding_hash`,
        [authorizeHash, bindingHash],
      );
      return rows[0];
    },

    /** The live sign-in with this state, without taking it: its return checks the browser first. */
    async pendingRequest(db: Queryable, stateHash: string): Promise<PendingSignIn | undefined> {
      const { rows } = await db.query<PendingSignIn>(
        'SELECT organization_id, connection_id, browser_binding_hash FROM sso_sign_in_requests WHERE state_hash = $1 AND expires_at > now()',
        [stateHash],
      );
      return rows[0];
    },

    /**
     * Takes the sign-in in progress with this state: once only, and only before it expires. The time
     * comes from a joined one-row subquery: Citus refuses now() in the RETURNING clause of a DELETE.
     */
    async takeRequest(db: Queryable, stateHash: string): Promise<SignInRequestRow | undefined> {
      const { rows } = await db.query<SignInRequestRow>(
        'DELETE FROM sso_sign_in_requests r USING (SELECT now() AS now) clock WHERE r.state_hash = $1 RETURNING r.*, r.expires_at > clock.now AS live',
        [stateHash],
      );
      const row = rows[0] as (SignInRequestRow & { live: boolean }) | undefined;
      return row?.live ? row : undefined;
    },

    async insertCode(
      db: Queryable,
      row: Omit<SignInCodeRow, 'expires_at'> & { code_hash: string; ttlSeconds: number },
    ): Promise<void> {
      await db.query('DELETE FROM sso_sign_in_codes WHERE expires_at < now()', []);
      await db.query(
        `INSERT INTO sso_sign_in_codes (code_hash, organization_id, connection_id, user_id, client_code_challenge, reauthenticate, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, now() + make_interval(secs => $7))`,
        [
          row.code_hash,
          row.organization_id,
          row.connection_id,
          row.user_id,
          row.client_code_challenge,
          row.reauthenticate,
          row.ttlSeconds,
        ],
      );
    },

    /** Takes a code: once only (whatever the exchange then decides), and only before it expires. */
    async takeCode(db: Queryable, codeHash: string): Promise<SignInCodeRow | undefined> {
      const { rows } = await db.query<SignInCodeRow & { live: boolean }>(
        'DELETE FROM sso_sign_in_codes c USING (SELECT now() AS now) clock WHERE c.code_hash = $1 RETURNING c.*, c.expires_at > clock.now AS live',
        [codeHash],
      );
      return rows[0]?.live ? rows[0] : undefined;
    },

    async findLinkedUser(
      db: Queryable,
      organizationId: string,
      connectionId: string,
      subject: string,
    ): Promise<string | undefined> {
      const { rows } = await db.query<{ user_id: string }>(
        'SELECT user_id FROM sso_identities WHERE organization_id = $1 AND connection_id = $2 AND subject = $3',
        [organizationId, connectionId, subject],
      );
      return rows[0]?.user_id;
    },

    /**
     * What ties the account to the organization besides a membership: an IdP subject the organization's
     * SSO linked to it before, and a SCIM user the organization's directory provisioned for it (scim's
     * table, read here in one statement; SCIM depends on SSO, so it cannot be asked).
     */
    async findAccountTies(
      db: Queryable,
      organizationId: string,
      userId: string,
    ): Promise<{ linked: boolean; provisioned: boolean }> {
      const { rows } = await db.query<{ linked: boolean; provisioned: boolean }>(
        `SELECT EXISTS (SELECT 1 FROM sso_identities WHERE organization_id = $1 AND user_id = $2) AS linked,
                EXISTS (SELECT 1 FROM scim_users WHERE organization_id = $1 AND user_id = $2) AS provisioned`,
        [organizationId, userId],
      );
      return rows[0]!;
    },

    /** Links the IdP subject to the account; false when the subject is linked to another account already. */
    async link(
      db: Queryable,
      row: { connectionId: string; subject: string; organizationId: string; userId: string },
    ): Promise<boolean> {
      const { rows } = await db.query<{ user_id: string }>(
        `INSERT INTO sso_identities (connection_id, subject, organization_id, user_id) VALUES ($1, $2, $3, $4)
         ON CONFLICT (organization_id, connection_id, subject) DO UPDATE SET connection_id = EXCLUDED.connection_id
         RETURNING user_id`,
        [row.connectionId, row.subject, row.organizationId, row.userId],
      );
      return rows[0]?.user_id === row.userId;
    },

    async recordSignIn(db: Queryable, organizationId: string, connectionId: string): Promise<void> {
      await db.query('UPDATE sso_connections SET last_sign_in_at = now() WHERE organization_id = $1 AND id = $2', [
        organizationId,
        connectionId,
      ]);
    },

    async recordError(
      db: Queryable,
      organizationId: string,
      connectionId: string,
      category: string,
      message: string,
    ): Promise<void> {
      await db.query(
        `UPDATE sso_connections SET last_error_at = now(), last_error_category = $3, last_error_message = $4
          WHERE organization_id = $1 AND id = $2`,
        [organizationId, connectionId, category, message.slice(0, 500)],
      );
    },
  };
}

export type SignInStore = ReturnType<typeof createSignInStore>;
