import { randomUUID } from 'node:crypto';
import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import Fastify, { type FastifyError, type FastifyInstance } from 'fastify';
import {
  jsonSchemaTransform,
  jsonSchemaTransformObject,
  serializerCompiler,
  validatorCompiler,
  type ZodTypeProvider,
} from 'fastify-type-provider-zod';
import type { DestinationStream } from 'pino';
import { collectDefaultMetrics, Histogram, Registry } from 'prom-client';
import { z } from 'zod';
import type { Config } from './config.ts';
import type { Database } from './db/database.ts';
import { documentAuthentication } from './http/auth.ts';
import { clientErrorHandler, errorHandler, notFoundHandler } from './http/errors.ts';
import { childLoggerFactory, loggerOptions } from './http/logging.ts';
import { registerJsonBodyParser } from './http/json-body.ts';
import { finishDocument } from './http/openapi.ts';
import { registerInstallLinks } from './modules/install-links/index.ts';
import { registerSso } from './modules/sso/index.ts';
import { registerScim, SCIM_PREFIX, scimFrameworkError } from './modules/scim/index.ts';
import { registerApiKeys } from './modules/api-keys/index.ts';
import { createMembershipCore } from './modules/identity/index.ts';
import { memberInvitations, registerInvitations } from './modules/invitations/index.ts';
import { registerMembers } from './modules/members/index.ts';
import { createOrganizationDirectory, registerOrganizations } from './modules/organizations/index.ts';
import { createTeamDirectory, registerTeams } from './modules/teams/index.ts';
import { createUserDirectory, registerUsers } from './modules/users/index.ts';
import { createRateLimiter, type RateLimiter } from './platform/rate-limiter.ts';
import type { SecretBox } from './platform/secrets.ts';
import { createOutboundClient, type OutboundClient } from './platform/outbound.ts';
import { registerMcpConnections } from './modules/mcp-connections/index.ts';
import { registerMessenger } from './modules/messenger/index.ts';
import { registerMemory } from './modules/memory/index.ts';

export interface AppDependencies {
  config: Config;
  db: Database;
  secrets: SecretBox;
  /** The guarded client for tenant-supplied URLs; built from ALLOWED_PRIVATE_NETWORKS when absent. */
  outbound?: OutboundClient;
  /** Where log lines go (stdout by default); tests pass a stream to read them. */
  logStream?: DestinationStream;
}

/** The spec's tags, in its order, so the OpenAPI groups operations the way the contract does. */
const tags = [
  'System', 'Organizations', 'Invitations', 'API Keys', 'SCIM', 'SSO', 'Members', 'Roles', 'Teams', 'Templates',
  'LLM Providers', 'Workers', 'Worker Runtime', 'Worker Activity', 'Telemetry', 'Admin', 'Users', 'Bootstrap',
  'MCP Connections', 'Install Links', 'Memory', 'Messaging',
];
/** Tags of the spec's list under which this version has no operations yet. */
const tagsWithoutOperations = new Set(['Roles', 'Templates', 'LLM Providers', 'Workers', 'Worker Runtime', 'Worker Activity', 'Telemetry']);

const requestIdPattern = /^[A-Za-z0-9._:-]{1,128}$/;

/** Builds the whole HTTP application from its dependencies; it does not listen. */
export async function buildApp(deps: AppDependencies): Promise<FastifyInstance> {
  const { config, db } = deps;
  const app = Fastify({
    logger: deps.logStream ? { ...loggerOptions(config.logLevel), stream: deps.logStream } : loggerOptions(config.logLevel),
    // A caller's own request id is kept when it is harmless, so traces can be followed across services.
    genReqId: (request) => {
      const incoming = request.headers['x-request-id'];
      return typeof incoming === 'string' && requestIdPattern.test(incoming) ? incoming : randomUUID();
    },
    childLoggerFactory,
    // request.ip (rate limits per client, logs) is the connecting address unless that is a proxy the
    // operator named: then the nearest address in X-Forwarded-For that is not one of theirs.
    trustProxy: config.trustedProxies.length > 0 ? config.trustedProxies : false,
    bodyLimit: 1024 * 1024,
    // A client that starts a request and never finishes its body would hold the connection forever
    // (Fastify's default is no limit): it gets 408 (clientErrorHandler) once this much time has passed.
    // Node looks for such connections every `connectionsCheckingInterval`, so the cut comes up to that
    // much later; the headers get the same time, not Node's own 60 s on top.
    requestTimeout: config.requestTimeoutMs,
    http: {
      headersTimeout: config.requestTimeoutMs,
      connectionsCheckingInterval: Math.min(30_000, Math.max(100, Math.round(config.requestTimeoutMs / 4))),
    },
    return503OnClosing: true,
    routerOptions: { maxParamLength: 500 },
    // Router-level (too long or undecodable path) and parser-level errors answer in the API's error
    // shape too, or in SCIM's under the SCIM server's prefix (where SCIM clients read it).
    frameworkErrors: (error, request, reply) =>
      (request.url.startsWith(`${SCIM_PREFIX}/`) ? scimFrameworkError : errorHandler)(error as FastifyError, request, reply),
    clientErrorHandler,
  }).withTypeProvider<ZodTypeProvider>();

  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  app.setErrorHandler(errorHandler);
  app.setNotFoundHandler(notFoundHandler);
  // JSON only: any other content type is 415 rather than a string that fails validation later.
  app.removeContentTypeParser(['text/plain']);
  registerJsonBodyParser(app);

  const rateLimiter: RateLimiter = createRateLimiter(db);
  const membership = createMembershipCore({ db, invitations: memberInvitations, sessionTtlHours: config.sessionTtlHours });
  const organizationDirectory = createOrganizationDirectory({ db });
  const userDirectory = createUserDirectory({ db });
  const teamDirectory = createTeamDirectory({ db });
  app.decorate('callerResolver', membership);
  app.decorate('authenticationPolicy', { reauthMaxAgeSeconds: config.reauthMaxAgeSeconds });
  app.decorateRequest('caller', null);

  // Set as the request arrives (a synchronous hook: no promise per request); error answers keep it.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done();
  });

  app.addHook('onRoute', documentAuthentication);
  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'orgplane',
        version: 'dev',
        description:
          'Control plane for multi-tenant AI workspaces. Errors are `{error, message?, details?}` with a snake_case `error` ' +
          '(the SCIM server under /scim/v2 answers in SCIM\'s own error shape). On any route: a body sent as another content type than JSON ' +
          'is 415 `unsupported_media_type` (SCIM also takes application/scim+json), and so is JSON labelled with a charset other than UTF-8; ' +
          'a JSON body whose bytes are not UTF-8 is 400 `invalid_request`. A body over 1 MiB is 413 `payload_too_large` ' +
          '(the webhook has its own limits), and 503 `service_unavailable` with `Retry-After` ' +
          'means the database cannot be reached right now (retry; nothing was changed). A request not received whole within ' +
          '`REQUEST_TIMEOUT_MS` (30 s by default) is answered 408 `request_timeout` and its connection closed.\n\n' +
          'Compatibility: everything is under `/v1`, and within it changes are additive only (new routes, new optional request ' +
          'fields, new response fields, new `error`, `category`, `code` and `reason` values), so clients should ignore fields ' +
          'and values they do not know. A change that is not additive would come under a new prefix, with `/v1` kept alongside.',
      },
      servers: [{ url: config.publicUrl }],
      tags: tags.map((name) => (tagsWithoutOperations.has(name) ? { name, description: 'Named by the contract; no operations under it in this version.' } : { name })),
      components: {
        securitySchemes: {
          session: { type: 'http', scheme: 'bearer', description: 'Session token from sign-in, sign-up or bootstrap' },
          apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'Organization API key' },
          scimToken: { type: 'http', scheme: 'bearer', description: 'SCIM token from POST /v1/scim/token (only for /scim/v2)' },
          webhookSecret: {
            type: 'apiKey',
            in: 'header',
            name: 'X-Telegram-Bot-Api-Secret-Token',
            description: 'The per-connection secret this service registered with the platform (setWebhook); only the webhook ingress takes it',
          },
        },
      },
    },
    transform: jsonSchemaTransform,
    transformObject: (document) => finishDocument(jsonSchemaTransformObject(document)),
  });
  await app.register(fastifySwaggerUi, { routePrefix: '/docs', uiConfig: { url: '/openapi.json' } as never });

  registerSystemRoutes(app, db);

  await registerUsers(app, { db, rateLimiter, signUpEnabled: config.signUpEnabled, membership, organizations: organizationDirectory });
  await registerOrganizations(app, { db, membership });
  await registerMembers(app, { membership });
  await registerInvitations(app, { db, membership, users: userDirectory });
  await registerTeams(app, { db, membership });
  await registerApiKeys(app, { db, membership });
  const outbound = deps.outbound ?? createOutboundClient({ allowedPrivateNetworks: config.allowedPrivateNetworks });
  if (!deps.outbound) app.addHook('onClose', async () => outbound.close());
  await registerMcpConnections(app, { db, config, secrets: deps.secrets, outbound, members: membership, teams: teamDirectory });
  // Each domain module registers its routes here with the services it needs.
  await registerInstallLinks(app, {
    db,
    membership,
    organizations: organizationDirectory,
    rateLimiter,
    publicUrl: config.publicUrl,
    desktopDownloadUrl: config.desktopDownloadUrl,
  });
  const sso = await registerSso(app, {
    db,
    organizations: organizationDirectory,
    secrets: deps.secrets,
    dns: { servers: config.dnsServers, timeoutMs: config.dnsTimeoutMs },
    membership,
    users: userDirectory,
    teams: teamDirectory,
    outbound,
    publicUrl: config.publicUrl,
    signIn: { redirectUris: config.ssoRedirectUris, clockSkewSeconds: config.ssoClockSkewSeconds },
  });
  await registerScim(app, { db, membership, users: userDirectory, sso, publicUrl: config.publicUrl });
  await registerMessenger(app, { db, config, secrets: deps.secrets, outbound, membership });
  await registerMemory(app, { db });

  return app;
}

function registerSystemRoutes(app: FastifyInstance, db: Database) {
  const typed = app.withTypeProvider<ZodTypeProvider>();
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
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

  typed.get('/health', {
    schema: {
      tags: ['System'],
      operationId: 'health',
      summary: 'Liveness and database reachability',
      response: {
        200: z.object({ status: z.literal('ok') }),
        503: z.object({ status: z.literal('unavailable') }),
      },
    },
  }, async (request, reply) => {
    try {
      await db.ping();
      return { status: 'ok' as const };
    } catch (error) {
      request.log.warn({ err: error }, 'health check: database unreachable');
      return reply.status(503).send({ status: 'unavailable' as const });
    }
  });

  typed.get('/openapi.json', {
    schema: {
      tags: ['System'],
      operationId: 'openapi',
      summary: 'This OpenAPI 3.1 document (generated from the route schemas)',
      response: { 200: z.looseObject({}).describe('The OpenAPI 3.1 document') },
    },
  }, async () => app.swagger() as unknown as Record<string, unknown>);

  typed.get('/metrics', {
    schema: {
      tags: ['System'],
      operationId: 'metrics',
      summary: 'Prometheus metrics (text exposition format)',
      produces: ['text/plain'],
      // A string sent as text/plain: documented here, never serialized as JSON.
      response: { 200: z.string().describe('Metrics in the Prometheus text format') },
    },
  }, async (_request, reply) => {
    reply.header('content-type', registry.contentType);
    return registry.metrics();
  });
}
