// The instance's own audit log under /v1/admin: the audit module's chain of events that belong to no
// organization (every instance-administration change, and sign-ins of unknown accounts), listed,
// exported and verified as an organization's log is.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { commonErrorResponses } from '../../http/schemas.ts';
import {
  auditExportDescription,
  auditExportQuery,
  auditListQuery,
  auditPageOf,
  auditPageSchema,
  auditQueryOf,
  auditVerificationSchema,
  checkAuditRange,
  type createInstanceAuditLog,
  sendAuditExport,
} from '../audit/index.ts';
import { adminCallers, adminOnly } from './routes.ts';

export const adminAuditRoutes: FastifyPluginAsyncZod<{ log: ReturnType<typeof createInstanceAuditLog> }> = async (
  app,
  { log },
) => {
  app.get(
    '/v1/admin/audit-events',
    {
      onRequest: adminOnly,
      schema: {
        tags: ['Admin'],
        operationId: 'listInstanceAuditEvents',
        summary: "The instance's own audit events, newest first",
        description:
          adminCallers +
          'Events that belong to no organization: what instance administrators changed (an organization’s plan is in its own log too), ' +
          'and failed sign-ins of unknown accounts. Filters as in listAuditEvents.',
        querystring: auditListQuery,
        response: { 200: auditPageSchema, ...commonErrorResponses },
      },
    },
    async (request) => {
      const { limit, query } = auditQueryOf(request.query);
      return auditPageOf(await log.list(query, limit));
    },
  );

  app.get(
    '/v1/admin/audit-events/export',
    {
      onRequest: adminOnly,
      schema: {
        tags: ['Admin'],
        operationId: 'exportInstanceAuditEvents',
        summary: "Export the instance's own audit events in a time range, oldest first, as NDJSON or CSV",
        description: adminCallers + auditExportDescription,
        querystring: auditExportQuery,
        produces: ['application/x-ndjson', 'text/csv'],
        response: { 200: z.string().describe('The events, one per line'), ...commonErrorResponses },
      },
    },
    async (request, reply) => {
      const { format, since, until } = request.query;
      checkAuditRange({ since, until });
      return sendAuditExport(reply, log.exportText({ since, until }, format), format, 'instance-audit-events');
    },
  );

  app.get(
    '/v1/admin/audit-events/verify',
    {
      onRequest: adminOnly,
      schema: {
        tags: ['Admin'],
        operationId: 'verifyInstanceAuditEvents',
        summary: "Check the instance's audit hash chain and report the first broken link",
        description: adminCallers,
        response: { 200: auditVerificationSchema, ...commonErrorResponses },
      },
    },
    async () => log.verify(),
  );
};
