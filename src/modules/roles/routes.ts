// HTTP of the permission catalog, custom roles, and the keys a member holds with where each comes from.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { authenticate, callerOf, freshAuthenticationCheck, writeContextOf } from '../../http/auth.ts';
import { httpErrors } from '../../http/error-codes.ts';
import { commonErrorResponses, errorResponse } from '../../http/schemas.ts';
import { PERMISSION_KEYS, PERMISSIONS } from '../../platform/permissions.ts';
import { identityErrors, memberIdSchema, organizationNotFoundResponse, organizationParams } from '../identity/index.ts';
import { roleErrors } from './error-codes.ts';
import {
  createRoleBodySchema,
  effectivePermissionsSchema,
  permissionKeySchema,
  roleIdParamSchema,
  roleSchema,
  toRole,
  updateRoleBodySchema,
} from './schemas.ts';
import type { RoleService } from './service.ts';

const tags = ['Roles'];
const noContent = z.null().describe('No content');
const roleParams = organizationParams.extend({ roleId: roleIdParamSchema });

const catalogSchema = z
  .object({
    permissions: z.array(
      z.object({
        key: permissionKeySchema,
        description: z.string(),
        sensitive: z
          .boolean()
          .describe(
            'Changes made with it need a recent authentication (403 `reauth`), and so a person, not an API key',
          ),
        defaultRoles: z
          .array(z.enum(['admin', 'member']))
          .describe('The built-in roles that hold it besides the owner, who holds every key'),
      }),
    ),
  })
  .meta({ id: 'PermissionCatalog' });

const catalog = {
  permissions: PERMISSION_KEYS.map((key) => ({
    key,
    description: PERMISSIONS[key].description,
    sensitive: PERMISSIONS[key].sensitive,
    defaultRoles: [...PERMISSIONS[key].defaultRoles],
  })),
};

export const roleRoutes: FastifyPluginAsyncZod<{ roles: RoleService }> = async (app, { roles }) => {
  app.get(
    '/v1/permissions',
    {
      onRequest: authenticate({ requires: 'signed-in', allowApiKey: true }),
      schema: {
        tags,
        operationId: 'listPermissions',
        summary: 'The permission catalog: every key a role may hold',
        response: { 200: catalogSchema, 401: commonErrorResponses[401] },
      },
    },
    async () => catalog,
  );

  app.get(
    '/v1/me/permissions',
    {
      onRequest: authenticate({ requires: 'member', allowApiKey: true }),
      schema: {
        tags,
        operationId: 'getMyPermissions',
        summary: 'The keys the caller holds in the active organization, and what grants each',
        description:
          "A session: its member's role and their teams' roles. An API key: its role. Without an active organization you are a member of, 403 `forbidden`.",
        response: { 200: effectivePermissionsSchema, 401: commonErrorResponses[401], 403: commonErrorResponses[403] },
      },
    },
    async (request) => ({ permissions: await roles.callerPermissions(callerOf(request)) }),
  );

  app.get(
    '/v1/orgs/:organizationId/members/:memberId/permissions',
    {
      onRequest: authenticate({ requires: 'member', judgedBy: 'service' }),
      schema: {
        tags,
        operationId: 'getMemberPermissions',
        summary: 'A member\'s keys and what grants each ("why can this person do this")',
        description:
          "Your own, or, holding `members.update_role`, anyone's (403 `forbidden` with `missingPermission` otherwise).",
        params: organizationParams.extend({ memberId: memberIdSchema }),
        response: {
          200: effectivePermissionsSchema,
          ...commonErrorResponses,
          404: errorResponse([httpErrors.organization_not_found, identityErrors.member_not_found]),
        },
      },
    },
    async (request) => ({
      permissions: await roles.memberPermissions(
        callerOf(request),
        request.params.organizationId,
        request.params.memberId,
      ),
    }),
  );

  app.get(
    '/v1/orgs/:organizationId/roles',
    {
      onRequest: authenticate({ requires: 'member', judgedBy: 'service' }),
      schema: {
        tags,
        operationId: 'listRoles',
        summary: 'The built-in roles and the custom ones, with their keys and how many members hold each',
        params: organizationParams,
        response: {
          200: z.object({ roles: z.array(roleSchema) }),
          ...commonErrorResponses,
          404: organizationNotFoundResponse,
        },
      },
    },
    async (request) => ({
      roles: (await roles.listRoles(callerOf(request), request.params.organizationId)).map(toRole),
    }),
  );

  app.post(
    '/v1/orgs/:organizationId/roles',
    {
      onRequest: authenticate({ requires: 'roles.manage', judgedBy: 'service', freshAuthentication: 'by-route' }),
      schema: {
        tags,
        operationId: 'createRole',
        summary: 'Create a custom role with any keys the caller holds',
        params: organizationParams,
        body: createRoleBodySchema,
        response: {
          201: z.object({ role: roleSchema }),
          ...commonErrorResponses,
          400: errorResponse([httpErrors.invalid_request, roleErrors.unknown_permission]),
          403: errorResponse([httpErrors.forbidden, roleErrors.permission_not_held]),
          404: organizationNotFoundResponse,
          409: errorResponse([roleErrors.role_name_taken]),
        },
      },
    },
    async (request, reply) => {
      const role = await roles.createRole(
        writeContextOf(request),
        request.params.organizationId,
        request.body,
        freshAuthenticationCheck(request),
      );
      return reply.status(201).send({ role: toRole(role) });
    },
  );

  app.patch(
    '/v1/orgs/:organizationId/roles/:roleId',
    {
      onRequest: authenticate({ requires: 'roles.manage', judgedBy: 'service', freshAuthentication: 'by-route' }),
      schema: {
        tags,
        operationId: 'updateRole',
        summary: "Rename a custom role, or change its description or keys (holders' next request sees them)",
        description:
          'Only a role whose keys the caller holds, and only to keys the caller holds (403 `permission_not_held`).',
        params: roleParams,
        body: updateRoleBodySchema,
        response: {
          200: z.object({ role: roleSchema }),
          ...commonErrorResponses,
          400: errorResponse([httpErrors.invalid_request, roleErrors.unknown_permission]),
          403: errorResponse([httpErrors.forbidden, roleErrors.permission_not_held]),
          404: errorResponse([httpErrors.organization_not_found, roleErrors.role_not_found]),
          409: errorResponse([roleErrors.role_name_taken, roleErrors.role_protected]),
        },
      },
    },
    async (request) => ({
      role: toRole(
        await roles.updateRole(
          writeContextOf(request),
          request.params.organizationId,
          request.params.roleId,
          request.body,
          freshAuthenticationCheck(request),
        ),
      ),
    }),
  );

  app.delete(
    '/v1/orgs/:organizationId/roles/:roleId',
    {
      onRequest: authenticate({ requires: 'roles.manage', judgedBy: 'service', freshAuthentication: 'by-route' }),
      schema: {
        tags,
        operationId: 'deleteRole',
        summary: 'Delete a custom role nobody and nothing holds',
        description:
          'A role still given to members, pending invitations, API keys, teams or SSO provisioning: 409 `role_in_use`, `usedBy` counting each.',
        params: roleParams,
        response: {
          204: noContent,
          ...commonErrorResponses,
          403: errorResponse([httpErrors.forbidden, roleErrors.permission_not_held]),
          404: errorResponse([httpErrors.organization_not_found, roleErrors.role_not_found]),
          409: errorResponse([roleErrors.role_protected, roleErrors.role_in_use]),
        },
      },
    },
    async (request, reply) => {
      await roles.deleteRole(
        writeContextOf(request),
        request.params.organizationId,
        request.params.roleId,
        freshAuthenticationCheck(request),
      );
      return reply.status(204).send(null);
    },
  );
};
