import type { SealedColumns } from '../../platform/secrets.ts';

/** SSO's sealed secrets: the connection's client secret, and what sign-ins in progress keep (minutes). */
export const ssoSealedColumns: readonly SealedColumns[] = [
  { table: 'sso_connections', key: ['organization_id'], columns: ['client_secret_sealed'] },
  { table: 'sso_sign_in_requests', key: ['state_hash'], columns: ['code_verifier_sealed', 'authorization_url_sealed'] },
  { table: 'sso_saml_requests', key: ['relay_state_hash'], columns: ['authorization_url_sealed'] },
];
