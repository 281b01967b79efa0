-- One chat's updates are delivered in update_id order, also when they arrive out of order.
--
-- The queue runs one chat's jobs one at a time in the order they were queued, which is arrival
-- order: update 1403 queued before 1401 would be delivered first. So a chat's job does not deliver
-- the update it was queued with but the chat's earliest pending one (an update already being
-- attempted first, so a retry stays with it); every job still delivers exactly one update. This
-- index finds that update among the chat's pending ones without reading the connection's history.
-- Rows leave it when delivered or dead.

CREATE INDEX messenger_updates_pending_chat_idx ON messenger_updates (connection_id, chat_id, update_id)
  WHERE status IN ('queued', 'retrying');
