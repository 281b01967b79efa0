-- Tenant-first keys (issue 25): the schema as Citus can distribute it by tenant, the classes of
-- src/db/distribution.ts. One organization's tables are keyed (organization_id, ...) and reference each
-- other by composite keys that pair organization_id on both sides; a person's own tables (sessions,
-- memory) are keyed (user_id, ...); the audit chain tables by chain_id (an organization's id, or
-- 'instance'). test/db/distribution-catalog.test.ts checks the result.
--
-- What Citus refuses and this replaces:
-- - unique keys on a secret's hash alone (sessions, invitations, API keys, install links, SCIM tokens):
--   a hash is 256 random bits, so their uniqueness was never a rule the database had to keep; a plain
--   index finds the row;
-- - the triggers that deleted a memory bank's postings and a messenger connection's updates: the
--   postings now reference their bank (ON DELETE CASCADE, co-located by user), and the messenger store
--   deletes a connection's updates in the statement that deletes the connection;
-- - identity columns (memory_banks.id, memories.seq): sequence defaults, with the same values;
-- - ON DELETE SET NULL of "the member who created it" (install links, messenger connections) and of
--   scim_users.member_id: Citus refuses SET NULL on a foreign key that includes the distribution
--   column, in either spelling. Nothing reads these columns to find a member (SCIM finds the member by
--   person, install links and connections only record who made them), so they become plain records
--   of the member at the time, as audit events keep an actor's id.

-- Foreign keys that point at keys about to change; they come back composite below.
ALTER TABLE team_members DROP CONSTRAINT team_members_member_id_fkey;
ALTER TABLE team_members DROP CONSTRAINT team_members_team_id_fkey;
ALTER TABLE mcp_connection_members DROP CONSTRAINT mcp_connection_members_member_id_fkey;
ALTER TABLE mcp_connection_teams DROP CONSTRAINT mcp_connection_teams_team_id_fkey;
ALTER TABLE mcp_connection_credentials DROP CONSTRAINT mcp_connection_credentials_member_id_fkey;
ALTER TABLE mcp_oauth_pending_authorizations DROP CONSTRAINT mcp_oauth_pending_authorizations_member_id_fkey;
ALTER TABLE install_links DROP CONSTRAINT install_links_created_by_member_id_fkey;
ALTER TABLE messenger_connections DROP CONSTRAINT messenger_connections_created_by_member_id_fkey;
ALTER TABLE scim_users DROP CONSTRAINT scim_users_member_id_fkey;
ALTER TABLE scim_group_members DROP CONSTRAINT scim_group_members_group_id_fkey;
ALTER TABLE scim_group_members DROP CONSTRAINT scim_group_members_scim_user_id_fkey;
ALTER TABLE memories DROP CONSTRAINT memories_bank_id_fkey;
-- These reference the (organization_id, id) unique keys that the primary keys replace.
ALTER TABLE mcp_connections DROP CONSTRAINT mcp_connections_organization_id_id_key CASCADE;
ALTER TABLE plugins DROP CONSTRAINT plugins_organization_id_id_key CASCADE;
DROP INDEX mcp_connections_org_idx;

-- Primary keys, tenant first.
ALTER TABLE members DROP CONSTRAINT members_pkey, ADD PRIMARY KEY (organization_id, id);
ALTER TABLE teams DROP CONSTRAINT teams_pkey, ADD PRIMARY KEY (organization_id, id);
ALTER TABLE team_members DROP CONSTRAINT team_members_pkey, ADD PRIMARY KEY (organization_id, team_id, member_id);
ALTER TABLE invitations DROP CONSTRAINT invitations_pkey, ADD PRIMARY KEY (organization_id, id);
ALTER TABLE api_keys DROP CONSTRAINT api_keys_pkey, ADD PRIMARY KEY (organization_id, id);
ALTER TABLE install_links DROP CONSTRAINT install_links_pkey, ADD PRIMARY KEY (organization_id, id);
ALTER TABLE mcp_connections DROP CONSTRAINT mcp_connections_pkey, ADD PRIMARY KEY (organization_id, id);
ALTER TABLE mcp_connection_members DROP CONSTRAINT mcp_connection_members_pkey, ADD PRIMARY KEY (organization_id, connection_id, member_id);
ALTER TABLE mcp_connection_teams DROP CONSTRAINT mcp_connection_teams_pkey, ADD PRIMARY KEY (organization_id, connection_id, team_id);
ALTER TABLE mcp_connection_credentials DROP CONSTRAINT mcp_connection_credentials_pkey, ADD PRIMARY KEY (organization_id, id);
ALTER TABLE mcp_connection_catalogs DROP CONSTRAINT mcp_connection_catalogs_pkey, ADD PRIMARY KEY (organization_id, connection_id);
ALTER TABLE mcp_connection_tool_policies DROP CONSTRAINT mcp_connection_tool_policies_pkey, ADD PRIMARY KEY (organization_id, connection_id);
ALTER TABLE mcp_oauth_pending_authorizations DROP CONSTRAINT mcp_oauth_pending_authorizations_pkey, ADD PRIMARY KEY (organization_id, id);
ALTER TABLE plugins DROP CONSTRAINT plugins_pkey, ADD PRIMARY KEY (organization_id, id);
ALTER TABLE plugin_connection_links DROP CONSTRAINT plugin_connection_links_pkey, ADD PRIMARY KEY (organization_id, plugin_id, connection_id, relation);
ALTER TABLE sso_identities DROP CONSTRAINT sso_identities_pkey, ADD PRIMARY KEY (organization_id, connection_id, subject);
ALTER TABLE sso_saml_assertions DROP CONSTRAINT sso_saml_assertions_pkey, ADD PRIMARY KEY (organization_id, connection_id, assertion_id);
ALTER TABLE scim_connectors DROP CONSTRAINT scim_connectors_pkey, ADD PRIMARY KEY (organization_id, id);
ALTER TABLE scim_users DROP CONSTRAINT scim_users_pkey, ADD PRIMARY KEY (organization_id, id);
ALTER TABLE scim_groups DROP CONSTRAINT scim_groups_pkey, ADD PRIMARY KEY (organization_id, id);
ALTER TABLE scim_group_members DROP CONSTRAINT scim_group_members_pkey, ADD PRIMARY KEY (organization_id, group_id, scim_user_id);
ALTER TABLE messenger_connections DROP CONSTRAINT messenger_connections_pkey, ADD PRIMARY KEY (organization_id, id);
ALTER TABLE messenger_updates DROP CONSTRAINT messenger_updates_pkey, ADD PRIMARY KEY (organization_id, connection_id, update_id);
ALTER TABLE audit_events DROP CONSTRAINT audit_events_pkey, ADD PRIMARY KEY (chain_id, id);
ALTER TABLE sessions DROP CONSTRAINT sessions_pkey, ADD PRIMARY KEY (user_id, id);

-- Unique keys tenant first; a secret's hash keeps a plain index (see above).
DROP INDEX mcp_connection_credentials_shared_key;
DROP INDEX mcp_connection_credentials_member_key;
CREATE UNIQUE INDEX mcp_connection_credentials_shared_key ON mcp_connection_credentials (organization_id, connection_id) WHERE member_id IS NULL;
CREATE UNIQUE INDEX mcp_connection_credentials_member_key ON mcp_connection_credentials (organization_id, connection_id, member_id) WHERE member_id IS NOT NULL;
ALTER TABLE sessions DROP CONSTRAINT sessions_token_hash_key;
CREATE INDEX sessions_token_hash_idx ON sessions (token_hash);
ALTER TABLE invitations DROP CONSTRAINT invitations_token_hash_key;
CREATE INDEX invitations_token_hash_idx ON invitations (token_hash);
ALTER TABLE api_keys DROP CONSTRAINT api_keys_key_hash_key;
CREATE INDEX api_keys_key_hash_idx ON api_keys (key_hash);
ALTER TABLE install_links DROP CONSTRAINT install_links_token_hash_key;
CREATE INDEX install_links_token_hash_idx ON install_links (token_hash);
ALTER TABLE scim_connectors DROP CONSTRAINT scim_connectors_token_hash_key;
CREATE INDEX scim_connectors_token_hash_idx ON scim_connectors (token_hash);
DROP INDEX team_members_member_idx;
CREATE INDEX team_members_member_idx ON team_members (organization_id, member_id);
DROP INDEX scim_group_members_user_idx;
CREATE INDEX scim_group_members_user_idx ON scim_group_members (organization_id, scim_user_id);

-- Composite foreign keys between one organization's tables.
ALTER TABLE team_members
  ADD FOREIGN KEY (organization_id, team_id) REFERENCES teams (organization_id, id) ON DELETE CASCADE,
  ADD FOREIGN KEY (organization_id, member_id) REFERENCES members (organization_id, id) ON DELETE CASCADE;
ALTER TABLE mcp_connection_members
  ADD FOREIGN KEY (organization_id, connection_id) REFERENCES mcp_connections (organization_id, id) ON DELETE CASCADE,
  ADD FOREIGN KEY (organization_id, member_id) REFERENCES members (organization_id, id) ON DELETE CASCADE;
ALTER TABLE mcp_connection_teams
  ADD FOREIGN KEY (organization_id, connection_id) REFERENCES mcp_connections (organization_id, id) ON DELETE CASCADE,
  ADD FOREIGN KEY (organization_id, team_id) REFERENCES teams (organization_id, id) ON DELETE CASCADE;
ALTER TABLE mcp_connection_credentials
  ADD FOREIGN KEY (organization_id, connection_id) REFERENCES mcp_connections (organization_id, id) ON DELETE CASCADE,
  ADD FOREIGN KEY (organization_id, member_id) REFERENCES members (organization_id, id) ON DELETE CASCADE;
ALTER TABLE mcp_connection_catalogs
  ADD FOREIGN KEY (organization_id, connection_id) REFERENCES mcp_connections (organization_id, id) ON DELETE CASCADE;
ALTER TABLE mcp_connection_tool_policies
  ADD FOREIGN KEY (organization_id, connection_id) REFERENCES mcp_connections (organization_id, id) ON DELETE CASCADE;
ALTER TABLE mcp_connection_auth_requirements
  ADD FOREIGN KEY (organization_id, connection_id) REFERENCES mcp_connections (organization_id, id) ON DELETE CASCADE;
ALTER TABLE mcp_oauth_pending_authorizations
  ADD FOREIGN KEY (organization_id, connection_id) REFERENCES mcp_connections (organization_id, id) ON DELETE CASCADE,
  ADD FOREIGN KEY (organization_id, member_id) REFERENCES members (organization_id, id) ON DELETE CASCADE;
ALTER TABLE mcp_oauth_registered_clients
  ADD FOREIGN KEY (organization_id, connection_id) REFERENCES mcp_connections (organization_id, id) ON DELETE CASCADE;
ALTER TABLE mcp_oauth_connection_state
  ADD FOREIGN KEY (organization_id, connection_id) REFERENCES mcp_connections (organization_id, id) ON DELETE CASCADE;
ALTER TABLE plugin_connection_links
  ADD FOREIGN KEY (organization_id, plugin_id) REFERENCES plugins (organization_id, id) ON DELETE CASCADE,
  ADD FOREIGN KEY (organization_id, connection_id) REFERENCES mcp_connections (organization_id, id) ON DELETE CASCADE;
ALTER TABLE scim_group_members
  ADD FOREIGN KEY (organization_id, group_id) REFERENCES scim_groups (organization_id, id) ON DELETE CASCADE,
  ADD FOREIGN KEY (organization_id, scim_user_id) REFERENCES scim_users (organization_id, id) ON DELETE CASCADE;

-- Messenger: a connection's updates go with it in the store's delete, not by trigger.
DROP TRIGGER messenger_connection_deleted ON messenger_connections;
DROP FUNCTION messenger_connection_deleted();

-- Memory, co-located by user. The identity columns become sequences that go on from the same values.
ALTER TABLE memory_banks ALTER COLUMN id DROP IDENTITY IF EXISTS;
CREATE SEQUENCE memory_banks_id_seq AS bigint OWNED BY memory_banks.id;
SELECT setval('memory_banks_id_seq', coalesce((SELECT max(id) FROM memory_banks), 0) + 1, false);
ALTER TABLE memory_banks ALTER COLUMN id SET DEFAULT nextval('memory_banks_id_seq');
ALTER TABLE memories ALTER COLUMN seq DROP IDENTITY IF EXISTS;
CREATE SEQUENCE memories_seq_seq AS bigint OWNED BY memories.seq;
SELECT setval('memories_seq_seq', coalesce((SELECT max(seq) FROM memories), 0) + 1, false);
ALTER TABLE memories ALTER COLUMN seq SET DEFAULT nextval('memories_seq_seq');

ALTER TABLE memory_banks DROP CONSTRAINT memory_banks_pkey, ADD PRIMARY KEY (user_id, id);
ALTER TABLE memories DROP CONSTRAINT memories_pkey, ADD PRIMARY KEY (user_id, id);
ALTER TABLE memories DROP CONSTRAINT memories_seq_key, ADD UNIQUE (user_id, seq);
ALTER TABLE memories ADD FOREIGN KEY (user_id, bank_id) REFERENCES memory_banks (user_id, id) ON DELETE CASCADE;
DROP INDEX memories_bank_created_idx;
CREATE INDEX memories_bank_created_idx ON memories (user_id, bank_id, created_at DESC, id DESC);

-- The postings and term counts carry their bank's user, and go with the bank by the foreign key
-- (the trigger did it before). Rows of a bank that no longer exists were the trigger's to remove.
DROP TRIGGER memory_bank_deleted ON memory_banks;
DROP FUNCTION memory_bank_deleted();
ALTER TABLE memory_terms ADD COLUMN user_id text;
UPDATE memory_terms t SET user_id = b.user_id FROM memory_banks b WHERE b.id = t.bank_id;
DELETE FROM memory_terms WHERE user_id IS NULL;
ALTER TABLE memory_terms ALTER COLUMN user_id SET NOT NULL;
ALTER TABLE memory_terms DROP CONSTRAINT memory_terms_pkey, ADD PRIMARY KEY (user_id, bank_id, term);
ALTER TABLE memory_terms ADD FOREIGN KEY (user_id, bank_id) REFERENCES memory_banks (user_id, id) ON DELETE CASCADE;
ALTER TABLE memory_blocks ADD COLUMN user_id text;
UPDATE memory_blocks k SET user_id = b.user_id FROM memory_banks b WHERE b.id = k.bank_id;
DELETE FROM memory_blocks WHERE user_id IS NULL;
ALTER TABLE memory_blocks ALTER COLUMN user_id SET NOT NULL;
ALTER TABLE memory_blocks DROP CONSTRAINT memory_blocks_pkey, ADD PRIMARY KEY (user_id, bank_id, term, first_seq);
ALTER TABLE memory_blocks ADD FOREIGN KEY (user_id, bank_id) REFERENCES memory_banks (user_id, id) ON DELETE CASCADE;
