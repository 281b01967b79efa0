-- OAuth client credentials for a connection's shared identity (issue 21 item 1: the conformance
-- suite's client-credentials scenarios): the grant the pre-registered client uses, and for
-- private_key_jwt client authentication (RFC 7523) its private key (sealed like the client secret)
-- and the JWS algorithm it signs with. A non-null signing algorithm is what makes the client
-- private_key_jwt, so oauth_token_endpoint_auth_method (and its check) stays as it was: NULL then.
ALTER TABLE mcp_connections
  ADD COLUMN oauth_grant_type text NOT NULL DEFAULT 'authorization_code'
    CHECK (oauth_grant_type IN ('authorization_code', 'client_credentials'));
ALTER TABLE mcp_connections ADD COLUMN oauth_client_private_key_sealed text;
ALTER TABLE mcp_connections ADD COLUMN oauth_client_signing_alg text;
