-- The webhook names only its connection (POST /v1/webhooks/messenger/{connectionId}), while
-- messenger_connections is distributed by organization: which organization a connection belongs to is
-- kept here, global and small (one row per connection, written when one is connected or deleted), so
-- the webhook finds its connection's row on one tenant instead of asking every node.
CREATE TABLE messenger_webhook_routes (
  connection_id   text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE
);
INSERT INTO messenger_webhook_routes (connection_id, organization_id)
SELECT id, organization_id FROM messenger_connections;

-- A worker takes one organization's due updates at a time (its walk names the organization), so the
-- pending and leased indexes lead with it.
DROP INDEX messenger_updates_pending_idx;
CREATE INDEX messenger_updates_pending_idx ON messenger_updates (organization_id, connection_id, order_key, update_id)
  WHERE status IN ('queued', 'retrying');
DROP INDEX messenger_updates_leased_idx;
CREATE INDEX messenger_updates_leased_idx ON messenger_updates (organization_id, connection_id, order_key)
  WHERE leased_until IS NOT NULL AND status IN ('queued', 'retrying');
