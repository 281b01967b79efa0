-- Document frequency per (bank, term), kept in the same transaction as the postings, so that a
-- search reads a term's frequency with one index probe instead of counting its postings (which,
-- for common words in a large bank, costs as much as scoring them). Writers of a bank already
-- serialize on the bank row, which they lock first, so these counters add no new lock order.
CREATE TABLE memory_terms (
  bank_id bigint NOT NULL,
  term    text COLLATE "C" NOT NULL,
  df      bigint NOT NULL,
  PRIMARY KEY (bank_id, term)
);

INSERT INTO memory_terms (bank_id, term, df)
SELECT bank_id, term, count(*) FROM memory_postings GROUP BY bank_id, term;

CREATE OR REPLACE FUNCTION memory_bank_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM memory_postings WHERE bank_id = OLD.id;
  DELETE FROM memory_terms WHERE bank_id = OLD.id;
  RETURN OLD;
END
$$;
