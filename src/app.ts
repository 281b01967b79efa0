import { randomUUID } from 'node:crypto';
import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import Fastify, { type FastifyError, type FastifyInstance } from 'fastify';
import {
  jsonSchemaTransformObject,
  serializerCompiler,
  validatorCompiler,
  type ZodTypeProvider,
} from 'fastify-type-provider-zod';
import type { DestinationStream } from 'pino';
import type { Config } from './config.ts';
import type { Database } from './db/database.ts';
import { documentAuthentication } from './http/auth.ts';
import { registerCors } from './http/cors.ts';
import { registerConsole } from './http/console.ts';
import { createClientErrorHandler } from './http/client-errors.ts';
import { errorHandler, notFoundHandler } from './http/error-handler.ts';
import { childLoggerFactory, loggerOptions } from './http/logging.ts';
import { registerJsonBodyParser } from './http/json-body.ts';
import { noStoreForSecrets } from './http/no-store.ts';
import { finishDocument, routeSchemaTransform } from './http/openapi.ts';
import { compose, organizationErasers } from './composition.ts';
import { registerInstallLinks } from './modules/install-links/index.ts';
import { registerSso } from './modules/sso/index.ts';
import { registerScim, SCIM_PREFIX, scimFrameworkError, scimPreRoutingError } from './modules/scim/index.ts';
import { registerAdmin } from './modules/admin/index.ts';
import { registerApiKeys } from './modules/api-keys/index.ts';
import { registerRoles } from './modules/roles/index.ts';
import { registerInvitations } from './modules/invitations/index.ts';
import { registerMembers } from './modules/members/index.ts';
import { registerOrganizations } from './modules/organizations/index.ts';
import { registerTeams } from './modules/teams/index.ts';
import { registerUsers } from './modules/users/index.ts';
import { startBackgroundWorkers } from './platform/background.ts';
import { createRedirectUriPolicy } from './platform/redirect-uris.ts';
import type { SecretBox } from './platform/secrets.ts';
import { createOutboundClient, type OutboundClient } from './platform/outbound.ts';
import { registerSystemRoutes } from './operations/system-routes.ts';
import { packageVersion } from './version.ts';

export interface AppDependencies {
  config: Config;
  db: Database;
  secrets: SecretBox;
  /** The guarded client for tenant-supplied URLs; built from ALLOWED_PRIVATE_NETWORKS when absent. */
  outbound?: OutboundClient;
  /** Where log lines go (stdout by default); tests pass a stream to read them. */
  logStream?: DestinationStream;
  /** The built console (console/dist by default). */
  consoleDir?: string;
}

/**
 * The spec's tags that have operations in this version, in its order, so the OpenAPI groups operations the
 * way the contract does (a tag is declared once it has an operation: test/system/openapi.test.ts).
 */
const tags = [
  'System',
  'Organizations',
  'Invitations',
  'API Keys',
  'SCIM',
  'SSO',
  'Members',
  'Teams',
  'Roles',
  'Admin',
  'Users',
  'Bootstrap',
  'MCP Connections',
  'Install Links',
  'Memory',
  'Messaging',
  'Audit',
];
/** What the operations under each tag are about (the document shows it above them). */
const tagDescriptions: Record<string, string> = {
  System: 'Health, metrics and this document; no authentication',
  Organizations: "Organizations, the session's active organization, and ownership",
  Invitations: 'Inviting people into an organization by e-mail, and accepting',
  'API Keys': 'Organization API keys (read members and teams without a session)',
  SCIM: 'The SCIM token and connector, and the SCIM 2.0 server under /scim/v2 for identity providers',
  SSO: "The organization's SSO connection and the verification of its e-mail domain",
  Members: 'The members of an organization and their roles',
  Teams: 'Teams of members within an organization, and the role each gives its members',
  Roles: 'The permission catalog, custom roles, and the keys each member holds with where each comes from',
  Admin: 'Instance administration (organization plans)',
  Users: 'Accounts, sign-up, sign-in and sign-out',
  Bootstrap: 'Creating the first user and organization of a new instance',
  'MCP Connections':
    'External MCP servers an organization connects, who may use them, their credentials (API key or OAuth) and plugins',
  'Install Links': 'Install links for the desktop app, and the page behind them',
  Memory: "The caller's memory bank: memories and relevance-ranked search",
  Messaging: "Messaging-bot connections, their queued updates, and the platform's webhook",
  Audit: "The organization's audit log: who changed what, when and from where; search, export and chain verification",
};

const requestIdPattern = /^[A-Za-z0-9._:-]{1,128}$/;

/** Builds the whole HTTP application from its dependencies; it does not listen. */
export async function buildApp(deps: AppDependencies): Promise<FastifyInstance> {
  const { config, db } = deps;
  const app = Fastify({
    logger: deps.logStream
      ? { ...loggerOptions(config.logLevel), stream: deps.logStream }
      : loggerOptions(config.logLevel),
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
    // (Fastify's default is no limit): it gets 408 (createClientErrorHandler) once this much time has passed.
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
      (request.url.startsWith(`${SCIM_PREFIX}/`) ? scimFrameworkError : errorHandler)(
        error as FastifyError,
        request,
        reply,
      ),
    // The HTTP parser's refusals (header block or request line too large, malformed HTTP) too: in SCIM's
    // shape when the raw bytes show a request line under the SCIM server's prefix.
    clientErrorHandler: createClientErrorHandler([{ prefix: SCIM_PREFIX, answer: scimPreRoutingError }]),
  }).withTypeProvider<ZodTypeProvider>();

  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  app.setErrorHandler(errorHandler);
  // Paths no route claims: the console's HTML for a browser's GET, the API's JSON 404 for the rest.
  app.setNotFoundHandler(registerConsole(app, notFoundHandler, deps.consoleDir));
  // JSON only: any other content type is 415 rather than a string that fails validation later.
  app.removeContentTypeParser(['text/plain']);
  registerJsonBodyParser(app);

  const outbound = deps.outbound ?? createOutboundClient({ allowedPrivateNetworks: config.allowedPrivateNetworks });
  if (!deps.outbound) app.addHook('onClose', async () => outbound.close());
  // Every shared service and every module with background work, built once (composition.ts).
  const services = await compose({ config, db, secrets: deps.secrets, outbound, log: app.log });
  const { membership, rateLimiter, organizations: organizationDirectory, users: userDirectory } = services;
  app.decorate('callerResolver', membership);
  app.decorate('authenticationPolicy', { reauthMaxAgeSeconds: config.reauthMaxAgeSeconds });
  app.decorateRequest('caller', null);

  // Set as the request arrives (a synchronous hook: no promise per request); error answers keep it.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done();
  });

  // Browser pages on the listed origins may call the API (never the webhook ingress, nor SCIM, which
  // is outside /v1); no origin is listed by default.
  registerCors(app, { allowedOrigins: config.corsAllowedOrigins, excludedPrefixes: ['/v1/webhooks/'] });

  app.addHook('onRoute', documentAuthentication);
  app.addHook('onRoute', noStoreForSecrets);
  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'orgplane',
        version: packageVersion,
        license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
        description:
          'Control plane for multi-tenant AI workspaces. Errors are `{error, message?, details?}` with a snake_case `error` ' +
          "(the SCIM server under /scim/v2 answers in SCIM's own error shape). On any route: a body sent as another content type than JSON " +
          'is 415 `unsupported_media_type` (SCIM also takes application/scim+json), and so is JSON labelled with a charset other than UTF-8; ' +
          'a JSON body whose bytes are not UTF-8 is 400 `invalid_request`. A body over 1 MiB is 413 `payload_too_large` ' +
          '(the webhook has its own limits), and 503 `service_unavailable` with `Retry-After` ' +
          'means the database cannot be reached right now (retry; nothing was changed). A request not received whole within ' +
          '`REQUEST_TIMEOUT_MS` (30 s by default) is answered 408 `request_timeout` and its connection closed. ' +
          'Browser pages on the origins listed in `CORS_ALLOWED_ORIGINS` (none by default) may call the /v1 routes (not the webhook ingress), ' +
          '/health, /ready and /openapi.json: a preflight is answered 204 without routing, and no `Access-Control-Allow-Credentials` is sent ' +
          '(the API takes bearer headers, never cookies).\n\n' +
          'Compatibility: everything is under `/v1`, and within it changes are additive only (new routes, new optional request ' +
          'fields, new response fields, new `error`, `category`, `code` and `reason` values), so clients should ignore fields ' +
          'and values they do not know. A change that is not additive would come under a new prefix, with `/v1` kept alongside.',
      },
      servers: [{ url: config.publicUrl }],
      tags: tags.map((name) => ({ name, description: tagDescriptions[name] })),
      components: {
        securitySchemes: {
          session: { type: 'http', scheme: 'bearer', description: 'Session token from sign-in, sign-up or bootstrap' },
          apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'Organization API key' },
          scimToken: {
            type: 'http',
            scheme: 'bearer',
            description: 'SCIM token from POST /v1/scim/token (only for /scim/v2)',
          },
          webhookSecret: {
            type: 'apiKey',
            in: 'header',
            name: 'X-Telegram-Bot-Api-Secret-Token',
            description:
              'The per-connection secret this service registered with the platform (setWebhook); only the webhook ingress takes it',
          },
        },
      },
    },
    transform: routeSchemaTransform,
    transformObject: (document) => finishDocument(jsonSchemaTransformObject(document)),
  });
  await app.register(fastifySwaggerUi, { routePrefix: '/docs', uiConfig: { url: '/openapi.json' } as never });

  // Readiness asks whether this process's workers run: they start last, below.
  const workerState: { running: (() => boolean) | null } = { running: null };
  registerSystemRoutes(app, { db, workers: () => (config.runWorkers ? (workerState.running?.() ?? false) : null) });

  // First: its hook records the refused calls of every route registered after it.
  await services.audit.register(app);
  // Where a sign-in may send its one-time code: SSO sign-in, and the desktop app's (the same, but the console's pages).
  const redirectUris = createRedirectUriPolicy({
    publicUrl: config.publicUrl,
    listenPort: config.port,
    extra: config.ssoRedirectUris,
  });
  await registerUsers(app, {
    db,
    rateLimiter,
    signUpEnabled: config.signUpEnabled,
    signUpAttemptsPerAddress: config.signUpAttemptsPerAddress,
    membership,
    organizations: organizationDirectory,
    passwordSignInPolicy: services.passwordSignInPolicy,
    redirectUriAllowed: redirectUris.desktopSignIn,
  });
  await registerOrganizations(app, { db, membership, erasers: organizationErasers, defaultPlan: config.defaultPlan });
  const { removalHooks } = services;
  const { roleGrants } = services;
  await registerRoles(app, { db, membership });
  await registerMembers(app, { membership, removalHooks, roleGrants });
  await registerInvitations(app, {
    db,
    membership,
    users: userDirectory,
    organizations: organizationDirectory,
    mailer: services.mailer,
    publicUrl: config.publicUrl,
    roleGrants,
  });
  app.addHook('onClose', async () => services.mailer.close());
  await registerTeams(app, { db, membership, roleGrants });
  await registerApiKeys(app, { db, membership, roleGrants });
  await services.mcpConnections.register(app);
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
    teams: services.teams,
    roleGrants,
    outbound,
    publicUrl: config.publicUrl,
    signIn: {
      redirectUriAllowed: redirectUris.ssoSignIn,
      clockSkewSeconds: config.ssoClockSkewSeconds,
      startAttemptsPerAddress: config.ssoStartAttemptsPerAddress,
    },
    rateLimiter,
  });
  await registerScim(app, { db, membership, users: userDirectory, sso, publicUrl: config.publicUrl, removalHooks });
  await services.messenger.register(app);
  await services.memory.register(app);
  await registerAdmin(app, { db, organizations: organizationDirectory, users: userDirectory });

  // The same list `orgplane worker` starts.
  if (config.runWorkers) {
    const workers = startBackgroundWorkers(services.workers, app.log);
    workerState.running = () => workers.running;
    app.addHook('onClose', async () => workers.stop());
  }

  return app;
}
