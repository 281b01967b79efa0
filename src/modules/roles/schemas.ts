// What the roles routes take and show.
import { z } from 'zod';
import { isoTimestampOrNull, timestampSchema } from '../../http/schemas.ts';
import { PERMISSION_KEYS } from '../../platform/permissions.ts';
import { customRoleIdSchema } from '../identity/index.ts';
import type { RoleView } from './service.ts';

export const permissionKeySchema = z
  .enum(PERMISSION_KEYS)
  .describe('A key of the permission catalog (`GET /v1/permissions`)');

export const roleIdParamSchema = z
  .union([z.enum(['owner', 'admin', 'member']), customRoleIdSchema])
  .describe("A built-in role's name, or a custom role's id");

export const roleSchema = z
  .object({
    id: z.string().describe("`owner`, `admin`, `member`, or a custom role's TypeID"),
    name: z.string(),
    description: z.string(),
    permissions: z.array(permissionKeySchema),
    builtIn: z.boolean().describe('A built-in role: listed, never changed or deleted'),
    memberCount: z.number().int().describe('Members whose own role this is (not counting teams)'),
    createdAt: timestampSchema.nullable(),
    updatedAt: timestampSchema.nullable(),
  })
  .meta({ id: 'Role' });

export const toRole = (role: RoleView) => ({
  ...role,
  createdAt: isoTimestampOrNull(role.createdAt),
  updatedAt: isoTimestampOrNull(role.updatedAt),
});

const roleName = z.string().trim().min(1).max(100);
const roleDescription = z.string().trim().max(500);
// Keys are checked by the service (400 unknown_permission naming each), so that a key of a later
// version of the catalog is refused with that code, not with a generic enum mismatch.
const keyList = z.array(z.string().max(100)).max(200);

export const createRoleBodySchema = z.object({
  name: roleName,
  description: roleDescription.optional(),
  permissions: keyList,
});
export const updateRoleBodySchema = z
  .object({ name: roleName.optional(), description: roleDescription.optional(), permissions: keyList.optional() })
  .refine((body) => Object.keys(body).length > 0, {
    message: 'Nothing to change: give name, description or permissions',
  });

const grantSchema = z
  .object({ type: z.enum(['role', 'team']), id: z.string(), name: z.string() })
  .describe("What grants the key: the member's role, or one of their teams (through the team's role)");

export const effectivePermissionsSchema = z
  .object({
    permissions: z.array(z.object({ key: permissionKeySchema, grantedBy: z.array(grantSchema) })),
  })
  .meta({ id: 'EffectivePermissions' });
