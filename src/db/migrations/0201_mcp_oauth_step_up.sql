-- Scopes an MCP server asked for in a 403 insufficient_scope challenge that a refresh could not
-- obtain: the next authorization of the connection asks for them too (step-up authorization).
ALTER TABLE mcp_oauth_connection_state ADD COLUMN step_up_scopes jsonb NOT NULL DEFAULT '[]';
