import { z } from 'zod';
import { isoTimestamp, timestampSchema, typeIdSchema } from '../../http/schemas.ts';
import type { TeamRecord } from './contracts.ts';

export const teamIdSchema = typeIdSchema('team');

export const teamSchema = z
  .object({
    id: z.string(),
    organizationId: z.string(),
    name: z.string(),
    roleId: z
      .string()
      .nullable()
      .describe("The role the team gives its members besides their own (`admin`, `member` or a custom role's id)"),
    createdAt: timestampSchema,
  })
  .meta({ id: 'Team' });

/** A team as listTeams shows it: with the ids of its members. */
export const teamWithMemberIdsSchema = teamSchema.extend({ memberIds: z.array(z.string()) });

export const toTeam = (row: TeamRecord) => ({
  id: row.id,
  organizationId: row.organization_id,
  name: row.name,
  // A member's copy of their teams made before teams had roles has none.
  roleId: row.role_id ?? null,
  createdAt: isoTimestamp(row.created_at),
});
