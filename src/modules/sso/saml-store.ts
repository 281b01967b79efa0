// SQL of SAML sign-in: the AuthnRequests in progress (found by their RelayState's hash, taken once) and
// the assertions already accepted (kept until they expire, so none is accepted twice by any process).
import type { Queryable } from '../../db/database.ts';
import type { OpenedSignIn, PendingSignIn } from './sign-in-store.ts';

export interface SamlRequestRow {
  request_id: string;
  organization_id: string;
  connection_id: string;
  redirect_uri: string;
  client_code_challenge: string;
  reauthenticate: boolean;
  /** As for OIDC (sign-in-store.ts): the link's id hashed, the IdP's URL sealed, the browser bound to it. */
  authorize_hash: string;
  authorization_url_sealed: string;
  browser_binding_hash: string | null;
  created_at: Date;
  expires_at: Date;
}

export function createSamlStore() {
  return {
    async insertRequest(
      db: Queryable,
      row: Omit<SamlRequestRow, 'created_at' | 'expires_at' | 'browser_binding_hash'> & {
        relay_state_hash: string;
        ttlSeconds: number;
      },
    ): Promise<void> {
      await db.query('DELETE FROM sso_saml_requests WHERE expires_at < now()', []);
      await db.query(
        `INSERT INTO sso_saml_requests (relay_state_hash, request_id, organization_id, connection_id, redirect_uri, client_code_challenge, reauthenticate,
                                        authorize_hash, authorization_url_sealed, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, now() + make_interval(secs => $10))`,
        [
          row.relay_state_hash,
          row.request_id,
          row.organization_id,
          row.connection_id,
          row.redirect_uri,
          row.client_code_challenge,
          row.reauthenticate,
          row.authorize_hash,
          row.authorization_url_sealed,
          row.ttlSeconds,
        ],
      );
    },

    /** Opens the link of a live SAML sign-in in a browser, as sign-in-store.ts's openRequest does for OIDC. */
    async openRequest(db: Queryable, authorizeHash: string, bindingHash: string): Promise<OpenedSignIn | undefined> {
      const { rows } = await db.query<OpenedSignIn>(
        `UPDATE sso_saml_requests SET browser_binding_hash = COALESCE(browser_binding_hash, $2)
          WHERE authorize_hash = $1 AND expires_at > now()
          RETURNING authorization_url_sealed, browser_binding_hash`,
        [authorizeHash, bindingHash],
      );
      return rows[0];
    },

    /** The live request with this RelayState, without taking it: the ACS checks the browser first. */
    async pendingRequest(db: Queryable, relayStateHash: string): Promise<PendingSignIn | undefined> {
      const { rows } = await db.query<PendingSignIn>(
        'SELECT organization_id, connection_id, browser_binding_hash FROM sso_saml_requests WHERE relay_state_hash = $1 AND expires_at > now()',
        [relayStateHash],
      );
      return rows[0];
    },

    /** Takes the request with this RelayState: once only (whatever the answer then turns out to be), and only before it expires. */
    async takeRequest(db: Queryable, relayStateHash: string): Promise<SamlRequestRow | undefined> {
      const { rows } = await db.query<SamlRequestRow & { live: boolean }>(
        'DELETE FROM sso_saml_requests r USING (SELECT now() AS now) clock WHERE r.relay_state_hash = $1 RETURNING r.*, r.expires_at > clock.now AS live',
        [relayStateHash],
      );
      return rows[0]?.live ? rows[0] : undefined;
    },

    /** Records an accepted assertion; false when the IdP's assertion id is already recorded (unexpired) for the connection. */
    async recordAssertion(
      db: Queryable,
      row: { connectionId: string; organizationId: string; assertionId: string; expiresAt: Date },
    ): Promise<boolean> {
      // The organization's expired assertions: each organization's are pruned when it next signs someone in.
      await db.query('DELETE FROM sso_saml_assertions WHERE organization_id = $1 AND expires_at < now()', [
        row.organizationId,
      ]);
      const { rows } = await db.query(
        `INSERT INTO sso_saml_assertions (connection_id, assertion_id, organization_id, expires_at) VALUES ($1, $2, $3, $4)
         ON CONFLICT (organization_id, connection_id, assertion_id) DO NOTHING RETURNING 1`,
        [row.connectionId, row.assertionId, row.organizationId, row.expiresAt],
      );
      return rows.length === 1;
    },

    /** The public facts of a connection's SP metadata: that it exists and is SAML. */
    async findSamlConnection(db: Queryable, connectionId: string): Promise<{ id: string } | undefined> {
      const { rows } = await db.query<{ id: string }>(
        `SELECT id FROM sso_connections WHERE id = $1 AND protocol = 'saml'`,
        [connectionId],
      );
      return rows[0];
    },
  };
}
