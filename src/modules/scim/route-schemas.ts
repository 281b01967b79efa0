// The pieces every SCIM route's schema shares: its query and path parameters, SCIM error answers, and
// how it is documented; and the kit the routes of each resource are built with.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  scimDiscoverySchema,
  scimErrorSchema,
  scimGroupSchema,
  scimListSchema,
  scimPagingParameter,
  scimUserSchema,
} from './openapi.ts';
import type { ScimContext, ScimService } from './service.ts';

/** The SCIM server's Fastify context, typed by its Zod schemas. */
export type ScimApp = Parameters<FastifyPluginAsyncZod>[0];

/** What the routes of one resource need from the server that authenticated the request. */
export interface ScimRouteKit {
  scim: ScimService;
  /** The provisioning context of an authenticated request (a 401 when there is none). */
  contextOf: (request: FastifyRequest) => ScimContext;
  /** Runs a provisioning write and marks the connector's last successful sync before answering. */
  write: <T>(request: FastifyRequest, run: (ctx: ScimContext) => Promise<T>) => Promise<T>;
  /** Answers 201 with the resource, and its Location when it has one. */
  created: (reply: FastifyReply, resource: Record<string, unknown>) => FastifyReply;
}

export const listQuery = z
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
export const itemQuery = listQuery.pick({ attributes: true, excludedAttributes: true }).loose();
// An empty id ("/Users/") is not refused here: it names no resource, the 404 of the preValidation hook.
export const idParams = z.object({ id: z.string().max(200) });

export const scimErrors = {
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
export const asUser = (doc: Record<string, unknown>) => doc as z.output<typeof scimUserSchema>;
export const asGroup = (doc: Record<string, unknown>) => doc as z.output<typeof scimGroupSchema>;
export const deleted = { 204: z.null().describe('No content') };
export const userResponses = { 200: scimUserSchema, ...scimErrors };
export const groupResponses = { 200: scimGroupSchema, ...scimErrors };
export const discoveryResponses = { 200: scimDiscoverySchema, ...scimErrors };
export const discoveryListResponses = {
  200: scimListSchema(scimDiscoverySchema, 'ScimDiscoveryListResponse'),
  ...scimErrors,
};

// Every SCIM route: its own bearer token, and SCIM's media type both ways (RFC 7644 section 3.1).
export const documented = {
  security: [{ scimToken: [] }],
  consumes: ['application/scim+json', 'application/json'],
  produces: ['application/scim+json'],
};
