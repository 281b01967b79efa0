// SQL for bot connections and their updates. Every query on a tenant's rows filters on its
// organization, except the two the platform-facing paths need (webhook lookup by connection id,
// which is authenticated by the secret, and the worker's, which follows a job it was given).

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
}

export function createMessengerStore() {
  // The claim statement for each shape of pg-boss's insert (one in practice), prepared under its own name.
  const claimStatements = new Map<string, { name: string; text: string }>();
  return {
    async insertConnection(db: Queryable, c: NewConnection): Promise<ConnectionRow | undefined> {
      const { rows } = await db.query<ConnectionRow>(
        `INSERT INTO messenger_connections
           (id, organization_id, bot_id, bot_username, bot_token_sealed, webhook_secret_hash, delivery_url, delivery_secret_sealed, created_by_member_id)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
         ON CONFLICT (organization_id, bot_id) DO NOTHING
         RETURNING *`,
        [c.id, c.organizationId, c.botId, c.botUsername, c.botTokenSealed, c.webhookSecretHash, c.deliveryUrl, c.deliverySecretSealed, c.createdByMemberId],
      );
      return rows[0];
    },

    /** Whether another organization has a connection for this bot. */
    async botConnectedElsewhere(db: Queryable, botId: number, organizationId: string): Promise<boolean> {
      const { rows } = await db.query('SELECT 1 FROM messenger_connections WHERE bot_id = $1 AND organization_id <> $2 LIMIT 1', [botId, organizationId]);
      return rows.length > 0;
    },

    async getConnection(db: Queryable, organizationId: string, id: string): Promise<ConnectionRow | undefined> {
      const { rows } = await db.query<ConnectionRow>('SELECT * FROM messenger_connections WHERE organization_id = $1 AND id = $2', [organizationId, id]);
      return rows[0];
    },

    /** For the webhook (authenticated by the secret) and the worker (following its job). */
    async getConnectionById(db: Queryable, id: string): Promise<ConnectionRow | undefined> {
      const { rows } = await db.query<ConnectionRow>('SELECT * FROM messenger_connections WHERE id = $1', [id]);
      return rows[0];
    },

    async listConnections(db: Queryable, organizationId: string, after: string | undefined, limit: number): Promise<ConnectionRow[]> {
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

    async deleteConnection(db: Queryable, organizationId: string, id: string): Promise<ConnectionRow | undefined> {
      const { rows } = await db.query<ConnectionRow>('DELETE FROM messenger_connections WHERE organization_id = $1 AND id = $2 RETURNING *', [organizationId, id]);
      return rows[0];
    },

    /**
     * Claims a batch of updates and queues the jobs of those it claimed, in one statement (so one
     * implicit transaction, one round trip, and a plan prepared once per connection): a row is
     * inserted only for an active connection and only if the pair is new (the primary key decides,
     * also between processes), and `jobs` (pg-boss's own INSERT, see JobQueue.insertStatement) is
     * run, as a data-modifying CTE, for the claimed ones only. The statement has committed when it
     * returns. `claims` and the jobs JSON array are in the same order, one job per claim. A claim
     * keeps the update's body (text, not parsed) for the worker.
     * Returns the claimed pairs and the status of every connection named.
     */
    async claimAndEnqueue(
      db: Database,
      claims: ClaimInput[],
      jobs: { text: string; jobsJson: string },
    ): Promise<{ claimed: Set<string>; connections: Map<string, { status: ConnectionStatus; organizationId: string }> }> {
      let statement = claimStatements.get(jobs.text);
      if (!statement) {
        // The jobs of the claimed updates. When every update of the batch was claimed (the usual
        // case) that is the whole array, passed on as it came; only otherwise is it taken apart.
        const claimedJobs = `(CASE WHEN (SELECT count(*) FROM inserted) = cardinality($1::text[]) THEN $5::text ELSE
             (SELECT COALESCE(json_agg(j.job ORDER BY j.n), '[]'::json)
                FROM json_array_elements($5::json) WITH ORDINALITY AS j (job, n)
                JOIN input i ON i.n = j.n
                JOIN inserted x ON x.connection_id = i.connection_id AND x.update_id = i.update_id)::text
           END)::json`;
        statement = {
          name: `messenger_claim_${claimStatements.size + 1}`,
          text: `WITH input AS (
             SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[]) WITH ORDINALITY AS i (connection_id, update_id, chat_id, body, n)
           ), named AS (
             -- Locked once per connection and statement: a concurrent delete waits for this commit
             -- (its trigger then removes these claims) or, if first, leaves nothing to claim for.
             SELECT id, status, organization_id FROM messenger_connections WHERE id IN (SELECT DISTINCT connection_id FROM input)
             FOR KEY SHARE
           ), inserted AS (
             INSERT INTO messenger_updates (connection_id, update_id, organization_id, chat_id, body)
             SELECT i.connection_id, i.update_id, c.organization_id, i.chat_id, i.body
               FROM input i JOIN named c ON c.id = i.connection_id AND c.status = 'active'
             ON CONFLICT (connection_id, update_id) DO NOTHING
             RETURNING connection_id, update_id
           ), queued AS (
             ${jobs.text.replace('$1::text::json', () => claimedJobs)}
           )
           SELECT 'claimed' AS kind, connection_id AS id, update_id, NULL AS status, NULL AS organization_id FROM inserted
           UNION ALL
           SELECT 'connection', id, NULL, status, organization_id FROM named`,
        };
        claimStatements.set(jobs.text, statement);
      }
      const { rows } = await db.prepared<{ kind: 'claimed' | 'connection'; id: string; update_id: number | null; status: ConnectionStatus | null; organization_id: string | null }>(
        statement.name,
        statement.text,
        [claims.map((claim) => claim.connectionId), claims.map((claim) => claim.updateId), claims.map((claim) => claim.chatId), claims.map((claim) => claim.body), jobs.jobsJson],
      );
      const claimed = new Set<string>();
      const connections = new Map<string, { status: ConnectionStatus; organizationId: string }>();
      for (const row of rows) {
        if (row.kind === 'claimed') claimed.add(`${row.id}:${row.update_id}`);
        else connections.set(row.id, { status: row.status!, organizationId: row.organization_id! });
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

    /**
     * Picks the update a delivery job is to attempt, counts the attempt, and returns the update's id and
     * body (null if it was claimed before bodies were kept with claims); undefined when nothing is left.
     * A job of a chat takes the chat's earliest pending update, one already being attempted first (so a
     * retry stays with it): the queue runs a chat's jobs one at a time in arrival order, and this puts
     * its deliveries in update_id order. Only updates whose body is kept here are taken that way; a job
     * that carries its update (queued before 0502), or one with no chat, attempts its own update.
     */
    async startAttempt(db: Queryable, job: { connectionId: string; updateId: number; chatId: string | null; ownUpdateOnly: boolean }, attempt: number): Promise<{ updateId: number; body: string | null } | undefined> {
      const { rows } = job.chatId === null || job.ownUpdateOnly
        ? await db.query<{ update_id: string; body: string | null }>(
          `UPDATE messenger_updates SET attempts = GREATEST(attempts, $3), last_attempt_at = now()
            WHERE connection_id = $1 AND update_id = $2 AND status <> 'delivered'
            RETURNING update_id, body`,
          [job.connectionId, job.updateId, attempt],
        )
        : await db.query<{ update_id: string; body: string | null }>(
          `WITH next AS (
             SELECT update_id FROM messenger_updates
              WHERE connection_id = $1 AND chat_id = $2 AND status IN ('queued', 'retrying') AND body IS NOT NULL
              ORDER BY attempts > 0 DESC, update_id
              LIMIT 1
           )
           UPDATE messenger_updates u SET attempts = GREATEST(u.attempts, $3), last_attempt_at = now()
             FROM next WHERE u.connection_id = $1 AND u.update_id = next.update_id
           RETURNING u.update_id, u.body`,
          [job.connectionId, job.chatId, attempt],
        );
      const row = rows[0];
      return row && { updateId: Number(row.update_id), body: row.body };
    },

    async markDelivered(db: Queryable, connectionId: string, updateId: number, reply: { status: 'sent' | 'failed' | null; error: string | null }): Promise<void> {
      await db.query(
        `UPDATE messenger_updates
            SET status = 'delivered', delivered_at = now(), reply_status = $3, last_error = $4, body = NULL
          WHERE connection_id = $1 AND update_id = $2`,
        [connectionId, updateId, reply.status, reply.error],
      );
    },

    async markFailed(db: Queryable, connectionId: string, updateId: number, status: 'retrying' | 'dead', error: string): Promise<void> {
      await db.query(
        // A late failure report never downgrades an update another attempt already delivered.
        `UPDATE messenger_updates SET status = $3, last_error = $4
          WHERE connection_id = $1 AND update_id = $2 AND status <> 'delivered'`,
        [connectionId, updateId, status, error],
      );
    },
  };
}

export type MessengerStore = ReturnType<typeof createMessengerStore>;
