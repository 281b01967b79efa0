-- Memory lifecycle: a memory changes (with its earlier versions kept), expires, is superseded by a
-- newer one, and says when it happened and who said it.
--
-- `content_key` is a digest of the content as the analyzer reads it (NFKC, lower case, letter and digit
-- runs): creating a memory whose key matches a live one of the same bank returns that one instead.
-- Memories written before this migration have none, so they are never matched: the digest is computed
-- by the application, which SQL cannot repeat exactly.
-- `superseded_by` names the memory that replaced this one; a superseded or expired memory stays stored
-- but leaves search (filtered at query time), and an expired one is deleted later by the memory
-- module's pruning worker.
ALTER TABLE memories
  ADD COLUMN version       integer NOT NULL DEFAULT 1,
  ADD COLUMN updated_by    text,
  ADD COLUMN expires_at    timestamptz,
  ADD COLUMN occurred_at   timestamptz,
  ADD COLUMN speaker       text,
  ADD COLUMN superseded_by text,
  ADD COLUMN content_key   text;

CREATE INDEX memories_content_key_idx ON memories (user_id, bank_id, content_key) WHERE content_key IS NOT NULL;
-- The pruning worker's scan: only memories that expire are in it.
CREATE INDEX memories_expires_idx ON memories (expires_at) WHERE expires_at IS NOT NULL;

-- The earlier versions of a memory, one row per change (the current version is the memory's row).
-- They go with their memory (deleted with it, and with its bank when a user or an organization is
-- deleted): the foreign key to memories (user_id, id) is added by migration 1004, because on a new
-- database this file runs before 0800 makes (user_id, id) memories' key, and a unique index added here
-- for it would duplicate that key from then on. A change of content re-inserts the memory's row under
-- the same id (new postings), so the store carries the versions over that re-insertion.
CREATE TABLE memory_versions (
  user_id     text NOT NULL,
  memory_id   text NOT NULL,
  version     integer NOT NULL,
  content     text NOT NULL,
  tags        text[] NOT NULL,
  expires_at  timestamptz,
  occurred_at timestamptz,
  speaker     text,
  changed_at  timestamptz NOT NULL,
  changed_by  text NOT NULL,
  PRIMARY KEY (user_id, memory_id, version)
);
