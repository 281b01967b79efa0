-- How OAuth discovery found the authorization server of a connection's current identity:
-- 'protected-resource-metadata' (RFC 9728, MCP 2025-06-18 and later), 'configured-issuer' (a pinned
-- issuer, the server publishing no RFC 9728 metadata), 'legacy-metadata' (MCP 2025-03-26: RFC 8414
-- metadata at the MCP server's origin) or 'legacy-default-endpoints' (2025-03-26: /authorize, /token,
-- /register at the origin).
ALTER TABLE mcp_oauth_connection_state
  ADD COLUMN discovery_path text CHECK (discovery_path IN ('protected-resource-metadata', 'configured-issuer', 'legacy-metadata', 'legacy-default-endpoints'));
