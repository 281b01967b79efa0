// The MCP connections module's error codes: connections, their access and credentials, plugins, the
// probe, and the OAuth flow (oauth/).
import { defineErrorCodes } from '../../http/error-catalog.ts';

export const mcpConnectionErrors = defineErrorCodes({
  connection_not_found: {
    status: 404,
    description: 'No such connection in the active organization, or the caller may not use it',
  },
  connection_conflict: {
    status: 409,
    description:
      'The connection changed since it was read (a stale `expectedUpdatedAt`) or while the write was checked',
  },
  marketplace_managed: {
    status: 409,
    description: 'A plugin manages the connection: its url, authType and credentialMode change through the plugin',
  },
  connection_required: { status: 409, description: 'An installed plugin requires the connection: uninstall it first' },
  plugin_not_found: { status: 404, description: 'No such plugin in the organization' },
  connection_validation_failed: {
    status: 502,
    description: 'The MCP server could not be validated; `diagnostic` says which step failed',
  },
  not_oauth_connection: { status: 409, description: 'The connection does not use OAuth' },
  client_credentials_grant: {
    status: 409,
    description: 'The connection obtains its token with the client credentials grant, without a browser',
  },
  oauth_setup_required: {
    status: 409,
    description: 'No way to obtain an OAuth client for the connection: configure `oauthClient`',
  },
  oauth_discovery_failed: {
    status: 502,
    description: "The MCP server's authorization server could not be discovered; `diagnostic` says why",
  },
  oauth_registration_failed: {
    status: 502,
    description: 'The authorization server refused to register this client; `diagnostic` says why',
  },
  oauth_token_exchange_failed: {
    status: 502,
    description: 'The authorization server did not exchange the code for a token; `diagnostic` says why',
  },
  invalid_state: {
    status: 400,
    description: "The OAuth callback's state is forged, replayed, or for another callback",
  },
  state_expired: { status: 400, description: 'The authorization expired; start again' },
  issuer_mismatch: {
    status: 400,
    description: "The callback's issuer is not the authorization server's (RFC 9207)",
  },
  authorization_denied: { status: 403, description: 'The user or the authorization server declined the authorization' },
  browser_mismatch: {
    status: 403,
    description: 'The authorization was started in another browser (the binding cookie is missing); nothing stored',
  },
  connection_identity_changed: {
    status: 409,
    description:
      'The connection (url, authentication or credential mode) changed during the authorization; nothing stored',
  },
  oauth_client_changed: {
    status: 409,
    description: 'The OAuth client of the connection changed during the authorization; start again',
  },
});
