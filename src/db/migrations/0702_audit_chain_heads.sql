-- Each chain's newest link. An append locks its chain's row here (an upsert, so a new chain needs no
-- separate step) and reads the link to extend in the same statement, then moves it in the statement
-- that inserts the event: two round trips per event, where an advisory lock and a separate read of
-- the newest event took three. Retention leaves the row as it is: pruning removes a chain's oldest
-- events, and when it removes them all, the newest pruned one is both the checkpoint and the head.
CREATE TABLE audit_chain_heads (
  chain_id text PRIMARY KEY,
  seq bigint NOT NULL,
  hash text NOT NULL
);

INSERT INTO audit_chain_heads (chain_id, seq, hash)
SELECT DISTINCT ON (chain_id) chain_id, seq, hash
  FROM (SELECT chain_id, seq, hash FROM audit_events UNION ALL SELECT chain_id, seq, hash FROM audit_checkpoints) links
 ORDER BY chain_id, seq DESC;
