-- organization_owners is a copy of each organization's owner (migration 1000), written in the
-- transaction that changes the owner's member row, which has the foreign keys to organizations and
-- users. Its own keys to them go: on Citus, a write to a reference table other than a plain INSERT
-- takes an exclusive lock, across the cluster, on the reference tables it references too. Creating an
-- organization inserts into organizations (a shared lock) and then writes its owner's copy, which asked
-- for the exclusive lock on organizations: two organizations created at once deadlocked (test/citus).
ALTER TABLE organization_owners
  DROP CONSTRAINT organization_owners_organization_id_fkey,
  DROP CONSTRAINT organization_owners_user_id_fkey;
