-- The webhook ingress writes one messenger_updates row per accepted update, and that insert is the
-- hot path (bench/webhook). Two costs per row go:
--
-- 1. The foreign keys to messenger_connections and organizations. Each inserted row ran two
--    referential checks, each locking the parent row FOR KEY SHARE; with several claim statements
--    in flight on one connection those locks become multixacts examined for every row. The claim
--    statement itself now takes that lock once per connection and statement (FOR KEY SHARE in its
--    `named` step, which is also where it checks the connection is active), so a connection deleted
--    at the same time either waits for the claim to commit or is seen as gone by it. Deleting a
--    connection (directly, or through its organization's cascade) deletes its updates by the
--    trigger below, as the ON DELETE CASCADE did.
-- 2. The (connection_id, status, update_id) index, written on every claim and every status change.
--    Listing by status reads the primary key backwards from the newest update, which finds the
--    common states (queued, delivered) at once; only the rare ones (retrying, dead) keep an index.

ALTER TABLE messenger_updates DROP CONSTRAINT messenger_updates_connection_id_fkey;
ALTER TABLE messenger_updates DROP CONSTRAINT messenger_updates_organization_id_fkey;
DROP INDEX messenger_updates_status_idx;
CREATE INDEX messenger_updates_rare_status_idx ON messenger_updates (connection_id, status, update_id)
  WHERE status IN ('retrying', 'dead');

CREATE FUNCTION messenger_connection_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM messenger_updates WHERE connection_id = OLD.id;
  RETURN NULL;
END;
$$;

CREATE TRIGGER messenger_connection_deleted
  AFTER DELETE ON messenger_connections
  FOR EACH ROW EXECUTE FUNCTION messenger_connection_deleted();
