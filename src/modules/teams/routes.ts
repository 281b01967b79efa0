import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { authenticate, callerOf, freshAuthenticationCheck, writeContextOf } from '../../http/auth.ts';
import {
  afterFromCursor,
  commonErrorResponses,
  pageOf,
  paginationQuerySchema,
  errorResponse,
} from '../../http/schemas.ts';
import {
  assignableRoleSchema,
  identityErrors,
  memberIdSchema,
  organizationNotFoundResponse,
  organizationParams,
} from '../identity/index.ts';
import { roleErrors } from '../roles/index.ts';
import { teamIdSchema, teamSchema, teamWithMemberIdsSchema, toTeam } from './schemas.ts';
import type { TeamService } from './service.ts';
import { httpErrors } from '../../http/error-codes.ts';
import { teamErrors } from './error-codes.ts';

const noContent = z.null().describe('No content');

/** Teams of an organization and their members. */
export const teamRoutes: FastifyPluginAsyncZod<{ teams: TeamService }> = async (app, { teams }) => {
  app.post(
    '/v1/orgs/:organizationId/teams',
    {
      onRequest: authenticate({ requires: 'teams.manage', judgedBy: 'service' }),
      schema: {
        tags: ['Teams'],
        operationId: 'createTeam',
        summary: 'Create a team (owners and admins)',
        params: organizationParams,
        body: z.object({ name: z.string().trim().min(1).max(200) }),
        response: {
          201: z.object({ team: teamSchema }),
          ...commonErrorResponses,
          404: organizationNotFoundResponse,
          409: errorResponse([teamErrors.team_exists]),
        },
      },
    },
    async (request, reply) => {
      const team = await teams.createTeam(writeContextOf(request), request.params.organizationId, request.body.name);
      return reply.status(201).send({ team: toTeam(team) });
    },
  );

  app.get(
    '/v1/orgs/:organizationId/teams',
    {
      onRequest: authenticate({ requires: 'member', judgedBy: 'service', allowApiKey: true }),
      schema: {
        tags: ['Teams'],
        operationId: 'listTeams',
        summary: "List the organization's teams with their member ids",
        description: 'Any member, with a session or an API key of this organization (`x-api-key`).',
        params: organizationParams,
        querystring: paginationQuerySchema,
        response: {
          200: z.object({ teams: z.array(teamWithMemberIdsSchema), nextCursor: z.string().nullable() }),
          ...commonErrorResponses,
          404: organizationNotFoundResponse,
        },
      },
    },
    async (request) => {
      const { limit, cursor } = request.query;
      const rows = await teams.listTeams(callerOf(request), request.params.organizationId, {
        limit: limit + 1,
        after: afterFromCursor(cursor),
      });
      const page = pageOf(rows, limit);
      return {
        teams: page.items.map((row) => ({ ...toTeam(row), memberIds: row.member_ids })),
        nextCursor: page.nextCursor,
      };
    },
  );

  const teamParams = organizationParams.extend({ teamId: teamIdSchema });
  app.post(
    '/v1/orgs/:organizationId/teams/:teamId/members',
    {
      onRequest: authenticate({
        requires: 'teams.manage_members',
        judgedBy: 'service',
        freshAuthentication: 'by-route',
      }),
      schema: {
        tags: ['Teams'],
        operationId: 'addTeamMember',
        summary: 'Add a member to a team (owners and admins)',
        params: teamParams,
        body: z.object({ memberId: memberIdSchema }),
        response: {
          204: noContent,
          ...commonErrorResponses,
          404: errorResponse([
            httpErrors.organization_not_found,
            teamErrors.team_not_found,
            identityErrors.member_not_found,
          ]),
        },
      },
    },
    async (request, reply) => {
      await teams.addTeamMember(
        writeContextOf(request),
        request.params.organizationId,
        request.params.teamId,
        request.body.memberId,
        freshAuthenticationCheck(request),
      );
      return reply.status(204).send(null);
    },
  );

  app.delete(
    '/v1/orgs/:organizationId/teams/:teamId/members/:memberId',
    {
      onRequest: authenticate({
        requires: 'teams.manage_members',
        judgedBy: 'service',
        freshAuthentication: 'by-route',
      }),
      schema: {
        tags: ['Teams'],
        operationId: 'removeTeamMember',
        summary: 'Remove a member from a team (owners and admins)',
        params: teamParams.extend({ memberId: memberIdSchema }),
        response: {
          204: noContent,
          ...commonErrorResponses,
          404: errorResponse([
            httpErrors.organization_not_found,
            teamErrors.team_not_found,
            identityErrors.member_not_found,
          ]),
        },
      },
    },
    async (request, reply) => {
      await teams.removeTeamMember(
        writeContextOf(request),
        request.params.organizationId,
        request.params.teamId,
        request.params.memberId,
        freshAuthenticationCheck(request),
      );
      return reply.status(204).send(null);
    },
  );

  app.patch(
    '/v1/orgs/:organizationId/teams/:teamId',
    {
      onRequest: authenticate({ requires: 'teams.manage', judgedBy: 'service', freshAuthentication: 'by-route' }),
      schema: {
        tags: ['Teams'],
        operationId: 'updateTeam',
        summary: 'Rename a team, or set the role it gives its members',
        description:
          "`roleId` (a role whose keys the caller holds, or null for none) also needs `roles.manage` and is privileged: the team's members hold the role's keys besides their own from their next request.",
        params: teamParams,
        body: z
          .object({
            name: z.string().trim().min(1).max(100).optional(),
            roleId: assignableRoleSchema.nullable().optional(),
          })
          .refine((body) => body.name !== undefined || body.roleId !== undefined, {
            message: 'Nothing to change: give name or roleId',
          }),
        response: {
          200: z.object({ team: teamSchema }),
          ...commonErrorResponses,
          403: errorResponse([httpErrors.forbidden, roleErrors.permission_not_held]),
          404: errorResponse([httpErrors.organization_not_found, teamErrors.team_not_found, roleErrors.role_not_found]),
          409: errorResponse([teamErrors.team_exists]),
        },
      },
    },
    async (request) => ({
      team: toTeam(
        await teams.updateTeam(
          writeContextOf(request),
          request.params.organizationId,
          request.params.teamId,
          request.body,
          freshAuthenticationCheck(request),
        ),
      ),
    }),
  );

  app.delete(
    '/v1/orgs/:organizationId/teams/:teamId',
    {
      onRequest: authenticate({ requires: 'teams.manage', judgedBy: 'service' }),
      schema: {
        tags: ['Teams'],
        operationId: 'deleteTeam',
        summary: 'Delete a team: its members lose its role and the MCP connections it gave them',
        params: teamParams,
        response: {
          204: noContent,
          ...commonErrorResponses,
          404: errorResponse([httpErrors.organization_not_found, teamErrors.team_not_found]),
        },
      },
    },
    async (request, reply) => {
      await teams.deleteTeam(writeContextOf(request), request.params.organizationId, request.params.teamId);
      return reply.status(204).send(null);
    },
  );
};
