// What the OpenAPI document shows of the SCIM server's requests and answers (RFC 7643/7644). They are
// the route schemas too, so they say only what is always true: objects stay open (a projection with
// `attributes` leaves attributes out, an extension adds its own under its URN), and the service, not
// these schemas, judges a request's attributes (answering SCIM's `invalidValue` where it must).
import { z } from 'zod';
import { PATCH_OP_SCHEMA } from './schema.ts';

const multiValue = z.looseObject({
  value: z.string().optional(),
  display: z.string().optional(),
  type: z.string().optional(),
  primary: z.boolean().optional(),
});

const meta = z
  .looseObject({
    resourceType: z.string(),
    created: z.string(),
    lastModified: z.string(),
    location: z.string(),
    version: z.string().optional(),
  })
  .describe('Server-set: the resource type, when it was created and last modified, its URL, and its version (an ETag)');

const schemas = z.array(z.string()).describe('The URNs of the schemas the resource uses');

const userAttributes = {
  externalId: z.string().optional().describe("The identity provider's id of the user"),
  userName: z.string().optional().describe('Unique (case-insensitively); in the verified SSO domain'),
  name: z
    .looseObject({
      formatted: z.string().optional(),
      familyName: z.string().optional(),
      givenName: z.string().optional(),
      middleName: z.string().optional(),
      honorificPrefix: z.string().optional(),
      honorificSuffix: z.string().optional(),
    })
    .optional(),
  displayName: z.string().optional(),
  active: z.boolean().optional().describe('false suspends the member'),
  emails: z.array(multiValue).optional(),
};

export const scimUserSchema = z
  .looseObject({
    schemas,
    id: z.string(),
    ...userAttributes,
    groups: z
      .array(
        z.looseObject({
          value: z.string(),
          display: z.string().optional(),
          $ref: z.string().optional(),
          type: z.string().optional(),
        }),
      )
      .optional()
      .describe('Read-only: the groups the user is a member of'),
    meta,
  })
  .describe(
    'SCIM User (RFC 7643 section 4.1), with the enterprise extension under its URN when set. `attributes` and `excludedAttributes` leave attributes out; `schemas`, `id` and `meta` are always returned.',
  )
  .meta({ id: 'ScimUser' });

const groupMember = z.looseObject({
  value: z.string(),
  display: z.string().optional(),
  $ref: z.string().optional(),
  type: z.string().optional(),
});

export const scimGroupSchema = z
  .looseObject({
    schemas,
    id: z.string(),
    externalId: z.string().optional(),
    displayName: z.string().optional(),
    members: z.array(groupMember).optional().describe('Users only'),
    meta,
  })
  .describe(
    'SCIM Group (RFC 7643 section 4.2). `attributes` and `excludedAttributes` leave attributes out; `schemas`, `id` and `meta` are always returned.',
  )
  .meta({ id: 'ScimGroup' });

/**
 * A request body documented by `shape` but read as any object: the service judges the attributes,
 * and takes forms a strict schema would refuse (`emails: ["ann@example.com"]`, say), answering SCIM's
 * `invalidValue` where it must.
 */
function documentedBody(shape: z.ZodType, id: string, description: string) {
  const { $schema: _dialect, ...documented } = z.toJSONSchema(shape, { io: 'input' }) as Record<string, unknown>;
  return z.looseObject({ schemas: schemas.optional() }).meta({ ...documented, id, description });
}

export const scimUserInputSchema = documentedBody(
  z.looseObject({
    schemas: schemas.optional(),
    ...userAttributes,
    userName: z.string().describe('Unique (case-insensitively); in the verified SSO domain'),
  }),
  'ScimUserRequest',
  'A SCIM User to create or replace with (RFC 7643 section 4.1). Server-set attributes (`id`, `meta`, `groups`) are ignored, and so are attributes of no supported schema.',
);

export const scimGroupInputSchema = documentedBody(
  z.looseObject({
    schemas: schemas.optional(),
    externalId: z.string().optional(),
    displayName: z.string(),
    members: z
      .array(groupMember.omit({ $ref: true }))
      .optional()
      .describe('Users only, each named by `value`'),
  }),
  'ScimGroupRequest',
  'A SCIM Group to create or replace with (RFC 7643 section 4.2)',
);

export const scimPatchOpSchema = z
  .looseObject({
    schemas: schemas.optional().describe(PATCH_OP_SCHEMA),
    Operations: z
      .array(
        z.looseObject({
          op: z
            .string()
            .describe('`add`, `remove` or `replace` (any letter case, as some identity providers send `Replace`)'),
          path: z
            .string()
            .optional()
            .describe(
              'An attribute path, optionally with a filter (`members[value eq "..."]`); left out, `value` is an object of attributes',
            ),
          value: z.unknown().optional(),
        }),
      )
      .optional(),
  })
  .describe('SCIM PatchOp (RFC 7644 section 3.5.2)')
  .meta({ id: 'ScimPatchOp' });

export const scimErrorSchema = z
  .looseObject({
    schemas: z.array(z.string()).describe('`urn:ietf:params:scim:api:messages:2.0:Error`'),
    status: z.string().describe('The HTTP status, as a string'),
    scimType: z
      .enum([
        'invalidFilter',
        'tooMany',
        'uniqueness',
        'mutability',
        'invalidSyntax',
        'invalidPath',
        'noTarget',
        'invalidValue',
        'invalidVers',
        'sensitive',
      ])
      .optional(),
    detail: z.string().optional(),
  })
  .describe('SCIM error (RFC 7644 section 3.12)')
  .meta({ id: 'ScimError' });

/** A ListResponse of the given resources (RFC 7644 section 3.4.2). */
export function scimListSchema<T extends z.ZodType>(resource: T, id: string) {
  return z
    .looseObject({
      schemas: z.array(z.string()).describe('`urn:ietf:params:scim:api:messages:2.0:ListResponse`'),
      totalResults: z.number().int().min(0),
      startIndex: z.number().int().min(1),
      itemsPerPage: z.number().int().min(0),
      Resources: z.array(resource),
    })
    .describe('SCIM ListResponse (RFC 7644 section 3.4.2)')
    .meta({ id });
}

/** A discovery document (ServiceProviderConfig, ResourceType, Schema): RFC 7643 sections 5 to 7 define them. */
export const scimDiscoverySchema = z
  .looseObject({ schemas: z.array(z.string()) })
  .describe('SCIM discovery document (RFC 7643 sections 5 to 7)')
  .meta({ id: 'ScimDiscoveryDocument' });

/**
 * A paging query parameter: an integer, as the document says. The value is read (and a bad one
 * refused with `invalidValue`) by the service's parsePaging, as RFC 7644 3.4.2.4 wants.
 */
export function scimPagingParameter(description: string) {
  return z.string().optional().describe(description).meta({ type: 'integer' });
}
