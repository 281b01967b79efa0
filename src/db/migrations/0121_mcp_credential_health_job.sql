-- Background credential health (issue 21): a scheduled job refreshes OAuth tokens before they expire
-- and probes every stored credential on an interval. The schedule and the count of inconclusive
-- failures live on the credential; the lease that keeps one connection with one process at a time
-- lives on the connection (a process claims a connection with FOR NO KEY UPDATE SKIP LOCKED and holds
-- it until health_lease_until, so a process that dies leaves it to the next one).
ALTER TABLE mcp_connection_credentials
  -- The next probe of the credential; NULL: at the job's next run (a credential just stored).
  ADD COLUMN health_due_at timestamptz,
  -- Consecutive checks that failed without saying anything about the credential (server unreachable, 5xx).
  ADD COLUMN health_failures integer NOT NULL DEFAULT 0,
  -- The last time the server accepted the credential in a probe; NULL: never since it was stored.
  ADD COLUMN validated_at timestamptz;

-- Credentials in use before this job are taken as validated when their last check passed.
UPDATE mcp_connection_credentials SET validated_at = health_checked_at WHERE health = 'ready';

ALTER TABLE mcp_connections
  ADD COLUMN health_lease_until timestamptz,
  ADD COLUMN health_lease_token text;

CREATE INDEX mcp_connection_credentials_health_due_idx ON mcp_connection_credentials (health_due_at)
  WHERE health <> 'reconnect_required';
