import type { SealedColumns } from '../../platform/secrets.ts';

/** The messenger's sealed secrets: each connection's bot token and delivery secret. */
export const messengerSealedColumns: readonly SealedColumns[] = [
  {
    table: 'messenger_connections',
    key: ['organization_id', 'id'],
    columns: ['bot_token_sealed', 'delivery_secret_sealed'],
  },
];
