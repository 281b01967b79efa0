import type { SealedColumns } from '../../platform/secrets.ts';

/** MCP connections' sealed secrets: OAuth client secrets and keys, credentials, PKCE verifiers in progress. */
export const mcpSealedColumns: readonly SealedColumns[] = [
  {
    table: 'mcp_connections',
    key: ['organization_id', 'id'],
    columns: ['oauth_client_secret_sealed', 'oauth_client_private_key_sealed'],
  },
  { table: 'mcp_connection_credentials', key: ['organization_id', 'id'], columns: ['secret_sealed'] },
  { table: 'mcp_oauth_pending_authorizations', key: ['organization_id', 'id'], columns: ['code_verifier_sealed'] },
  {
    table: 'mcp_oauth_registered_clients',
    key: ['organization_id', 'connection_id', 'issuer'],
    columns: ['client_secret_sealed'],
  },
];
