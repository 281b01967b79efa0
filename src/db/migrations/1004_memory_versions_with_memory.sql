-- A memory's earlier versions go with it: deleted with the memory, and by cascade with its bank when
-- its user or organization is deleted (migration 0403 kept them without a key, so an organization's
-- deletion left its members' earlier texts behind). After 0800, where (user_id, id) is memories' key;
-- the key includes user_id, the column both tables are distributed by on Citus (co-located).
-- Versions whose memory is already gone (deleted with its organization before this key) go first.
DELETE FROM memory_versions v
 WHERE NOT EXISTS (SELECT 1 FROM memories m WHERE m.user_id = v.user_id AND m.id = v.memory_id);
ALTER TABLE memory_versions
  ADD FOREIGN KEY (user_id, memory_id) REFERENCES memories (user_id, id) ON DELETE CASCADE;
