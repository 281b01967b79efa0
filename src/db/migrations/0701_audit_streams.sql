-- An organization's audit-log stream: where its events are POSTed (a SIEM's HTTP intake), and how far
-- delivery has got. cursor_seq is the position (audit_events.seq) of the organization's chain up to
-- which every event has been delivered; the next batch is the events after it, in order. A worker
-- leases the stream for one attempt (leased_until) and its lease number fences that attempt's settle.
-- failed_attempts counts failures of the batch at the cursor; after the configured number the stream
-- is dead (dead_at) and stops until it is enabled again.
CREATE TABLE audit_streams (
  organization_id text PRIMARY KEY REFERENCES organizations (id) ON DELETE CASCADE,
  url text NOT NULL,
  signing_secret_sealed text NOT NULL,
  enabled boolean NOT NULL,
  cursor_seq bigint NOT NULL,
  last_delivered_event_id text,
  last_delivered_at timestamptz,
  failed_attempts integer NOT NULL DEFAULT 0,
  last_error text,
  last_error_at timestamptz,
  dead_at timestamptz,
  run_after timestamptz NOT NULL DEFAULT now(),
  leased_until timestamptz,
  lease bigint NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
