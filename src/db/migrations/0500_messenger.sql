-- Messaging-bot connections and the updates their webhooks delivered.
-- The bot token and the delivery secret are sealed (AES-256-GCM, SecretBox); the webhook secret is
-- kept only as a SHA-256 hash. The queue jobs themselves live in pg-boss's own schema.

CREATE TABLE messenger_connections (
  id                     text PRIMARY KEY,
  organization_id        text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  bot_id                 bigint NOT NULL,
  bot_username           text NOT NULL,
  bot_token_sealed       text NOT NULL,
  webhook_secret_hash    text NOT NULL,
  delivery_url           text NOT NULL,
  delivery_secret_sealed text NOT NULL,
  status                 text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'disabled')),
  created_by_member_id   text REFERENCES members (id) ON DELETE SET NULL,
  created_at             timestamptz NOT NULL DEFAULT now(),
  updated_at             timestamptz NOT NULL DEFAULT now(),
  -- One connection per bot in an organization: a bot has a single webhook.
  UNIQUE (organization_id, bot_id)
);
CREATE INDEX messenger_connections_org_idx ON messenger_connections (organization_id, id);

-- One row per accepted update: the durable claim (the primary key is what makes a duplicate a
-- duplicate) and, afterwards, its processing state.
CREATE TABLE messenger_updates (
  connection_id   text NOT NULL REFERENCES messenger_connections (id) ON DELETE CASCADE,
  update_id       bigint NOT NULL CHECK (update_id >= 0),
  organization_id text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  chat_id         text,
  status          text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'retrying', 'delivered', 'dead')),
  attempts        integer NOT NULL DEFAULT 0,
  last_error      text,
  reply_status    text CHECK (reply_status IN ('sent', 'failed')),
  received_at     timestamptz NOT NULL DEFAULT now(),
  last_attempt_at timestamptz,
  delivered_at    timestamptz,
  PRIMARY KEY (connection_id, update_id)
);
CREATE INDEX messenger_updates_status_idx ON messenger_updates (connection_id, status, update_id);
