// What the instance-administration routes take and give.
import { z } from 'zod';
import {
  isoTimestamp,
  isoTimestampOrNull,
  paginationQuerySchema,
  timestampSchema,
  typeIdSchema,
} from '../../http/schemas.ts';
import { emailSchema } from '../identity/index.ts';
import type { AdminRow, OrganizationRow, PersonRow } from './contracts.ts';

const planSchema = z.enum(['free', 'team', 'enterprise']);

export const searchQuerySchema = paginationQuerySchema.extend({
  search: z
    .string()
    .trim()
    .min(1)
    .max(200)
    .optional()
    .describe('Matches what starts with it, case-insensitively (see the operation)'),
});

export const userParams = z.object({ userId: typeIdSchema('usr').describe("The person's id") });
export const addAdminBody = z.object({ email: emailSchema.describe("The e-mail of the person's account") });
export const updateOrganizationBody = z
  .object({ plan: planSchema.optional().describe('free, team or enterprise (enterprise turns on SSO)') })
  .strict();

export const personSchema = z
  .object({
    id: z.string(),
    email: z.string(),
    name: z.string(),
    isInstanceAdmin: z.boolean(),
    createdAt: timestampSchema,
    organizations: z.number().int().describe('How many organizations the person is a member of'),
    lastAuthenticatedAt: timestampSchema
      .nullable()
      .describe('When the person last signed in or re-authenticated, as their sessions record it'),
  })
  .meta({ id: 'AdminPerson' });

export const adminOrganizationSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    plan: planSchema,
    createdAt: timestampSchema,
    members: z.number().int().describe('Its active members'),
  })
  .meta({ id: 'AdminOrganization' });

export const administratorSchema = z
  .object({ userId: z.string(), email: z.string(), name: z.string(), createdAt: timestampSchema })
  .meta({ id: 'InstanceAdministrator' });

export const overviewSchema = z
  .object({
    people: z.number().int(),
    organizations: z.number().int(),
    activePeople: z
      .object({ d1: z.number().int(), d7: z.number().int(), d30: z.number().int() })
      .describe('People who signed in or re-authenticated in the last 1, 7 and 30 days (from their sessions)'),
    workersRunning: z.number().int().describe('Always 0: orgplane runs no workers for organizations yet'),
    llmSpendUsd30d: z.number().describe('Always 0: orgplane does not meter LLM use yet'),
    attention: z
      .array(
        z.object({
          code: z.enum(['single_administrator', 'audit_streams_dead']),
          message: z.string(),
          count: z.number().int(),
        }),
      )
      .describe('What needs an administrator: one administrator only; audit-log streams stopped by failures'),
    generatedAt: timestampSchema,
  })
  .meta({ id: 'InstanceOverview' });

export const toPerson = (row: PersonRow) => ({
  id: row.id,
  email: row.email,
  name: row.name,
  isInstanceAdmin: row.is_instance_admin,
  createdAt: isoTimestamp(row.created_at),
  organizations: row.organizations,
  lastAuthenticatedAt: isoTimestampOrNull(row.last_authenticated_at),
});

export const toAdminOrganization = (row: OrganizationRow) => ({
  id: row.id,
  name: row.name,
  plan: row.plan,
  createdAt: isoTimestamp(row.created_at),
  members: row.members,
});

export const toAdministrator = (row: AdminRow) => ({
  userId: row.id,
  email: row.email,
  name: row.name,
  createdAt: isoTimestamp(row.created_at),
});
