// The discovery endpoints (RFC 7644 section 4): what this service provider supports, its resource
// types and schemas; and /Me, which it does not support.
import { publicAccess } from '../../http/auth.ts';
import { allSchemas, listResponse, resourceTypeDocuments, schemaDocument, serviceProviderConfig } from './documents.ts';
import { ScimError } from './errors.ts';
import { discoveryListResponses, discoveryResponses, documented, idParams, type ScimApp } from './route-schemas.ts';

export function registerDiscoveryRoutes(app: ScimApp, base: string, documentationUri: string | undefined): void {
  app.get(
    '/ServiceProviderConfig',
    {
      schema: {
        tags: ['SCIM'],
        operationId: 'scimServiceProviderConfig',
        ...publicAccess,
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
        ...publicAccess,
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
        ...publicAccess,
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
        ...publicAccess,
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
        ...publicAccess,
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
}
