import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  authenticate,
  bearerToken,
  callerOf,
  freshAuthenticationCheck,
  requireFreshAuthentication,
  signedInAccess,
  writeContextOf,
} from '../../http/auth.ts';
import { forbidden } from '../../http/errors.ts';
import { commonErrorResponses, errorResponse } from '../../http/schemas.ts';
import {
  memberSchema,
  organizationIdSchema,
  organizationNotFoundResponse,
  organizationParams,
  toMember,
} from '../identity/index.ts';
import { teamSchema, toTeam } from '../teams/index.ts';
import { organizationNameSchema, organizationSchema, planSchema, toOrganization } from './schemas.ts';
import type { OrganizationService } from './service.ts';
import { organizationErrors } from './error-codes.ts';
import { httpErrors } from '../../http/error-codes.ts';

/** Creating an organization, the session's active one, and plans. */
export const organizationRoutes: FastifyPluginAsyncZod<{ organizations: OrganizationService }> = async (
  app,
  { organizations },
) => {
  app.post(
    '/v1/orgs',
    {
      onRequest: authenticate({ requires: 'signed-in' }),
      schema: {
        tags: ['Organizations'],
        operationId: 'createOrganization',
        summary: 'Create an organization; the caller becomes its owner and it becomes the active one',
        body: z.object({ name: organizationNameSchema }),
        response: { 201: z.object({ organization: organizationSchema }), ...commonErrorResponses },
      },
    },
    async (request, reply) => {
      const organization = await organizations.createOrganization(writeContextOf(request), request.body.name);
      return reply.status(201).send({ organization: toOrganization(organization) });
    },
  );

  app.patch(
    '/v1/orgs/:organizationId',
    {
      onRequest: authenticate({
        requires: 'organization.update',
        judgedBy: 'service',
        freshAuthentication: 'by-route',
      }),
      schema: {
        tags: ['Organizations'],
        operationId: 'renameOrganization',
        summary: 'Rename an organization (owners and admins)',
        description:
          'Needs a session of an owner or admin of the organization (403 `forbidden` for a member; 404 `organization_not_found` for ' +
          'anyone else, as for an organization that does not exist), and is privileged (below). Writes `organization.renamed` ' +
          'with the old and new names; renaming to the same name changes nothing and writes no event.',
        params: organizationParams,
        body: z.object({ name: organizationNameSchema }),
        response: {
          200: z.object({ organization: organizationSchema }),
          ...commonErrorResponses,
          404: organizationNotFoundResponse,
        },
      },
    },
    async (request) => {
      const organization = await organizations.renameOrganization(
        writeContextOf(request),
        request.params.organizationId,
        request.body.name,
        freshAuthenticationCheck(request),
      );
      return { organization: toOrganization(organization) };
    },
  );

  app.delete(
    '/v1/orgs/:organizationId',
    {
      onRequest: authenticate({ requires: 'owner', judgedBy: 'service', freshAuthentication: 'by-route' }),
      schema: {
        tags: ['Organizations'],
        operationId: 'deleteOrganization',
        summary: 'Delete an organization and everything it holds (its owner, typing its name)',
        description:
          'Needs a session of the owner (403 `forbidden` for an admin or member; 404 `organization_not_found` for anyone ' +
          'else, as for an organization that does not exist), and is privileged (below). `confirm` must be the ' +
          "organization's current name (surrounding spaces aside), else 400 `confirmation_mismatch` and nothing is deleted. " +
          'Erases, in one transaction, every row of the organization in every module: members, teams, invitations, API ' +
          'keys, install links, MCP connections and their credentials, SSO, SCIM, the memory its members kept there, bots, ' +
          'the audit stream. Sessions whose active organization it was keep working, with none active. ' +
          "The organization's audit log is erased with it (its events are the organization's data); who deleted it, " +
          "when and from where is recorded as `organization.deleted` (the organization's id and name as the target) in " +
          "the instance's log, which outlives it.",
        params: organizationParams,
        body: z.object({ confirm: z.string().max(1000).describe("The organization's name, typed to confirm") }),
        response: {
          204: z.null().describe('Deleted'),
          ...commonErrorResponses,
          400: errorResponse(
            [httpErrors.invalid_request, organizationErrors.confirmation_mismatch],
            'an invalid body, or a confirmation that is not the name',
          ),
          404: organizationNotFoundResponse,
        },
      },
    },
    async (request, reply) => {
      await organizations.deleteOrganization(
        writeContextOf(request),
        request.params.organizationId,
        request.body.confirm,
        freshAuthenticationCheck(request),
      );
      return reply.status(204).send(null);
    },
  );

  app.put(
    '/v1/session/active-organization',
    {
      onRequest: authenticate({ requires: 'signed-in' }),
      schema: {
        tags: ['Organizations'],
        operationId: 'setActiveOrganization',
        summary: "Choose the session's active organization (one the caller belongs to)",
        body: z.object({ organizationId: organizationIdSchema }),
        response: {
          200: z.object({ organization: organizationSchema }),
          ...commonErrorResponses,
          404: organizationNotFoundResponse,
        },
      },
    },
    async (request) => {
      const organization = await organizations.setActiveOrganization(
        writeContextOf(request),
        request.body.organizationId,
      );
      return { organization: toOrganization(organization) };
    },
  );

  // The owner's address as stored, not re-validated: an account provisioned by SCIM may carry an
  // address stricter email syntax would refuse (internationalized, say), and an answer must not fail on it.
  const ownerSchema = z.object({
    memberId: z.string(),
    userId: z.string(),
    name: z.string(),
    email: z.string().describe('Email address'),
    image: z.string(),
  });
  // No authenticate() hook: the service checks the session in the same query that reads the organization.
  app.get(
    '/v1/org',
    {
      schema: {
        tags: ['Organizations'],
        operationId: 'getActiveOrganization',
        ...signedInAccess,
        summary: 'The active organization of the current session',
        security: [{ session: [] }],
        description:
          "Its owner, the caller's member record and the caller's teams. A session without an active organization, " +
          'or whose user is no longer a member of it, gets 404 `organization_not_found` with a `message`.',
        response: {
          200: z
            .object({
              organization: organizationSchema.extend({ owner: ownerSchema }),
              currentMember: memberSchema,
              currentMemberTeams: z.array(teamSchema),
            })
            .meta({ id: 'ActiveOrganization' })
            .describe(
              'The active organization with its owner, your member record in it, and the teams you belong to there',
            ),
          401: commonErrorResponses[401],
          404: errorResponse([httpErrors.organization_not_found], 'no active organization, or no longer a member'),
        },
      },
    },
    async (request) => {
      const result = await organizations.getActiveOrganization(bearerToken(request));
      return {
        organization: {
          ...toOrganization(result.organization),
          owner: {
            memberId: result.owner.id,
            userId: result.owner.user_id,
            name: result.owner.name,
            email: result.owner.email,
            image: result.owner.image,
          },
        },
        currentMember: toMember(result.currentMember),
        currentMemberTeams: result.teams.map(toTeam),
      };
    },
  );

  app.put(
    '/v1/admin/orgs/:organizationId/plan',
    {
      onRequest: authenticate({ requires: 'instance-admin', judgedBy: 'service', freshAuthentication: 'by-route' }),
      schema: {
        tags: ['Admin'],
        operationId: 'setOrganizationPlan',
        summary: "Set an organization's plan (instance administrators)",
        description:
          'Needs a session of an instance administrator (403 `forbidden` for anyone else), and is privileged (below): a plan decides what the organization may turn on (SSO, SCIM).',
        params: organizationParams,
        body: z.object({ plan: planSchema }),
        response: {
          200: z.object({ organization: organizationSchema }),
          ...commonErrorResponses,
          404: organizationNotFoundResponse,
        },
      },
    },
    async (request) => {
      if (!callerOf(request).isInstanceAdmin) throw forbidden('Only instance administrators set plans');
      requireFreshAuthentication(request);
      const organization = await organizations.setPlan(
        writeContextOf(request),
        request.params.organizationId,
        request.body.plan,
      );
      return { organization: toOrganization(organization) };
    },
  );
};
