-- The audit log: one row per event, in one hash chain per organization (chain_id is the organization's
-- id, or 'instance' for events that belong to no organization, such as a failed sign-in of an unknown
-- account). seq numbers a chain's events from 1 without gaps; hash is the SHA-256 of the event's
-- canonical form, which includes prev_hash, the hash of the event before it in the chain.
CREATE TABLE audit_events (
  id text PRIMARY KEY,
  chain_id text NOT NULL,
  seq bigint NOT NULL,
  organization_id text,
  occurred_at timestamptz NOT NULL,
  action text NOT NULL,
  outcome text NOT NULL CHECK (outcome IN ('success', 'denied', 'failure')),
  actor_type text NOT NULL,
  actor_id text NOT NULL,
  actor_name text,
  actor_email text,
  target_type text NOT NULL,
  target_id text NOT NULL,
  target_name text,
  ip text,
  user_agent text,
  request_id text,
  changes jsonb,
  prev_hash text NOT NULL,
  hash text NOT NULL,
  UNIQUE (chain_id, seq)
);
CREATE INDEX audit_events_organization_seq ON audit_events (organization_id, seq DESC);
CREATE INDEX audit_events_request ON audit_events (request_id);

-- Where a chain starts after retention pruned its oldest events: the last pruned event's seq and hash.
CREATE TABLE audit_checkpoints (
  chain_id text PRIMARY KEY,
  seq bigint NOT NULL,
  hash text NOT NULL,
  pruned_at timestamptz NOT NULL DEFAULT now()
);
