-- Instance administration finds people by the start of their e-mail or name, and organizations by the
-- start of their name, among many (text_pattern_ops: a LIKE 'prefix%' uses the index whatever the
-- database's collation); lists the instance administrators, a handful among every account; and counts
-- the people who authenticated lately, from their sessions.
CREATE INDEX users_email_prefix ON users (lower(email) text_pattern_ops);
CREATE INDEX users_name_prefix ON users (lower(name) text_pattern_ops);
CREATE INDEX users_instance_admins ON users (created_at, id) WHERE is_instance_admin;
CREATE INDEX organizations_name_prefix ON organizations (lower(name) text_pattern_ops);
CREATE INDEX sessions_authenticated_at ON sessions (authenticated_at);
