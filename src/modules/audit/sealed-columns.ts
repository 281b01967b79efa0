import type { SealedColumns } from '../../platform/secrets.ts';

/** The audit module's sealed secrets: each stream's signing secret. */
export const auditSealedColumns: readonly SealedColumns[] = [
  { table: 'audit_streams', key: ['organization_id'], columns: ['signing_secret_sealed'] },
];
