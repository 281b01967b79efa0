-- The update as the platform sent it, kept with its claim rather than in the queue job.
--
-- The job carried the whole update as jsonb, which PostgreSQL parsed twice on the ingress's hot path
-- (json_to_recordset, then jsonb) for every claim: ~10-13 us of its CPU per update (bench/webhook).
-- Stored here as text, exactly the bytes received (decoded as UTF-8), it is not parsed at all, and the
-- job is the few ids the worker needs. The worker reads it when it delivers, and delivery clears it:
-- a message's content is kept until it is delivered, not for the queue's day of retention. A
-- dead-lettered update keeps it, for whoever looks into why it failed.
-- NULL also for updates claimed before this column existed; their jobs still carry the update.

ALTER TABLE messenger_updates ADD COLUMN body text;
