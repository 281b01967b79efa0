-- An organization's audit events are read by their chain (chain_id, the organization's id and the column
-- audit_events is distributed by), through the (chain_id, seq) key: the index by organization_id is no
-- longer read, and every event written paid for it.
DROP INDEX audit_events_organization_seq;
