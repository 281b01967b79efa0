import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { authenticate, callerOf, writeContextOf } from '../../http/auth.ts';
import {
  commonErrorResponses,
  isoTimestamp,
  secretString,
  timestampSchema,
  errorResponse,
} from '../../http/schemas.ts';
import type { ConnectorRow, ScimService } from './service.ts';
import { httpErrors } from '../../http/error-codes.ts';
import { scimErrors } from './error-codes.ts';

const connectionSchema = z.object({
  id: z.string(),
  providerId: z.string().describe('The SSO connection this connector provisions for'),
  organizationId: z.string(),
  groupMappingMode: z
    .string()
    .describe(
      '`metadata_only`, the only mode of this version: groups are kept as SCIM metadata and not mapped to teams. Other values may come; treat an unknown one like `metadata_only`.',
    ),
  createdAt: timestampSchema,
  updatedAt: timestampSchema,
});

const healthSchema = z
  .object({
    unresolvedFailureCount: z
      .number()
      .int()
      .min(0)
      .describe('Failed provisioning requests since the last successful one'),
    lastFailureAt: timestampSchema.optional(),
    lastFailureAction: z.string().optional().describe('e.g. create_user, patch_user, delete_group'),
    lastFailureMessage: z.string().optional(),
    nextRetryAt: timestampSchema.optional(),
    lastSuccessfulSyncAt: timestampSchema.optional(),
  })
  .describe('Fields without a value yet are left out');

const connectorSchema = z
  .object({
    baseUrl: z.string().describe('SCIM 2.0 base URL of this server: PUBLIC_URL/scim/v2'),
    ssoReady: z.boolean(),
    connection: connectionSchema,
    scimToken: secretString(
      'The new bearer token for the SCIM server; shown only in this response. The previous token stopped working.',
    ),
    health: healthSchema,
  })
  .meta({ id: 'ScimConnector' });

function connectionOf(row: ConnectorRow) {
  return {
    id: row.id,
    providerId: row.provider_id,
    organizationId: row.organization_id,
    groupMappingMode: row.group_mapping_mode,
    createdAt: isoTimestamp(row.created_at),
    updatedAt: isoTimestamp(row.updated_at),
  };
}

function healthOf(row: ConnectorRow) {
  return {
    unresolvedFailureCount: row.unresolved_failure_count,
    ...(row.last_failure_at ? { lastFailureAt: isoTimestamp(row.last_failure_at) } : {}),
    ...(row.last_failure_action ? { lastFailureAction: row.last_failure_action } : {}),
    ...(row.last_failure_message ? { lastFailureMessage: row.last_failure_message } : {}),
    ...(row.next_retry_at ? { nextRetryAt: isoTimestamp(row.next_retry_at) } : {}),
    ...(row.last_successful_sync_at ? { lastSuccessfulSyncAt: isoTimestamp(row.last_successful_sync_at) } : {}),
  };
}

const ownerOrAdmin = authenticate({ requires: 'scim.manage', withoutOrganization: 'organization_not_found' });

/** The session-authenticated SCIM management routes: token rotation and the connector view. */
export const scimManagementRoutes: FastifyPluginAsyncZod<{ scim: ScimService }> = async (app, { scim }) => {
  app.post(
    '/v1/scim/token',
    {
      onRequest: authenticate({
        requires: 'scim.manage',
        withoutOrganization: 'organization_not_found',
        freshAuthentication: true,
      }),
      schema: {
        tags: ['SCIM'],
        operationId: 'rotateScimToken',
        summary: 'Create or rotate the organization SCIM token',
        description:
          'No request body. Owners and admins of the active organization. Creates the SCIM provisioning connector if it does not exist, ' +
          'then issues a new bearer token for the SCIM server at `baseUrl`: the new token works at once and the previous one stops ' +
          'working at once. Only a hash of the token is stored. Always 200 (creation and rotation alike). ' +
          'Needs an SSO connection with a verified domain, else 409 `sso_required`.',
        response: {
          200: connectorSchema.describe(
            'The SCIM connector (created if it did not exist) with a freshly rotated `scimToken`, shown only in this response; the previous token stops working',
          ),
          ...commonErrorResponses,
          404: errorResponse([httpErrors.organization_not_found], 'the session has no active organization'),
          409: errorResponse([scimErrors.sso_required], undefined, {
            description: 'sso_required (with `message`): verify the SSO domain first',
          }),
        },
      },
    },
    async (request) => {
      const { connector, token, ssoReady } = await scim.rotateToken(writeContextOf(request));
      return {
        baseUrl: scim.baseUrl,
        ssoReady,
        connection: connectionOf(connector),
        scimToken: token,
        health: healthOf(connector),
      };
    },
  );

  app.get(
    '/v1/scim/connection',
    {
      onRequest: ownerOrAdmin,
      schema: {
        tags: ['SCIM'],
        operationId: 'getScimConnection',
        summary: 'The organization SCIM connector and its health (no token)',
        response: {
          200: connectorSchema.omit({ scimToken: true }).meta({ id: 'ScimConnectorView' }),
          401: commonErrorResponses[401],
          403: commonErrorResponses[403],
          404: errorResponse([httpErrors.organization_not_found, scimErrors.scim_connection_not_found], undefined, {
            description: 'organization_not_found, or scim_connection_not_found: no token was ever created',
          }),
        },
      },
    },
    async (request) => {
      const { connector, ssoReady } = await scim.getConnection(callerOf(request));
      return { baseUrl: scim.baseUrl, ssoReady, connection: connectionOf(connector), health: healthOf(connector) };
    },
  );
};
