// Schemas of members and of the people they are, and the path and 404 of every route of one
// organization, which several modules' routes show or take.
import { z } from 'zod';
import { httpErrors } from '../../http/error-codes.ts';
import { errorResponse, isoTimestamp, timestampSchema, typeIdSchema } from '../../http/schemas.ts';
import type { MemberRecord } from './contracts.ts';

export const memberIdSchema = typeIdSchema('mem');
export const organizationIdSchema = typeIdSchema('org');

/** The path of every route of one organization. */
export const organizationParams = z.object({ organizationId: organizationIdSchema });
/** The 404 of a route of one organization that refuses non-members as requireMembership does. */
export const organizationNotFoundResponse = errorResponse(
  [httpErrors.organization_not_found],
  'no such organization, or you are not a member',
);

export const emailSchema = z.email().max(320);
export const personNameSchema = z.string().trim().min(1).max(200);
/** A custom role's id (the roles module's); the built-in roles are named by their names. */
export const customRoleIdSchema = typeIdSchema('role');
export const roleSchema = z
  .union([z.enum(['owner', 'admin', 'member']), customRoleIdSchema])
  .describe("A built-in role (`owner`, `admin`, `member`) or a custom role's id");
/** A role one may be given: any but the owner's, which moves only by transfer. */
export const assignableRoleSchema = z
  .union([z.enum(['admin', 'member']), customRoleIdSchema])
  .describe("`admin`, `member`, or a custom role's id (`GET /v1/orgs/{organizationId}/roles`)");

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

export const toMember = (row: MemberRecord) => ({
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
