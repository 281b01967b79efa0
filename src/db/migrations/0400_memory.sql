-- Memory: each user's own notes, with BM25F full-text ranking computed in SQL.
--
-- A bank is the set of memories one user keeps under one organization ('' = none): the unit of
-- search and of the ranking statistics. Its row carries the statistics BM25 needs that are not
-- in the postings (number of memories, summed field lengths); they change in the same transaction
-- as the memories, under the bank row's lock, so they are exact under concurrent writes.
-- Document frequencies are counted from the postings at query time, in the search's snapshot.
CREATE TABLE memory_banks (
  id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  user_id         text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  org_key         text NOT NULL,
  organization_id text REFERENCES organizations (id) ON DELETE CASCADE,
  doc_count       bigint NOT NULL DEFAULT 0,
  head_length_sum bigint NOT NULL DEFAULT 0,
  body_length_sum bigint NOT NULL DEFAULT 0,
  CHECK (org_key = coalesce(organization_id, '')),
  UNIQUE (user_id, org_key)
);

CREATE TABLE memories (
  id          text PRIMARY KEY,
  -- A compact surrogate used by the postings (8 bytes instead of a 30-character TypeID per posting).
  seq         bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
  bank_id     bigint NOT NULL REFERENCES memory_banks (id) ON DELETE CASCADE,
  user_id     text NOT NULL,
  organization_id text,
  content     text NOT NULL,
  tags        text[] NOT NULL DEFAULT '{}',
  source      text NOT NULL,
  scope       text NOT NULL,
  -- The analyzed form: distinct terms and their frequencies in the headline and body, and the
  -- field lengths. Kept so that a delete removes exactly the postings it added.
  terms       text[] NOT NULL,
  head_tf     integer[] NOT NULL,
  body_tf     integer[] NOT NULL,
  head_length integer NOT NULL,
  body_length integer NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX memories_bank_created_idx ON memories (bank_id, created_at DESC, id DESC);

-- One row per (memory, distinct term): the inverted index. The key leads with the bank, so a
-- search reads only the caller's postings; the frequencies and lengths ride in the index so that
-- scoring is an index-only scan. Terms compare bytewise (COLLATE "C"): ordering by language rules
-- is of no use here and costs on every index step. No foreign key: a per-row check would slow bulk
-- inserts a lot; postings are removed with their memory by the store, and with their bank by the
-- trigger below (when a user or an organization is deleted).
CREATE TABLE memory_postings (
  bank_id     bigint NOT NULL,
  term        text COLLATE "C" NOT NULL,
  memory_seq  bigint NOT NULL,
  head_tf     integer NOT NULL,
  body_tf     integer NOT NULL,
  head_length integer NOT NULL,
  body_length integer NOT NULL,
  PRIMARY KEY (bank_id, term, memory_seq) INCLUDE (head_tf, body_tf, head_length, body_length)
);

CREATE FUNCTION memory_bank_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM memory_postings WHERE bank_id = OLD.id;
  RETURN OLD;
END
$$;
CREATE TRIGGER memory_bank_deleted AFTER DELETE ON memory_banks FOR EACH ROW EXECUTE FUNCTION memory_bank_deleted();
