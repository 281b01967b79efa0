// Teams: what other modules may use of them, and how the module joins an app.
import type { FastifyInstance } from 'fastify';
import { teamRoutes } from './routes.ts';
import { createTeamService, type TeamServiceDeps } from './service.ts';
import { requireDependencies } from '../../platform/dependencies.ts';

export type { TeamDirectory, TeamRecord } from './contracts.ts';
export { createTeamDirectory } from './service.ts';
export { teamSchema, teamWithMemberIdsSchema, toTeam } from './schemas.ts';

/** Registers the team routes (create, list, add and remove members). */
export async function registerTeams(app: FastifyInstance, deps: TeamServiceDeps): Promise<void> {
  requireDependencies('teams', deps, ['db', 'membership', 'roleGrants']);
  await app.register(teamRoutes, { teams: createTeamService(deps) });
}
