import { z } from 'zod';
import { isoTimestamp, timestampSchema, typeIdSchema } from '../../http/schemas.ts';
import type { ApiKeyRow, InvitationRow, MemberRow, OrganizationRow, TeamRow, UserRow } from './store.ts';

export const organizationIdSchema = typeIdSchema('org');
export const memberIdSchema = typeIdSchema('mem');
export const teamIdSchema = typeIdSchema('team');
export const apiKeyIdSchema = typeIdSchema('key');
export const invitationIdSchema = typeIdSchema('inv');

export const emailSchema = z.email().max(320);
export const passwordSchema = z.string().min(8).max(256);
export const personNameSchema = z.string().trim().min(1).max(200);
export const organizationNameSchema = z.string().trim().min(1).max(200);

/** The body of POST /v1/bootstrap, which `orgplane bootstrap` checks its flags with too. */
export const bootstrapBodySchema = z.object({ email: emailSchema, password: passwordSchema, name: personNameSchema, organizationName: organizationNameSchema });
export const roleSchema = z.enum(['owner', 'admin', 'member']);
export const assignableRoleSchema = z.enum(['admin', 'member']);
export const planSchema = z.enum(['free', 'team', 'enterprise']);

export const userSchema = z
  .object({ id: z.string(), email: z.string(), name: z.string(), image: z.string(), isInstanceAdmin: z.boolean(), createdAt: timestampSchema })
  .meta({ id: 'User' });
export const organizationSchema = z
  .object({ id: z.string(), name: z.string(), plan: planSchema, createdAt: timestampSchema })
  .meta({ id: 'Organization' });
export const memberSchema = z
  .object({
    id: z.string(),
    organizationId: z.string(),
    userId: z.string(),
    role: roleSchema,
    status: z.enum(['active', 'suspended']),
    name: z.string(),
    email: z.string(),
    image: z.string(),
    createdAt: timestampSchema,
  })
  .meta({ id: 'Member' });
export const teamSchema = z
  .object({ id: z.string(), organizationId: z.string(), name: z.string(), createdAt: timestampSchema })
  .meta({ id: 'Team' });
export const invitationSchema = z
  .object({ id: z.string(), organizationId: z.string(), email: z.string(), role: assignableRoleSchema, expiresAt: timestampSchema, createdAt: timestampSchema })
  .meta({ id: 'Invitation' });
export const apiKeySchema = z
  .object({ id: z.string(), name: z.string(), role: assignableRoleSchema, createdAt: timestampSchema })
  .meta({ id: 'ApiKey' });

export const toUser = (row: UserRow) => ({
  id: row.id,
  email: row.email,
  name: row.name,
  image: row.image,
  isInstanceAdmin: row.is_instance_admin,
  createdAt: isoTimestamp(row.created_at),
});
export const toOrganization = (row: OrganizationRow) => ({ id: row.id, name: row.name, plan: row.plan, createdAt: isoTimestamp(row.created_at) });
export const toMember = (row: MemberRow) => ({
  id: row.id,
  organizationId: row.organization_id,
  userId: row.user_id,
  role: row.role,
  status: row.status,
  name: row.name,
  email: row.email,
  image: row.image,
  createdAt: isoTimestamp(row.created_at),
});
export const toTeam = (row: TeamRow) => ({ id: row.id, organizationId: row.organization_id, name: row.name, createdAt: isoTimestamp(row.created_at) });
export const toInvitation = (row: InvitationRow) => ({
  id: row.id,
  organizationId: row.organization_id,
  email: row.email,
  role: row.role,
  expiresAt: isoTimestamp(row.expires_at),
  createdAt: isoTimestamp(row.created_at),
});
export const toApiKey = (row: ApiKeyRow) => ({ id: row.id, name: row.name, role: row.role, createdAt: isoTimestamp(row.created_at) });
