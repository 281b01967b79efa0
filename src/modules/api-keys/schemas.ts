import { z } from 'zod';
import { isoTimestamp, timestampSchema, typeIdSchema } from '../../http/schemas.ts';
import { assignableRoleSchema } from '../identity/index.ts';
import type { ApiKeyRow } from './store.ts';

export const apiKeyIdSchema = typeIdSchema('key');

export const apiKeySchema = z
  .object({ id: z.string(), name: z.string(), role: assignableRoleSchema, createdAt: timestampSchema })
  .meta({ id: 'ApiKey' });

export const toApiKey = (row: ApiKeyRow) => ({
  id: row.id,
  name: row.name,
  role: row.role,
  createdAt: isoTimestamp(row.created_at),
});
