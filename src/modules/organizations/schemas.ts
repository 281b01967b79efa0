import { z } from 'zod';
import { errorBodySchema, isoTimestamp, timestampSchema, typeIdSchema } from '../../http/schemas.ts';
import type { OrganizationRecord } from './index.ts';

export const organizationIdSchema = typeIdSchema('org');
export const organizationNameSchema = z.string().trim().min(1).max(200);
export const planSchema = z.enum(['free', 'team', 'enterprise']);

export const organizationSchema = z
  .object({ id: z.string(), name: z.string(), plan: planSchema, createdAt: timestampSchema })
  .meta({ id: 'Organization' });

export const toOrganization = (row: OrganizationRecord) => ({ id: row.id, name: row.name, plan: row.plan, createdAt: isoTimestamp(row.created_at) });

/** The path of every route of one organization. */
export const organizationParams = z.object({ organizationId: organizationIdSchema });
/** The 404 of a route of one organization that refuses non-members as requireMembership does. */
export const organizationNotFoundResponse = errorBodySchema.describe('organization_not_found: no such organization, or you are not a member');
