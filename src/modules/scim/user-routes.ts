// The /Users resource: provisioning the organization's members.
import { publicAccess } from '../../http/auth.ts';
import { parsePaging } from './documents.ts';
import { scimPatchOpSchema, scimListSchema, scimUserInputSchema, scimUserSchema } from './openapi.ts';
import { project } from './projection.ts';
import {
  asUser,
  deleted,
  documented,
  idParams,
  itemQuery,
  listQuery,
  scimErrors,
  userResponses,
  type ScimApp,
  type ScimRouteKit,
} from './route-schemas.ts';

const accountFollows =
  "The identity provider is authoritative for the accounts of its verified domain: when the user is (or stays) active, the account's " +
  'name follows `displayName` (else `name`, else the e-mail) and its e-mail follows the primary e-mail, as on creation; 409 `uniqueness` ' +
  'and nothing changed when another account has that e-mail. The same e-mail and name rules as sign-up apply (400 `invalidValue`).';

export function registerUserRoutes(app: ScimApp, { scim, contextOf, write, created }: ScimRouteKit): void {
  app.get(
    '/Users',
    {
      schema: {
        tags: ['SCIM'],
        operationId: 'scimListUsers',
        ...publicAccess,
        response: { 200: scimListSchema(scimUserSchema, 'ScimUserListResponse'), ...scimErrors },
        summary: 'SCIM: list users',
        description:
          'Filters: `userName` (case-insensitive), `externalId`, `emails.value` / `emails[...]`, `displayName`, `id`, `active`; `eq`, `ne`, `co`, `sw`, `ew`, `pr`, joined with `and`/`or`/`not` and parentheses. Paging with `startIndex` (1-based) and `count`.',
        querystring: listQuery,
        ...documented,
      },
    },
    async (request) => {
      const page = await scim.listUsers(contextOf(request), {
        filter: request.query.filter,
        paging: parsePaging(request.query),
      });
      return { ...page, Resources: page.Resources.map((r) => asUser(project('User', r, request.query))) };
    },
  );

  app.get(
    '/Users/:id',
    {
      schema: {
        tags: ['SCIM'],
        operationId: 'scimGetUser',
        ...publicAccess,
        response: userResponses,
        summary: 'SCIM: get a user',
        params: idParams,
        querystring: itemQuery,
        ...documented,
      },
    },
    async (request) =>
      asUser(project('User', await scim.getUser(contextOf(request), request.params.id), request.query)),
  );

  app.post(
    '/Users',
    {
      config: { scimAction: 'create_user' },
      schema: {
        tags: ['SCIM'],
        operationId: 'scimCreateUser',
        ...publicAccess,
        response: { 201: scimUserSchema, ...scimErrors },
        summary: 'SCIM: provision a user',
        description:
          "The user becomes a member of the organization. An existing account with the same e-mail is linked (and takes the user's name) only when it is " +
          'already a member of the organization or was itself made by provisioning; one that someone made by sign-up is not handed the membership ' +
          '(409 `uniqueness`: invite that person, then provision them), since sign-up does not prove one owns the address. ' +
          'The e-mail must be valid as on sign-up and in the verified SSO domain, the name at most 200 characters, at most one e-mail primary (400 `invalidValue`). ' +
          '409 `uniqueness` on a duplicate userName. Attributes of no supported schema are ignored.',
        body: scimUserInputSchema,
        ...documented,
      },
    },
    async (request, reply) => created(reply, await write(request, (ctx) => scim.createUser(ctx, request.body))),
  );

  app.put(
    '/Users/:id',
    {
      config: { scimAction: 'replace_user' },
      schema: {
        tags: ['SCIM'],
        operationId: 'scimReplaceUser',
        ...publicAccess,
        response: userResponses,
        summary: 'SCIM: replace a user',
        description: `${accountFollows} \`active: false\` suspends the member and revokes their sessions, whatever the SSO domain's state.`,
        params: idParams,
        body: scimUserInputSchema,
        ...documented,
      },
    },
    async (request) => asUser(await write(request, (ctx) => scim.replaceUser(ctx, request.params.id, request.body))),
  );

  app.patch(
    '/Users/:id',
    {
      config: { scimAction: 'patch_user' },
      schema: {
        tags: ['SCIM'],
        operationId: 'scimPatchUser',
        ...publicAccess,
        response: userResponses,
        summary: 'SCIM: modify a user (PatchOp)',
        description: `${accountFollows} \`active: false\` suspends the member and revokes their sessions, whatever the SSO domain's state; \`active: true\` restores the membership.`,
        params: idParams,
        body: scimPatchOpSchema,
        ...documented,
      },
    },
    async (request) => asUser(await write(request, (ctx) => scim.patchUser(ctx, request.params.id, request.body))),
  );

  app.delete(
    '/Users/:id',
    {
      config: { scimAction: 'delete_user' },
      schema: {
        tags: ['SCIM'],
        operationId: 'scimDeleteUser',
        ...publicAccess,
        response: { ...deleted, ...scimErrors },
        summary: 'SCIM: deprovision a user (removes the member, revokes sessions)',
        params: idParams,
        ...documented,
      },
    },
    async (request, reply) => {
      await write(request, (ctx) => scim.deleteUser(ctx, request.params.id));
      return reply.status(204).send(null);
    },
  );
}
