// The /Groups resource: groups and their members, kept as metadata (groupMappingMode metadata_only).
import { publicAccess } from '../../http/auth.ts';
import { parsePaging } from './documents.ts';
import { scimGroupInputSchema, scimGroupSchema, scimListSchema, scimPatchOpSchema } from './openapi.ts';
import { leavesOut, project } from './projection.ts';
import {
  asGroup,
  deleted,
  documented,
  groupResponses,
  idParams,
  itemQuery,
  listQuery,
  scimErrors,
  type ScimApp,
  type ScimRouteKit,
} from './route-schemas.ts';

export function registerGroupRoutes(app: ScimApp, { scim, contextOf, write, created }: ScimRouteKit): void {
  app.get(
    '/Groups',
    {
      schema: {
        tags: ['SCIM'],
        operationId: 'scimListGroups',
        ...publicAccess,
        response: { 200: scimListSchema(scimGroupSchema, 'ScimGroupListResponse'), ...scimErrors },
        summary: 'SCIM: list groups',
        description: 'Filters: `displayName`, `externalId`, `id`, `members.value`.',
        querystring: listQuery,
        ...documented,
      },
    },
    async (request) => {
      const excludeMembers = leavesOut('Group', request.query, 'members');
      const page = await scim.listGroups(contextOf(request), {
        filter: request.query.filter,
        paging: parsePaging(request.query),
        excludeMembers,
      });
      return { ...page, Resources: page.Resources.map((r) => asGroup(project('Group', r, request.query))) };
    },
  );

  app.get(
    '/Groups/:id',
    {
      schema: {
        tags: ['SCIM'],
        operationId: 'scimGetGroup',
        ...publicAccess,
        response: groupResponses,
        summary: 'SCIM: get a group',
        params: idParams,
        querystring: itemQuery,
        ...documented,
      },
    },
    async (request) =>
      asGroup(project('Group', await scim.getGroup(contextOf(request), request.params.id), request.query)),
  );

  app.post(
    '/Groups',
    {
      config: { scimAction: 'create_group' },
      schema: {
        tags: ['SCIM'],
        operationId: 'scimCreateGroup',
        ...publicAccess,
        response: { 201: scimGroupSchema, ...scimErrors },
        summary: 'SCIM: create a group',
        description:
          'groupMappingMode metadata_only: the group and its members are kept as metadata; no team is created.',
        body: scimGroupInputSchema,
        ...documented,
      },
    },
    async (request, reply) => created(reply, await write(request, (ctx) => scim.createGroup(ctx, request.body))),
  );

  app.put(
    '/Groups/:id',
    {
      config: { scimAction: 'replace_group' },
      schema: {
        tags: ['SCIM'],
        operationId: 'scimReplaceGroup',
        ...publicAccess,
        response: groupResponses,
        summary: 'SCIM: replace a group',
        params: idParams,
        body: scimGroupInputSchema,
        ...documented,
      },
    },
    async (request) => asGroup(await write(request, (ctx) => scim.replaceGroup(ctx, request.params.id, request.body))),
  );

  app.patch(
    '/Groups/:id',
    {
      config: { scimAction: 'patch_group' },
      schema: {
        tags: ['SCIM'],
        operationId: 'scimPatchGroup',
        ...publicAccess,
        response: groupResponses,
        summary: 'SCIM: modify a group (PatchOp, e.g. members add/remove)',
        params: idParams,
        body: scimPatchOpSchema,
        ...documented,
      },
    },
    async (request) => asGroup(await write(request, (ctx) => scim.patchGroup(ctx, request.params.id, request.body))),
  );

  app.delete(
    '/Groups/:id',
    {
      config: { scimAction: 'delete_group' },
      schema: {
        tags: ['SCIM'],
        operationId: 'scimDeleteGroup',
        ...publicAccess,
        response: { ...deleted, ...scimErrors },
        summary: 'SCIM: delete a group',
        params: idParams,
        ...documented,
      },
    },
    async (request, reply) => {
      await write(request, (ctx) => scim.deleteGroup(ctx, request.params.id));
      return reply.status(204).send(null);
    },
  );
}
