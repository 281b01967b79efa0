-- The claim row is the delivery queue's entry: one durable write per accepted update.
--
-- Until now every claim also inserted a pg-boss job in the same statement, which cost PostgreSQL
-- more than the claim itself (bench/webhook). Workers now take due claims straight from this table
-- (FOR UPDATE SKIP LOCKED), lease them for MESSENGER_DELIVERY_EXPIRE_SECONDS, and settle them here:
--
-- order_key   which updates are delivered one at a time, in update_id order (the connection's
--             'chat:<id>', 'user:<id>' or 'none'); NULL only for rows that are no longer pending.
-- run_after   when the update may be attempted (now, or after a retry's backoff).
-- leased_until while a worker attempts it: after this a lost attempt (worker died) is taken again.
--
-- attempts counts the attempts started, and is the fence of an attempt's result: a worker settles
-- only the attempt it started. Jobs queued in pg-boss by earlier versions are still worked there.

ALTER TABLE messenger_updates ADD COLUMN order_key text;
ALTER TABLE messenger_updates ADD COLUMN run_after timestamptz NOT NULL DEFAULT now();
ALTER TABLE messenger_updates ADD COLUMN leased_until timestamptz;

UPDATE messenger_updates SET order_key = CASE WHEN chat_id IS NOT NULL THEN 'chat:' || chat_id ELSE 'none' END
 WHERE status IN ('queued', 'retrying');

-- Pending updates by their ordering key, in update_id order: what a worker looks for (a key's head)
-- and what tells it a key is busy. It replaces 0503's index by chat, so a claim still writes two
-- index entries (this one and the primary key).
DROP INDEX messenger_updates_pending_chat_idx;
CREATE INDEX messenger_updates_pending_idx ON messenger_updates (connection_id, order_key, update_id)
  WHERE status IN ('queued', 'retrying');

-- The updates being attempted right now (a handful): what makes a key busy. A claim is not in it.
CREATE INDEX messenger_updates_leased_idx ON messenger_updates (connection_id, order_key)
  WHERE leased_until IS NOT NULL AND status IN ('queued', 'retrying');
