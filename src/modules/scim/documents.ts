// Discovery documents (RFC 7644 section 4) and list responses with paging (3.4.2.4).
import { ScimError } from './errors.ts';
import {
  ENTERPRISE_USER_SCHEMA,
  GROUP_SCHEMA,
  LIST_RESPONSE_SCHEMA,
  USER_SCHEMA,
  enterpriseUserSchema,
  groupSchema,
  userSchema,
  type SchemaDef,
} from './schema.ts';

export const DEFAULT_PAGE_SIZE = 100;
export const MAX_PAGE_SIZE = 200;

export function serviceProviderConfig(baseUrl: string, documentationUri?: string) {
  return {
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig'],
    ...(documentationUri ? { documentationUri } : {}),
    patch: { supported: true },
    bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
    filter: { supported: true, maxResults: MAX_PAGE_SIZE },
    changePassword: { supported: false },
    sort: { supported: false },
    etag: { supported: false },
    authenticationSchemes: [
      {
        type: 'oauthbearertoken',
        name: 'Bearer token',
        description: 'The SCIM token from POST /v1/scim/token, sent as Authorization: Bearer <token>',
        primary: true,
      },
    ],
    meta: { resourceType: 'ServiceProviderConfig', location: `${baseUrl}/ServiceProviderConfig` },
  };
}

export const allSchemas: SchemaDef[] = [userSchema, enterpriseUserSchema, groupSchema];

export function schemaDocument(schema: SchemaDef, baseUrl: string) {
  return {
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:Schema'],
    id: schema.id,
    name: schema.name,
    description: schema.description,
    attributes: schema.attributes,
    meta: { resourceType: 'Schema', location: `${baseUrl}/Schemas/${schema.id}` },
  };
}

export function resourceTypeDocuments(baseUrl: string) {
  return [
    {
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:ResourceType'],
      id: 'User',
      name: 'User',
      endpoint: '/Users',
      description: 'Members of the organization',
      schema: USER_SCHEMA,
      schemaExtensions: [{ schema: ENTERPRISE_USER_SCHEMA, required: false }],
      meta: { resourceType: 'ResourceType', location: `${baseUrl}/ResourceTypes/User` },
    },
    {
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:ResourceType'],
      id: 'Group',
      name: 'Group',
      endpoint: '/Groups',
      description: 'Groups of the identity provider',
      schema: GROUP_SCHEMA,
      schemaExtensions: [],
      meta: { resourceType: 'ResourceType', location: `${baseUrl}/ResourceTypes/Group` },
    },
  ];
}

export interface Paging {
  /** 1-based index of the first result */
  startIndex: number;
  /** results per page; 0 asks only for totalResults */
  count: number;
}

function integerParam(raw: unknown, name: string): number | undefined {
  if (raw === undefined || raw === '') return undefined;
  const text = String(raw).trim();
  if (!/^-?\d{1,15}$/.test(text)) throw new ScimError(400, `${name} must be an integer`, 'invalidValue');
  return Number(text);
}

/** RFC 7644 3.4.2.4: startIndex below 1 counts as 1, a negative count as 0; we cap count at MAX_PAGE_SIZE. */
export function parsePaging(query: { startIndex?: unknown; count?: unknown }): Paging {
  const startIndex = Math.max(1, integerParam(query.startIndex, 'startIndex') ?? 1);
  const count = Math.min(MAX_PAGE_SIZE, Math.max(0, integerParam(query.count, 'count') ?? DEFAULT_PAGE_SIZE));
  return { startIndex, count };
}

export function listResponse<T>(resources: T[], totalResults: number, paging: Paging) {
  return {
    schemas: [LIST_RESPONSE_SCHEMA],
    totalResults,
    startIndex: paging.startIndex,
    itemsPerPage: resources.length,
    Resources: resources,
  };
}
