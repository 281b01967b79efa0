import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { roleErrors } from '../roles/index.ts';
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
  memberIdSchema,
  memberSchema,
  organizationNotFoundResponse,
  organizationParams,
  toMember,
  identityErrors,
} from '../identity/index.ts';
import type { MemberService } from './service.ts';
import { httpErrors } from '../../http/error-codes.ts';
import { memberErrors } from './error-codes.ts';

const noContent = z.null().describe('No content');

/** An organization's members: list, change a role, remove, transfer ownership. */
export const memberRoutes: FastifyPluginAsyncZod<{ members: MemberService }> = async (app, { members }) => {
  app.get(
    '/v1/orgs/:organizationId/members',
    {
      onRequest: authenticate({ requires: 'member', judgedBy: 'service', allowApiKey: true }),
      schema: {
        tags: ['Members'],
        operationId: 'listMembers',
        summary: "List the organization's members",
        description: 'Any member, with a session or an API key of this organization (`x-api-key`).',
        params: organizationParams,
        querystring: paginationQuerySchema,
        response: {
          200: z.object({ members: z.array(memberSchema), nextCursor: z.string().nullable() }),
          ...commonErrorResponses,
          404: organizationNotFoundResponse,
        },
      },
    },
    async (request) => {
      const { limit, cursor } = request.query;
      const rows = await members.listMembers(callerOf(request), request.params.organizationId, {
        limit: limit + 1,
        after: afterFromCursor(cursor),
      });
      const page = pageOf(rows, limit);
      return { members: page.items.map(toMember), nextCursor: page.nextCursor };
    },
  );

  const memberParams = organizationParams.extend({ memberId: memberIdSchema });
  app.patch(
    '/v1/orgs/:organizationId/members/:memberId',
    {
      onRequest: authenticate({
        requires: 'members.update_role',
        judgedBy: 'service',
        freshAuthentication: 'by-route',
      }),
      schema: {
        tags: ['Members'],
        operationId: 'changeMemberRole',
        summary: "Change a member's role (owners and admins); the owner changes only by transfer",
        params: memberParams,
        body: z.object({ role: assignableRoleSchema }),
        response: {
          200: z.object({ member: memberSchema }),
          ...commonErrorResponses,
          403: errorResponse([httpErrors.forbidden, roleErrors.permission_not_held]),
          404: errorResponse([
            httpErrors.organization_not_found,
            identityErrors.member_not_found,
            roleErrors.role_not_found,
          ]),
          409: errorResponse([memberErrors.owner_role_fixed]),
        },
      },
    },
    async (request) => {
      const member = await members.changeMemberRole(
        writeContextOf(request),
        request.params.organizationId,
        request.params.memberId,
        request.body.role,
        freshAuthenticationCheck(request),
      );
      return { member: toMember(member) };
    },
  );

  app.delete(
    '/v1/orgs/:organizationId/members/:memberId',
    {
      onRequest: authenticate({ requires: 'members.remove', judgedBy: 'service', freshAuthentication: 'by-route' }),
      schema: {
        tags: ['Members'],
        operationId: 'removeMember',
        summary: 'Remove a member (owners and admins; anyone may remove themselves); the owner cannot be removed',
        description:
          'Needs a session of a member of the organization. ' +
          'Removing another member is privileged (below); a member leaving the organization (their own member id) needs no recent authentication.',
        params: memberParams,
        response: {
          204: noContent,
          ...commonErrorResponses,
          404: errorResponse([httpErrors.organization_not_found, identityErrors.member_not_found]),
          409: errorResponse([memberErrors.owner_cannot_be_removed]),
        },
      },
    },
    async (request, reply) => {
      await members.removeMember(
        writeContextOf(request),
        request.params.organizationId,
        request.params.memberId,
        freshAuthenticationCheck(request),
      );
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/v1/orgs/:organizationId/transfer-ownership',
    {
      onRequest: authenticate({ requires: 'owner', judgedBy: 'service', freshAuthentication: 'by-route' }),
      schema: {
        tags: ['Members'],
        operationId: 'transferOwnership',
        summary: 'Make another member the owner (owner only); the previous owner becomes an admin',
        params: organizationParams,
        body: z.object({ memberId: memberIdSchema }),
        response: {
          200: z.object({ member: memberSchema }),
          ...commonErrorResponses,
          404: errorResponse([httpErrors.organization_not_found, identityErrors.member_not_found]),
        },
      },
    },
    async (request) => {
      const member = await members.transferOwnership(
        writeContextOf(request),
        request.params.organizationId,
        request.body.memberId,
        freshAuthenticationCheck(request),
      );
      return { member: toMember(member) };
    },
  );
};
