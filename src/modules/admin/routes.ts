// HTTP of instance administration (/v1/admin): the overview, people, organizations and administrators.
// Every route is for an instance administrator who authenticated recently; the instance's audit log is
// audit-routes.ts.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { authenticate, writeContextOf } from '../../http/auth.ts';
import { httpErrors } from '../../http/error-codes.ts';
import { afterFromCursor, commonErrorResponses, errorResponse, pageOf } from '../../http/schemas.ts';
import { organizationParams } from '../identity/index.ts';
import { adminErrors } from './error-codes.ts';
import {
  addAdminBody,
  adminOrganizationSchema,
  administratorSchema,
  overviewSchema,
  personSchema,
  searchQuerySchema,
  toAdministrator,
  toAdminOrganization,
  toPerson,
  updateOrganizationBody,
  userParams,
} from './schemas.ts';
import type { AdminService } from './service.ts';

/**
 * The onRequest hook of every /v1/admin route: an instance administrator only (403 forbidden for anybody
 * else, an organization's owner included), and then a recent authentication (403 reauth), so that nobody
 * else learns more than no.
 */
export const adminOnly = authenticate({ requires: 'instance-admin', freshAuthentication: true });

/** Said of every /v1/admin route, before what the route does. */
export const adminCallers =
  'Needs a session of an instance administrator (401 without a session; 403 `forbidden` for anybody else, whatever their role in an organization; API keys are refused). ' +
  'An administrator sees counts and settings, never an organization’s memories, credentials or prompts. ';

const searchDescription = (what: string) =>
  `${what} Ordered by id; \`nextCursor\` continues the list (a tampered cursor is 400). ` +
  '`search` keeps the rows whose ';

export const adminRoutes: FastifyPluginAsyncZod<{ admin: AdminService }> = async (app, { admin }) => {
  app.get(
    '/v1/admin/overview',
    {
      onRequest: adminOnly,
      schema: {
        tags: ['Admin'],
        operationId: 'getInstanceOverview',
        summary: 'The instance at a glance: people, organizations, activity and what needs attention',
        description:
          adminCallers +
          'Active people are counted from the times their sessions record a sign-in or re-authentication. ' +
          '`workersRunning` and `llmSpendUsd30d` are always 0: orgplane runs no workers for organizations and meters no LLM use yet.',
        response: { 200: overviewSchema, ...commonErrorResponses },
      },
    },
    async () => {
      const overview = await admin.overview();
      return {
        people: overview.people,
        organizations: overview.organizations,
        activePeople: overview.activePeople,
        workersRunning: 0,
        llmSpendUsd30d: 0,
        attention: overview.attention,
        generatedAt: new Date().toISOString(),
      };
    },
  );

  app.get(
    '/v1/admin/people',
    {
      onRequest: adminOnly,
      schema: {
        tags: ['Admin'],
        operationId: 'listInstancePeople',
        summary: 'Every account on the instance, searchable',
        description:
          adminCallers +
          searchDescription('People with how many organizations they belong to and when they last authenticated.') +
          'e-mail or name starts with it, case-insensitively (`ann`, `ann@corp`).',
        querystring: searchQuerySchema,
        response: {
          200: z.object({ people: z.array(personSchema), nextCursor: z.string().nullable() }),
          ...commonErrorResponses,
        },
      },
    },
    async (request) => {
      const { search, cursor, limit } = request.query;
      const page = pageOf(await admin.listPeople(search, afterFromCursor(cursor), limit + 1), limit);
      return { people: page.items.map(toPerson), nextCursor: page.nextCursor };
    },
  );

  app.get(
    '/v1/admin/organizations',
    {
      onRequest: adminOnly,
      schema: {
        tags: ['Admin'],
        operationId: 'listInstanceOrganizations',
        summary: 'Every organization on the instance, searchable, with its plan',
        description:
          adminCallers +
          searchDescription('Organizations with their plan and how many active members they have.') +
          'name starts with it, case-insensitively, or whose id it is.',
        querystring: searchQuerySchema,
        response: {
          200: z.object({ organizations: z.array(adminOrganizationSchema), nextCursor: z.string().nullable() }),
          ...commonErrorResponses,
        },
      },
    },
    async (request) => {
      const { search, cursor, limit } = request.query;
      const page = pageOf(await admin.listOrganizations(search, afterFromCursor(cursor), limit + 1), limit);
      return { organizations: page.items.map(toAdminOrganization), nextCursor: page.nextCursor };
    },
  );

  app.patch(
    '/v1/admin/organizations/:organizationId',
    {
      onRequest: adminOnly,
      schema: {
        tags: ['Admin'],
        operationId: 'updateInstanceOrganization',
        summary: "Change an organization's settings as the instance's administrator: its plan",
        description:
          adminCallers +
          'The plan decides what the organization may turn on (SSO needs enterprise). A change is written to the instance’s audit log and to the organization’s; ' +
          'a body that changes nothing writes nothing. 404 `organization_not_found` for an unknown id.',
        params: organizationParams,
        body: updateOrganizationBody,
        response: {
          200: z.object({ organization: adminOrganizationSchema }),
          ...commonErrorResponses,
          404: errorResponse([httpErrors.organization_not_found], 'no such organization'),
        },
      },
    },
    async (request) => {
      const organization = await admin.updateOrganization(
        writeContextOf(request),
        request.params.organizationId,
        request.body,
      );
      return { organization: toAdminOrganization(organization) };
    },
  );

  app.get(
    '/v1/admin/admins',
    {
      onRequest: adminOnly,
      schema: {
        tags: ['Admin'],
        operationId: 'listInstanceAdmins',
        summary: "The instance's administrators, oldest account first",
        description: adminCallers,
        response: { 200: z.object({ admins: z.array(administratorSchema) }), ...commonErrorResponses },
      },
    },
    async () => ({ admins: (await admin.listAdmins()).map(toAdministrator) }),
  );

  app.post(
    '/v1/admin/admins',
    {
      onRequest: adminOnly,
      schema: {
        tags: ['Admin'],
        operationId: 'addInstanceAdmin',
        summary: 'Make an existing account an instance administrator',
        description:
          adminCallers +
          '201 with the new administrator; 200 when the account is one already (nothing changes, nothing is logged). ' +
          '404 `person_not_found` when no account has the e-mail.',
        body: addAdminBody,
        response: {
          200: z.object({ admin: administratorSchema }),
          201: z.object({ admin: administratorSchema }),
          ...commonErrorResponses,
          404: errorResponse([adminErrors.person_not_found], 'no account has the e-mail'),
        },
      },
    },
    async (request, reply) => {
      const { admin: added, added: isNew } = await admin.addAdmin(writeContextOf(request), request.body.email);
      return reply.code(isNew ? 201 : 200).send({ admin: toAdministrator(added) });
    },
  );

  app.delete(
    '/v1/admin/admins/:userId',
    {
      onRequest: adminOnly,
      schema: {
        tags: ['Admin'],
        operationId: 'removeInstanceAdmin',
        summary: "Take a person's instance administration away (never the last administrator's)",
        description:
          adminCallers +
          'The account stays; it loses /v1/admin at its next request. An administrator may remove themselves when another remains. ' +
          '409 `last_admin` for the only administrator; 404 `admin_not_found` for a person who is not one.',
        params: userParams,
        response: {
          204: z.null().describe('Removed'),
          ...commonErrorResponses,
          404: errorResponse([adminErrors.admin_not_found], 'not an instance administrator'),
          409: errorResponse([adminErrors.last_admin], 'the last administrator'),
        },
      },
    },
    async (request, reply) => {
      await admin.removeAdmin(writeContextOf(request), request.params.userId);
      return reply.code(204).send(null);
    },
  );
};
