// The routes an operator's tooling calls, without authentication: liveness (/health), readiness
// (/ready), the OpenAPI document and Prometheus metrics. None of them says anything about a tenant.
import { publicAccess } from '../http/auth.ts';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { collectDefaultMetrics, Histogram, Registry } from 'prom-client';
import { z } from 'zod';
import type { Database } from '../db/database.ts';
import { pendingMigrations } from '../db/migrate.ts';
import { jobFailures, jobRuns } from '../platform/job-metrics.ts';
import { packageVersion } from '../version.ts';
import { registerOperatorMetrics } from './metrics.ts';

export interface SystemRouteDeps {
  db: Database;
  /** Whether this process's background workers run; null when it is not configured to run any. */
  workers(): boolean | null;
}

const readinessChecks = z.object({
  database: z.enum(['ok', 'unreachable']).describe('Whether the database answers a query'),
  migrations: z
    .enum(['ok', 'pending', 'unknown'])
    .describe(
      '`pending`: a migration file of this build is not applied yet; `unknown` while the database is unreachable',
    ),
  workers: z
    .enum(['ok', 'stopped', 'not_configured'])
    .describe('`not_configured`: this process runs no workers (RUN_WORKERS=false), which is not a failure'),
});

export function registerSystemRoutes(app: FastifyInstance, deps: SystemRouteDeps) {
  const { db } = deps;
  const typed = app.withTypeProvider<ZodTypeProvider>();
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  registry.registerMetric(jobRuns);
  registry.registerMetric(jobFailures);
  const operatorMetrics = registerOperatorMetrics(registry, db);
  const requestDuration = new Histogram({
    name: 'orgplane_http_request_duration_seconds',
    help: 'HTTP request duration by route pattern and status',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });
  // One labelled series per method, route pattern and status, looked up once rather than labelled
  // (hashed) on every request.
  const series = new Map<string, { observe(seconds: number): void }>();
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched';
    const key = `${request.method} ${route} ${reply.statusCode}`;
    let observer = series.get(key);
    if (!observer) {
      observer = requestDuration.labels({ method: request.method, route, status: String(reply.statusCode) });
      series.set(key, observer);
    }
    observer.observe(reply.elapsedTime / 1000);
    done();
  });

  typed.get(
    '/health',
    {
      schema: {
        tags: ['System'],
        operationId: 'health',
        ...publicAccess,
        summary: 'Liveness: the process is up and its database answers; and its version',
        description:
          'No authentication. 200 `{status: "ok", version}` when the process serves HTTP and its database answers a query; 503 `{status: "unavailable", version}` when the database cannot be reached (the process itself is alive). `version` is this build\'s (package.json). Whether the instance should take traffic (migrations applied, workers running) is `GET /ready`.',
        response: {
          200: z.object({ status: z.literal('ok'), version: z.string() }),
          503: z.object({ status: z.literal('unavailable'), version: z.string() }),
        },
      },
    },
    async (request, reply) => {
      try {
        await db.ping();
        return { status: 'ok' as const, version: packageVersion };
      } catch (error) {
        request.log.warn({ err: error }, 'health check: database unreachable');
        return reply.status(503).send({ status: 'unavailable' as const, version: packageVersion });
      }
    },
  );

  typed.get(
    '/ready',
    {
      schema: {
        tags: ['System'],
        operationId: 'ready',
        ...publicAccess,
        summary: 'Readiness: database reachable, every migration applied, workers running',
        description:
          'No authentication. 200 `{status: "ok", checks}` when the database answers, every migration file of this build is applied, and, in a process configured to run the background workers (RUN_WORKERS), they are running; otherwise 503 `{status: "unavailable", checks}` naming the check that failed. For load balancers and orchestrators deciding whether to send this process traffic.',
        response: {
          200: z.object({ status: z.literal('ok'), checks: readinessChecks }),
          503: z.object({ status: z.literal('unavailable'), checks: readinessChecks }),
        },
      },
    },
    async (request, reply) => {
      const checks: z.infer<typeof readinessChecks> = {
        database: 'ok',
        migrations: 'ok',
        workers: 'not_configured',
      };
      try {
        await db.ping();
        checks.migrations = (await pendingMigrations(db)).length === 0 ? 'ok' : 'pending';
      } catch (error) {
        request.log.warn({ err: error }, 'readiness check: database unreachable');
        checks.database = 'unreachable';
        checks.migrations = 'unknown';
      }
      const workers = deps.workers();
      if (workers !== null) checks.workers = workers ? 'ok' : 'stopped';
      const ready = checks.database === 'ok' && checks.migrations === 'ok' && checks.workers !== 'stopped';
      if (ready) return { status: 'ok' as const, checks };
      return reply.status(503).send({ status: 'unavailable' as const, checks });
    },
  );

  typed.get(
    '/openapi.json',
    {
      schema: {
        tags: ['System'],
        operationId: 'openapi',
        ...publicAccess,
        summary: 'This OpenAPI 3.1 document (generated from the route schemas)',
        description:
          "No authentication. The document describing every route of this server, generated from the schemas the routes validate with; `servers` names this server's `PUBLIC_URL`. Browsable at `/docs`.",
        response: { 200: z.looseObject({}).describe('The OpenAPI 3.1 document') },
      },
    },
    async () => app.swagger() as unknown as Record<string, unknown>,
  );

  typed.get(
    '/metrics',
    {
      schema: {
        tags: ['System'],
        operationId: 'metrics',
        ...publicAccess,
        summary: 'Prometheus metrics (text exposition format)',
        description:
          "No authentication (expose it only where the scraper can reach it). Process metrics, `orgplane_http_request_duration_seconds` by method, route pattern and status, the background workers' rounds and failed rounds (`orgplane_background_job_runs_total`, `orgplane_background_job_failures_total` by worker), the database pool of this process, and instance-wide state read from the database at scrape time: messenger deliveries queued, the age of the oldest due one and the dead-lettered, the audit streams' lag and the dead-lettered streams, MCP credentials by health. Counts only: no organization, user or URL appears in a label (docs/operations.md lists the metrics).",
        produces: ['text/plain'],
        // A string sent as text/plain: documented here, never serialized as JSON.
        response: { 200: z.string().describe('Metrics in the Prometheus text format') },
      },
    },
    async (_request, reply) => {
      await operatorMetrics.refresh();
      reply.header('content-type', registry.contentType);
      return registry.metrics();
    },
  );
}
