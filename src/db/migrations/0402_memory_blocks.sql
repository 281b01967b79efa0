-- Postings in blocks: one row holds up to 100 postings of one (bank, term), packed, instead of one
-- row per posting. A search reads a term's postings as a few rows and scores them in the
-- application, where summing tens of thousands of postings takes a millisecond or two; in SQL the
-- same work (a row and an arithmetic expression per posting, then a hash aggregate) was most of a
-- search at 100,000 memories.
--
-- `data` is the postings in ascending memory_seq, 16 bytes each, big-endian (int8send/int2send):
-- memory_seq int8, head_tf int2, body_tf int2, head_length int2, body_length int2 (a memory has at
-- most 20,000 characters, so at most 10,000 words: int2 is enough). A block covers the memory_seq
-- range [first_seq, last_seq], and the blocks of a term do not overlap: new memories get larger
-- sequence numbers than the bank's existing ones, because every writer of a bank takes the bank
-- row's lock before inserting. The maxima and minima bound the best score a block can give (for
-- skipping blocks that cannot reach the top). 100 postings keep a row under the size PostgreSQL
-- would move out of line (TOAST), so a block is read with its index entry's heap page only.
CREATE TABLE memory_blocks (
  bank_id         bigint NOT NULL,
  term            text COLLATE "C" NOT NULL,
  first_seq       bigint NOT NULL,
  last_seq        bigint NOT NULL,
  postings        integer NOT NULL,
  max_head_tf     integer NOT NULL,
  max_body_tf     integer NOT NULL,
  min_head_length integer NOT NULL,
  min_body_length integer NOT NULL,
  data            bytea NOT NULL,
  PRIMARY KEY (bank_id, term, first_seq)
);

INSERT INTO memory_blocks (bank_id, term, first_seq, last_seq, postings, max_head_tf, max_body_tf, min_head_length, min_body_length, data)
SELECT bank_id, term, min(memory_seq), max(memory_seq), count(*), max(head_tf), max(body_tf), min(head_length), min(body_length),
       string_agg(int8send(memory_seq) || int2send(head_tf::int2) || int2send(body_tf::int2)
                  || int2send(head_length::int2) || int2send(body_length::int2), ''::bytea ORDER BY memory_seq)
  FROM (SELECT p.*, (row_number() OVER (PARTITION BY bank_id, term ORDER BY memory_seq) - 1) / 100 AS block
          FROM memory_postings p) p
 GROUP BY bank_id, term, block;

DROP TABLE memory_postings;

CREATE OR REPLACE FUNCTION memory_bank_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM memory_blocks WHERE bank_id = OLD.id;
  DELETE FROM memory_terms WHERE bank_id = OLD.id;
  RETURN OLD;
END
$$;
