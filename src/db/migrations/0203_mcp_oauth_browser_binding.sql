-- The browser that started an authorization (issue 21 item 6): authorize sets a random nonce in an
-- HttpOnly cookie and keeps its SHA-256 here; the callback is refused unless the browser that comes
-- back carries it, so an authorization URL completed by someone else stores nothing. Authorizations
-- in progress when this runs have no nonce to check and are dropped (they live ten minutes at most;
-- their people start again).
DELETE FROM mcp_oauth_pending_authorizations;
ALTER TABLE mcp_oauth_pending_authorizations ADD COLUMN browser_binding_hash text NOT NULL;
