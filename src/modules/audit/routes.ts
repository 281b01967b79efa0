// HTTP of the audit log: list, export, verify (owners and admins of the organization).
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { authenticate, callerOf } from '../../http/auth.ts';
import { commonErrorResponses } from '../../http/schemas.ts';
import { organizationNotFoundResponse, organizationParams } from '../identity/index.ts';
import {
  auditExportDescription,
  auditExportQuery,
  auditListQuery,
  auditPageOf,
  auditPageSchema,
  auditQueryOf,
  auditVerificationSchema,
  checkAuditRange,
  sendAuditExport,
} from './schemas.ts';
import type { AuditService } from './service.ts';

export const auditRoutes: FastifyPluginAsyncZod<{ audit: AuditService }> = async (app, { audit }) => {
  app.get(
    '/v1/orgs/:organizationId/audit-events',
    {
      onRequest: authenticate({ requires: 'audit.view', judgedBy: 'service' }),
      schema: {
        tags: ['Audit'],
        operationId: 'listAuditEvents',
        summary: "The organization's audit events, newest first (owners and admins)",
        description:
          'Every change made through the API, SCIM or the CLI, recorded in its own transaction; calls refused with 403 (`request.denied`, outcome `denied`); ' +
          "sign-ins and failed sign-ins of the organization's members (a failure for an unknown e-mail, and sign-ups, belong to no organization and are not listed here). " +
          '`actor` is an id or e-mail, `action` an action or its prefix, `target` an id; `since` is inclusive, `until` exclusive; filters combine with AND. ' +
          'A member gets 403; a caller of another organization gets 404, as for a missing organization.',
        params: organizationParams,
        querystring: auditListQuery,
        response: {
          200: auditPageSchema,
          ...commonErrorResponses,
          404: organizationNotFoundResponse,
        },
      },
    },
    async (request) => {
      const { limit, query } = auditQueryOf(request.query);
      return auditPageOf(await audit.list(callerOf(request), request.params.organizationId, query, limit));
    },
  );

  app.get(
    '/v1/orgs/:organizationId/audit-events/export',
    {
      onRequest: authenticate({ requires: 'audit.export', judgedBy: 'service' }),
      schema: {
        tags: ['Audit'],
        operationId: 'exportAuditEvents',
        summary:
          "Export the organization's audit events in a time range, oldest first, streamed as NDJSON or CSV (owners and admins)",
        description: auditExportDescription,
        params: organizationParams,
        querystring: auditExportQuery,
        produces: ['application/x-ndjson', 'text/csv'],
        response: {
          200: z.string().describe('The events, one per line'),
          ...commonErrorResponses,
          404: organizationNotFoundResponse,
        },
      },
    },
    async (request, reply) => {
      const { format, since, until } = request.query;
      checkAuditRange({ since, until });
      await audit.requireAuditor(callerOf(request), request.params.organizationId);
      const pages = audit.exportText(request.params.organizationId, { since, until }, format);
      return sendAuditExport(reply, pages, format, 'audit-events');
    },
  );

  app.get(
    '/v1/orgs/:organizationId/audit-events/verify',
    {
      onRequest: authenticate({ requires: 'audit.view', judgedBy: 'service' }),
      schema: {
        tags: ['Audit'],
        operationId: 'verifyAuditEvents',
        summary: "Check the organization's audit hash chain and report the first broken link (owners and admins)",
        params: organizationParams,
        response: {
          200: auditVerificationSchema,
          ...commonErrorResponses,
          404: organizationNotFoundResponse,
        },
      },
    },
    async (request) => audit.verify(callerOf(request), request.params.organizationId),
  );
};
