import { z } from 'zod';
import { isoTimestamp, timestampSchema } from '../../http/schemas.ts';
import type { OrganizationRecord } from './contracts.ts';

export const organizationNameSchema = z.string().trim().min(1).max(200);
export const planSchema = z.enum(['free', 'team', 'enterprise']);

export const organizationSchema = z
  .object({ id: z.string(), name: z.string(), plan: planSchema, createdAt: timestampSchema })
  .meta({ id: 'Organization' });

export const toOrganization = (row: OrganizationRecord) => ({
  id: row.id,
  name: row.name,
  plan: row.plan,
  createdAt: isoTimestamp(row.created_at),
});
