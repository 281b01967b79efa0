// SQL for bot connections and their updates. Every query on a tenant's rows names its organization.
// The platform's webhook names only the connection: its organization is looked up first, in the global
// messenger_webhook_routes (written with the connection), so that the connection's row is then read on
// one tenant.

import type { Database, Queryable } from '../../db/database.ts';

export type ConnectionStatus = 'active' | 'disabled';
export type UpdateStatus = 'queued' | 'retrying' | 'delivered' | 'dead';

export interface ConnectionRow {
  id: string;
  organization_id: string;
  bot_id: number;
  bot_username: string;
  bot_token_sealed: string;
  webhook_secret_hash: string;
  delivery_url: string;
  delivery_secret_sealed: string;
  status: ConnectionStatus;
  created_at: Date;
  updated_at: Date;
}

export interface UpdateRow {
  connection_id: string;
  update_id: number;
  chat_id: string | null;
  status: UpdateStatus;
  attempts: number;
  last_error: string | null;
  reply_status: 'sent' | 'failed' | null;
  received_at: Date;
  last_attempt_at: Date | null;
  delivered_at: Date | null;
}

export interface NewConnection {
  id: string;
  organizationId: string;
  botId: number;
  botUsername: string;
  botTokenSealed: string;
  webhookSecretHash: string;
  deliveryUrl: string;
  deliverySecretSealed: string;
  createdByMemberId: string | null;
}

export interface ClaimInput {
  connectionId: string;
  updateId: number;
  chatId: string | null;
  /** The update as received (JSON text), kept until it is delivered. */
  body: string;
  /** Which of the connection's updates are delivered one at a time, in update_id order (updates.ts). */
  orderKey: string;
}

// The rows to insert read the connections table itself besides the locked CTE (which they join, so the
// lock comes first): on Citus an INSERT ... SELECT whose source reads a distributed table of the same
// tenant runs on that tenant's shard, while one that reads only a function and a CTE is pulled to the
// coordinator and copied into the shard, where Citus 13.2 failed (missing data for column "status",
// test/citus).
const CLAIM_STATEMENT = `WITH named AS (
   -- Locked once per connection and statement: a concurrent delete waits for this commit
   -- (and then removes these claims) or, if first, leaves nothing to claim for.
   SELECT id, status FROM messenger_connections
    WHERE organization_id = $6 AND id = ANY($1::text[])
   FOR KEY SHARE
 ), inserted AS (
   INSERT INTO messenger_updates (connection_id, update_id, organization_id, chat_id, body, order_key)
   SELECT i.connection_id, i.update_id, c.organization_id, i.chat_id, i.body, i.order_key
     FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[]) AS i (connection_id, update_id, chat_id, body, order_key)
     JOIN messenger_connections c ON c.organization_id = $6 AND c.id = i.connection_id
     JOIN named n ON n.id = c.id AND n.status = 'active'
   ON CONFLICT (organization_id, connection_id, update_id) DO NOTHING
   RETURNING connection_id, update_id
 )
 SELECT 'claimed' AS kind, connection_id AS id, update_id, NULL AS status FROM inserted
 UNION ALL
 SELECT 'connection', id, NULL, status FROM named`;

async function getConnection(db: Queryable, organizationId: string, id: string): Promise<ConnectionRow | undefined> {
  const { rows } = await db.query<ConnectionRow>(
    'SELECT * FROM messenger_connections WHERE organization_id = $1 AND id = $2',
    [organizationId, id],
  );
  return rows[0];
}

/**
 * Erasing an organization: its bot connections, then their updates (the connections' delete first waits for
 * a claim that holds one, as deleteConnection does), then the webhook routes; in the caller's transaction.
 */
export async function eraseMessengerOfOrganization(tx: Queryable, organizationId: string): Promise<void> {
  await tx.query('DELETE FROM messenger_connections WHERE organization_id = $1', [organizationId]);
  await tx.query('DELETE FROM messenger_updates WHERE organization_id = $1', [organizationId]);
  await tx.query('DELETE FROM messenger_webhook_routes WHERE organization_id = $1', [organizationId]);
}

export function createMessengerStore() {
  return {
    async insertConnection(db: Queryable, c: NewConnection): Promise<ConnectionRow | undefined> {
      const { rows } = await db.query<ConnectionRow>(
        `INSERT INTO messenger_connections
           (id, organization_id, bot_id, bot_username, bot_token_sealed, webhook_secret_hash, delivery_url, delivery_secret_sealed, created_by_member_id)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
         ON CONFLICT (organization_id, bot_id) DO NOTHING
         RETURNING *`,
        [
          c.id,
          c.organizationId,
          c.botId,
          c.botUsername,
          c.botTokenSealed,
          c.webhookSecretHash,
          c.deliveryUrl,
          c.deliverySecretSealed,
          c.createdByMemberId,
        ],
      );
      if (rows[0])
        await db.query('INSERT INTO messenger_webhook_routes (connection_id, organization_id) VALUES ($1, $2)', [
          c.id,
          c.organizationId,
        ]);
      return rows[0];
    },

    /** Whether another organization has a connection for this bot. */
    async botConnectedElsewhere(db: Queryable, botId: number, organizationId: string): Promise<boolean> {
      const { rows } = await db.query(
        'SELECT 1 FROM messenger_connections WHERE bot_id = $1 AND organization_id <> $2 LIMIT 1',
        [botId, organizationId],
      );
      return rows.length > 0;
    },

    getConnection,

    /** For the webhook (authenticated by the secret) and a legacy job, which name only the connection. */
    async findConnectionByRoute(db: Queryable, id: string): Promise<ConnectionRow | undefined> {
      const { rows } = await db.query<{ organization_id: string }>(
        'SELECT organization_id FROM messenger_webhook_routes WHERE connection_id = $1',
        [id],
      );
      return rows[0] && getConnection(db, rows[0].organization_id, id);
    },

    async listConnections(
      db: Queryable,
      organizationId: string,
      after: string | undefined,
      limit: number,
    ): Promise<ConnectionRow[]> {
      const { rows } = await db.query<ConnectionRow>(
        `SELECT * FROM messenger_connections
          WHERE organization_id = $1 AND ($2::text IS NULL OR id > $2)
          ORDER BY id LIMIT $3`,
        [organizationId, after ?? null, limit],
      );
      return rows;
    },

    async updateConnection(
      db: Queryable,
      organizationId: string,
      id: string,
      changes: { status?: ConnectionStatus; deliveryUrl?: string },
    ): Promise<ConnectionRow | undefined> {
      const { rows } = await db.query<ConnectionRow>(
        `UPDATE messenger_connections
            SET status = COALESCE($3, status), delivery_url = COALESCE($4, delivery_url), updated_at = now()
          WHERE organization_id = $1 AND id = $2
          RETURNING *`,
        [organizationId, id, changes.status ?? null, changes.deliveryUrl ?? null],
      );
      return rows[0];
    },

    /**
     * Deletes the connection and then its updates, in the caller's transaction. Two statements: the
     * first may wait for a claim that holds the connection (FOR KEY SHARE), and only a statement begun
     * after that wait sees the claim's updates (a distributed table has no trigger to do it).
     */
    async deleteConnection(tx: Queryable, organizationId: string, id: string): Promise<ConnectionRow | undefined> {
      const { rows } = await tx.query<ConnectionRow>(
        'DELETE FROM messenger_connections WHERE organization_id = $1 AND id = $2 RETURNING *',
        [organizationId, id],
      );
      if (rows[0]) {
        await tx.query('DELETE FROM messenger_updates WHERE organization_id = $1 AND connection_id = $2', [
          organizationId,
          id,
        ]);
        await tx.query('DELETE FROM messenger_webhook_routes WHERE connection_id = $1', [id]);
      }
      return rows[0];
    },

    /**
     * Claims a batch of one organization's updates, in one statement (so one implicit transaction, one
     * round trip, a plan prepared once per connection, and on Citus one shard, where its lock can run):
     * a row is inserted only for an active connection of the organization and only if
     * the pair is new (the primary key decides, also between processes). The row is also the update's
     * delivery queue entry (migration 0504: its ordering key; due at once), so this one write is all
     * an accepted update costs. The statement has committed when it returns. A claim keeps the
     * update's body (text, not parsed) for the worker.
     * Returns the claimed pairs and the status of every connection named.
     */
    async claim(
      db: Database,
      organizationId: string,
      claims: ClaimInput[],
    ): Promise<{ claimed: Set<string>; connections: Map<string, { status: ConnectionStatus }> }> {
      const { rows } = await db.prepared<{
        kind: 'claimed' | 'connection';
        id: string;
        update_id: number | null;
        status: ConnectionStatus | null;
      }>('messenger_claim', CLAIM_STATEMENT, [
        claims.map((claim) => claim.connectionId),
        claims.map((claim) => claim.updateId),
        claims.map((claim) => claim.chatId),
        claims.map((claim) => claim.body),
        claims.map((claim) => claim.orderKey),
        organizationId,
      ]);
      const claimed = new Set<string>();
      const connections = new Map<string, { status: ConnectionStatus }>();
      for (const row of rows) {
        if (row.kind === 'claimed') claimed.add(`${row.id}:${row.update_id}`);
        else connections.set(row.id, { status: row.status! });
      }
      return { claimed, connections };
    },

    async listUpdates(
      db: Queryable,
      organizationId: string,
      connectionId: string,
      filter: { status: UpdateStatus | undefined; beforeUpdateId: number | undefined; limit: number },
    ): Promise<UpdateRow[]> {
      const { rows } = await db.query<UpdateRow>(
        `SELECT connection_id, update_id, chat_id, status, attempts, last_error, reply_status, received_at, last_attempt_at, delivered_at
           FROM messenger_updates
          WHERE organization_id = $1 AND connection_id = $2
            AND ($3::text IS NULL OR status = $3)
            AND ($4::bigint IS NULL OR update_id < $4)
          ORDER BY update_id DESC
          LIMIT $5`,
        [organizationId, connectionId, filter.status ?? null, filter.beforeUpdateId ?? null, filter.limit],
      );
      return rows;
    },
  };
}

export type MessengerStore = ReturnType<typeof createMessengerStore>;
