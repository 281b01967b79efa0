-- What a connection's server demands of a client, as a check of it last saw (issue 21 item 5): an
-- unauthenticated request answered (none), refused with OAuth discovery behind it (oauth), or refused
-- without (apikey). A property of the URL, not of the configured authType, so it is kept with the URL
-- it was seen at and shown only while the connection still has that URL. Keyed tenant-first.
CREATE TABLE mcp_connection_auth_requirements (
  organization_id    text NOT NULL,
  connection_id      text NOT NULL,
  url                text NOT NULL,
  required_auth_type text NOT NULL CHECK (required_auth_type IN ('oauth', 'apikey', 'none')),
  observed_at        timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, connection_id),
  FOREIGN KEY (organization_id, connection_id) REFERENCES mcp_connections (organization_id, id) ON DELETE CASCADE
);
