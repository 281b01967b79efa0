import { z } from 'zod';
import { isoTimestamp, timestampSchema, typeIdSchema } from '../../http/schemas.ts';
import type { TeamRecord } from './contracts.ts';

export const teamIdSchema = typeIdSchema('team');

export const teamSchema = z
  .object({ id: z.string(), organizationId: z.string(), name: z.string(), createdAt: timestampSchema })
  .meta({ id: 'Team' });

/** A team as listTeams shows it: with the ids of its members. */
export const teamWithMemberIdsSchema = teamSchema.extend({ memberIds: z.array(z.string()) });

export const toTeam = (row: TeamRecord) => ({
  id: row.id,
  organizationId: row.organization_id,
  name: row.name,
  createdAt: isoTimestamp(row.created_at),
});
