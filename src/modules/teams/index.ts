// Teams: what other modules may use of them, and how the module joins an app.
import type { FastifyInstance } from 'fastify';
import type { Queryable } from '../../db/database.ts';
import { teamRoutes } from './routes.ts';
import { createTeamService, type TeamServiceDeps } from './service.ts';
import { requireDependencies } from '../../platform/dependencies.ts';

export interface TeamRecord {
  id: string;
  organization_id: string;
  name: string;
  created_at: Date;
}

export interface TeamDirectory {
  /** Of `ids`, the ones that are teams of the organization. */
  listTeamIds(organizationId: string, ids: string[], tx?: Queryable): Promise<string[]>;
  /** Adds the member to those of `teamIds` that are still teams of the organization (in the caller's transaction). */
  addMemberToTeams(tx: Queryable, organizationId: string, memberId: string, teamIds: string[]): Promise<void>;
}

export { createTeamDirectory } from './service.ts';
export { teamIdSchema, teamSchema, teamWithMemberIdsSchema, toTeam } from './schemas.ts';

/** Registers the team routes (create, list, add and remove members). */
export async function registerTeams(app: FastifyInstance, deps: TeamServiceDeps): Promise<void> {
  requireDependencies('teams', deps, ['db', 'membership']);
  await app.register(teamRoutes, { teams: createTeamService(deps) });
}
