// The SCIM 2.0 server (RFC 7643/7644) under /scim/v2, authenticated by the organization's SCIM token.
// It is its own Fastify context: it accepts application/scim+json, answers in SCIM's error format
// (status as a string, scimType), and counts every failed provisioning request in the connector's health.
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors, type FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { bearerToken } from '../../http/auth.ts';
import { isDatabaseUnavailable, isUnstorableText } from '../../db/errors.ts';
import { ApiError } from '../../http/errors.ts';
import { utf8BodyText } from '../../http/json-body.ts';
import {
  allSchemas,
  listResponse,
  parsePaging,
  resourceTypeDocuments,
  schemaDocument,
  serviceProviderConfig,
} from './documents.ts';
import { ScimError, scimErrorBody } from './errors.ts';
import { leavesOut, project } from './projection.ts';
import {
  scimDiscoverySchema,
  scimErrorSchema,
  scimGroupInputSchema,
  scimGroupSchema,
  scimListSchema,
  scimPagingParameter,
  scimPatchOpSchema,
  scimUserInputSchema,
  scimUserSchema,
} from './openapi.ts';
import type { ScimConnector, ScimContext, ScimService } from './service.ts';

export const SCIM_CONTENT_TYPE = 'application/scim+json; charset=utf-8';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Name of the provisioning action, for the connector's health (set on writing routes). */
    scimAction?: string;
  }
}

const listQuery = z
  .object({
    filter: z
      .string()
      .max(4096)
      .optional()
      .describe('e.g. userName eq "ann@example.com"; eq/ne/co/sw/ew/pr joined by and/or/not'),
    startIndex: scimPagingParameter('1-based index of the first result (below 1 counts as 1)'),
    count: scimPagingParameter('page size, at most 200 (default 100; below 0 counts as 0)'),
    attributes: z.string().max(2000).optional(),
    excludedAttributes: z.string().max(2000).optional(),
  })
  .loose();
const itemQuery = listQuery.pick({ attributes: true, excludedAttributes: true }).loose();
// An empty id ("/Users/") is not refused here: it names no resource, the 404 of the preValidation hook.
const idParams = z.object({ id: z.string().max(200) });

const scimErrors = {
  400: scimErrorSchema.describe(
    'SCIM error: the request is not valid (`scimType` says how: invalidSyntax, invalidFilter, invalidValue, invalidPath, noTarget, mutability)',
  ),
  401: scimErrorSchema.describe('SCIM error: no valid SCIM bearer token'),
  403: scimErrorSchema.describe(
    "SCIM error: while the organization's SSO domain is not verified, writes that give access are paused: creating users or groups, " +
      'writes that leave a user active, adding group members. Deactivating (`active: false`) and deleting users, and removing group members or groups, still work.',
  ),
  404: scimErrorSchema.describe('SCIM error: no such resource'),
  409: scimErrorSchema.describe(
    'SCIM error: `scimType` uniqueness (the userName, e-mail or displayName is taken) or a version conflict',
  ),
  413: scimErrorSchema.describe('SCIM error: the body is too large'),
  415: scimErrorSchema.describe('SCIM error: send application/scim+json or application/json'),
  503: scimErrorSchema.describe('SCIM error: the database cannot be reached right now; retry'),
};
// The service builds documents as plain records; the response schemas check them on the way out.
const asUser = (doc: Record<string, unknown>) => doc as z.output<typeof scimUserSchema>;
const asGroup = (doc: Record<string, unknown>) => doc as z.output<typeof scimGroupSchema>;
const deleted = { 204: z.null().describe('No content') };
const userResponses = { 200: scimUserSchema, ...scimErrors };
const groupResponses = { 200: scimGroupSchema, ...scimErrors };
const discoveryResponses = { 200: scimDiscoverySchema, ...scimErrors };
const discoveryListResponses = { 200: scimListSchema(scimDiscoverySchema, 'ScimDiscoveryListResponse'), ...scimErrors };

/**
 * The deepest nesting of objects and arrays a SCIM body may have (the body itself is level 1). SCIM
 * resources need a handful of levels; a value thousands of levels deep parses, but copying or
 * serializing it overflows the stack, so it is refused before anything runs.
 */
export const MAX_BODY_DEPTH = 64;

/** Whether a JSON text nests deeper than `limit`, counted on the text so no deep value is ever built. */
function nestsDeeperThan(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // the escaped character cannot end the string
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > limit) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

function failureBody(error: FastifyError | Error): {
  status: number;
  detail: string;
  scimType?: ScimError['scimType'];
} {
  if (error instanceof ScimError) return { status: error.status, detail: error.message, scimType: error.scimType };
  if (error instanceof ApiError) return { status: error.statusCode, detail: error.message };
  if (hasZodFastifySchemaValidationErrors(error)) {
    const first = error.validation[0];
    return {
      status: 400,
      detail: `Invalid request: ${first?.message ?? 'validation failed'}`,
      scimType: 'invalidSyntax',
    };
  }
  const code = (error as FastifyError).code;
  if (code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE')
    return { status: 415, detail: 'Send the body as application/scim+json or application/json' };
  if (code === 'FST_ERR_CTP_BODY_TOO_LARGE') return { status: 413, detail: 'The request body is too large' };
  if (
    error instanceof SyntaxError ||
    code === 'FST_ERR_CTP_INVALID_JSON_BODY' ||
    code === 'FST_ERR_CTP_EMPTY_JSON_BODY'
  ) {
    return { status: 400, detail: 'The body is not valid JSON', scimType: 'invalidSyntax' };
  }
  // Text PostgreSQL cannot store (U+0000, unpaired surrogates) is the client's input; a lost database is retryable.
  if (isUnstorableText(error))
    return {
      status: 400,
      detail: 'Text cannot contain the NUL character (U+0000) or unpaired surrogates',
      scimType: 'invalidValue',
    };
  if (isDatabaseUnavailable(error)) return { status: 503, detail: 'The database is unavailable; try again shortly' };
  const status = (error as FastifyError).statusCode;
  if (status && status >= 400 && status < 500) return { status, detail: error.message };
  return { status: 500, detail: 'Something went wrong on our side' };
}

/**
 * Answers a request the router refused before any route ran (an undecodable path under /scim/v2,
 * say) in SCIM's error shape, which is what a SCIM client reads.
 */
export function scimFrameworkError(error: FastifyError, _request: FastifyRequest, reply: FastifyReply) {
  const body = failureBody(error);
  return reply
    .status(body.status)
    .header('content-type', SCIM_CONTENT_TYPE)
    .send(scimErrorBody(body.status, body.detail, body.scimType));
}

/**
 * How the SCIM server answers a request the HTTP parser refused before routing (431, 414, 400): the
 * same refusal in SCIM's error shape (http/errors.ts createClientErrorHandler).
 */
export function scimPreRoutingError(status: number, message: string) {
  return { contentType: SCIM_CONTENT_TYPE, body: scimErrorBody(status, message) };
}

/** The context of this request's provisioning writes: the connector acts, through this request. */
function scimContext(connector: ScimConnector, request: FastifyRequest): ScimContext {
  const userAgent = request.headers['user-agent'];
  return {
    ...connector,
    actor: { kind: 'scim', ...connector },
    requestId: request.id,
    clientAddress: request.ip,
    userAgent: typeof userAgent === 'string' ? userAgent : null,
  };
}

export const scimServerRoutes: FastifyPluginAsyncZod<{ scim: ScimService; documentationUri?: string }> = async (
  app,
  { scim, documentationUri },
) => {
  const contexts = new WeakMap<FastifyRequest, ScimContext>();
  const contextOf = (request: FastifyRequest): ScimContext => {
    const ctx = contexts.get(request);
    if (!ctx) throw new ScimError(401, 'A valid SCIM bearer token is required');
    return ctx;
  };

  // Identity providers send application/scim+json; it and application/json are parsed alike, in this context only.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser(
    ['application/scim+json', 'application/json'],
    { parseAs: 'buffer' },
    (request, body, done) => {
      // Some clients label a body-less DELETE with the SCIM type; no body is not a malformed one.
      if ((body as Buffer).length === 0) return done(null, undefined);
      const text = utf8BodyText(request, body as Buffer);
      if (text instanceof ApiError)
        return done(text.statusCode === 400 ? new ScimError(400, text.message, 'invalidSyntax') : text, undefined);
      if (nestsDeeperThan(text, MAX_BODY_DEPTH)) {
        return done(
          new ScimError(400, `The body nests objects and arrays deeper than ${MAX_BODY_DEPTH} levels`, 'invalidSyntax'),
          undefined,
        );
      }
      parseJson(request, text, done);
    },
  );

  app.addHook('onRequest', async (request, reply) => {
    const connector = await scim.authenticate(bearerToken(request));
    if (!connector) {
      reply.header('www-authenticate', 'Bearer realm="scim"');
      throw new ScimError(401, 'A valid SCIM bearer token is required');
    }
    contexts.set(request, scimContext(connector, request));
  });

  app.addHook('onSend', async (_request, reply, payload) => {
    if (String(reply.getHeader('content-type') ?? '').startsWith('application/json'))
      reply.header('content-type', SCIM_CONTENT_TYPE);
    return payload;
  });

  app.setErrorHandler(async (error: FastifyError, request, reply) => {
    const body = failureBody(error);
    if (body.status >= 500) request.log.error({ err: error }, 'SCIM request failed');
    const ctx = contexts.get(request);
    const action = request.routeOptions.config.scimAction;
    if (ctx && action) {
      // A failure is counted even when the database is what failed; a second failure must not hide the first.
      await scim
        .recordFailure(ctx, action, `${body.status} ${body.detail}`)
        .catch((recordError) => request.log.warn({ err: recordError }, 'could not record SCIM failure'));
    }
    reply.status(body.status).header('content-type', SCIM_CONTENT_TYPE);
    return reply.send(scimErrorBody(body.status, body.detail, body.scimType));
  });

  const noEndpoint = (request: FastifyRequest) =>
    new ScimError(404, `No SCIM endpoint ${request.method} ${request.url.split('?')[0]}`);

  app.setNotFoundHandler(async (request, reply) => {
    // Unknown SCIM paths still need a valid token to learn anything.
    if (!(await scim.authenticate(bearerToken(request)))) {
      reply.header('www-authenticate', 'Bearer realm="scim"');
      return reply
        .status(401)
        .header('content-type', SCIM_CONTENT_TYPE)
        .send(scimErrorBody(401, 'A valid SCIM bearer token is required'));
    }
    return reply
      .status(404)
      .header('content-type', SCIM_CONTENT_TYPE)
      .send(scimErrorBody(404, noEndpoint(request).message));
  });

  // "/Users/" reaches "/Users/:id" with an empty id: like any path that names nothing, a 404.
  app.addHook('preValidation', async (request) => {
    if ((request.params as { id?: unknown } | undefined)?.id === '') throw noEndpoint(request);
  });

  /** Runs a provisioning write and marks the connector's last successful sync before answering. */
  const write = async <T>(request: FastifyRequest, run: (ctx: ScimContext) => Promise<T>): Promise<T> => {
    const ctx = contextOf(request);
    const result = await run(ctx);
    await scim.recordSuccess(ctx);
    return result;
  };

  const created = (reply: FastifyReply, resource: Record<string, unknown>) => {
    const location = (resource.meta as { location?: string } | undefined)?.location;
    if (location) reply.header('location', location);
    return reply.status(201).send(resource);
  };

  const base = scim.baseUrl;
  const accountFollows =
    "The identity provider is authoritative for the accounts of its verified domain: when the user is (or stays) active, the account's " +
    'name follows `displayName` (else `name`, else the e-mail) and its e-mail follows the primary e-mail, as on creation; 409 `uniqueness` ' +
    'and nothing changed when another account has that e-mail. The same e-mail and name rules as sign-up apply (400 `invalidValue`).';
  // Every SCIM route: its own bearer token, and SCIM's media type both ways (RFC 7644 section 3.1).
  const documented = {
    security: [{ scimToken: [] }],
    consumes: ['application/scim+json', 'application/json'],
    produces: ['application/scim+json'],
  };
  // What every SCIM operation shares, as the description of those that need no more.
  app.addHook('onRoute', (route) => {
    if (route.schema && !route.schema.hide && !route.schema.description) {
      route.schema.description =
        "Authenticated by the organization's SCIM token (`Authorization: Bearer opscim_...`, from `POST /v1/scim/token`). Bodies and answers are `application/scim+json`; errors are SCIM errors (RFC 7644 section 3.12).";
    }
  });

  // ---- discovery ----
  app.get(
    '/ServiceProviderConfig',
    {
      schema: {
        tags: ['SCIM'],
        operationId: 'scimServiceProviderConfig',
        response: discoveryResponses,
        summary: 'SCIM: service provider configuration',
        ...documented,
      },
    },
    async () => serviceProviderConfig(base, documentationUri),
  );

  app.get(
    '/ResourceTypes',
    {
      schema: {
        tags: ['SCIM'],
        operationId: 'scimResourceTypes',
        response: discoveryListResponses,
        summary: 'SCIM: resource types',
        ...documented,
      },
    },
    async () => {
      const types = resourceTypeDocuments(base);
      return listResponse(types, types.length, { startIndex: 1, count: types.length });
    },
  );

  app.get(
    '/ResourceTypes/:id',
    {
      schema: {
        tags: ['SCIM'],
        operationId: 'scimResourceType',
        response: discoveryResponses,
        summary: 'SCIM: one resource type',
        params: idParams,
        ...documented,
      },
    },
    async (request) => {
      const type = resourceTypeDocuments(base).find((t) => t.id === request.params.id);
      if (!type) throw new ScimError(404, `Resource type ${request.params.id} not found`);
      return type;
    },
  );

  app.get(
    '/Schemas',
    {
      schema: {
        tags: ['SCIM'],
        operationId: 'scimSchemas',
        response: discoveryListResponses,
        summary: 'SCIM: schemas',
        ...documented,
      },
    },
    async () =>
      listResponse(
        allSchemas.map((s) => schemaDocument(s, base)),
        allSchemas.length,
        { startIndex: 1, count: allSchemas.length },
      ),
  );

  app.get(
    '/Schemas/:id',
    {
      schema: {
        tags: ['SCIM'],
        operationId: 'scimSchema',
        response: discoveryResponses,
        summary: 'SCIM: one schema',
        params: idParams,
        ...documented,
      },
    },
    async (request) => {
      const schema = allSchemas.find((s) => s.id.toLowerCase() === request.params.id.toLowerCase());
      if (!schema) throw new ScimError(404, `Schema ${request.params.id} not found`);
      return schemaDocument(schema, base);
    },
  );

  // RFC 7644 3.11: a service provider without /Me answers 501. Not documented: there is nothing to call.
  app.route({
    method: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'],
    url: '/Me',
    schema: { hide: true },
    handler: async () => {
      throw new ScimError(
        501,
        'The /Me endpoint is not supported: a SCIM token stands for the organization, not for a user',
      );
    },
  });

  // ---- Users ----
  app.get(
    '/Users',
    {
      schema: {
        tags: ['SCIM'],
        operationId: 'scimListUsers',
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

  // ---- Groups ----
  app.get(
    '/Groups',
    {
      schema: {
        tags: ['SCIM'],
        operationId: 'scimListGroups',
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
};
