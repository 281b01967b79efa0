// The SCIM 2.0 server (RFC 7643/7644) under /scim/v2, authenticated by the organization's SCIM token.
// It is its own Fastify context: it accepts application/scim+json, answers in SCIM's error format
// (status as a string, scimType), and counts every failed provisioning request in the connector's health.
// The routes of each resource are in discovery-routes.ts, user-routes.ts and group-routes.ts; SCIM's
// media type and error shape in wire.ts.
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { bearerToken } from '../../http/auth.ts';
import { ApiError } from '../../http/errors.ts';
import { utf8BodyText } from '../../http/json-body.ts';
import { registerDiscoveryRoutes } from './discovery-routes.ts';
import { ScimError, scimErrorBody } from './errors.ts';
import { registerGroupRoutes } from './group-routes.ts';
import type { ScimRouteKit } from './route-schemas.ts';
import type { ScimConnector, ScimContext, ScimService } from './service.ts';
import { registerUserRoutes } from './user-routes.ts';
import { failureBody, MAX_BODY_DEPTH, nestsDeeperThan, SCIM_CONTENT_TYPE } from './wire.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Name of the provisioning action, for the connector's health (set on writing routes). */
    scimAction?: string;
  }
}

/** The context of this request's provisioning writes: the connector acts, through this request. */
function scimContext(connector: ScimConnector, request: FastifyRequest): ScimContext {
  const userAgent = request.headers['user-agent'];
  return {
    ...connector,
    actor: { kind: 'scim', ...connector },
    requestId: request.id,
    clientAddress: request.ip,
    userAgent: typeof userAgent === 'string' ? userAgent : null,
  };
}

export const scimServerRoutes: FastifyPluginAsyncZod<{ scim: ScimService; documentationUri?: string }> = async (
  app,
  { scim, documentationUri },
) => {
  const contexts = new WeakMap<FastifyRequest, ScimContext>();
  const contextOf = (request: FastifyRequest): ScimContext => {
    const ctx = contexts.get(request);
    if (!ctx) throw new ScimError(401, 'A valid SCIM bearer token is required');
    return ctx;
  };

  // Identity providers send application/scim+json; it and application/json are parsed alike, in this context only.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser(
    ['application/scim+json', 'application/json'],
    { parseAs: 'buffer' },
    (request, body, done) => {
      // Some clients label a body-less DELETE with the SCIM type; no body is not a malformed one.
      if ((body as Buffer).length === 0) return done(null, undefined);
      const text = utf8BodyText(request, body as Buffer);
      if (text instanceof ApiError)
        return done(text.statusCode === 400 ? new ScimError(400, text.message, 'invalidSyntax') : text, undefined);
      if (nestsDeeperThan(text, MAX_BODY_DEPTH)) {
        return done(
          new ScimError(400, `The body nests objects and arrays deeper than ${MAX_BODY_DEPTH} levels`, 'invalidSyntax'),
          undefined,
        );
      }
      parseJson(request, text, done);
    },
  );

  app.addHook('onRequest', async (request, reply) => {
    const connector = await scim.authenticate(bearerToken(request));
    if (!connector) {
      reply.header('www-authenticate', 'Bearer realm="scim"');
      throw new ScimError(401, 'A valid SCIM bearer token is required');
    }
    contexts.set(request, scimContext(connector, request));
  });

  app.addHook('onSend', async (_request, reply, payload) => {
    if (String(reply.getHeader('content-type') ?? '').startsWith('application/json'))
      reply.header('content-type', SCIM_CONTENT_TYPE);
    return payload;
  });

  app.setErrorHandler(async (error: FastifyError, request, reply) => {
    const body = failureBody(error);
    if (body.status >= 500) request.log.error({ err: error }, 'SCIM request failed');
    const ctx = contexts.get(request);
    const action = request.routeOptions.config.scimAction;
    if (ctx && action) {
      // A failure is counted even when the database is what failed; a second failure must not hide the first.
      await scim
        .recordFailure(ctx, action, `${body.status} ${body.detail}`)
        .catch((recordError) => request.log.warn({ err: recordError }, 'could not record SCIM failure'));
    }
    reply.status(body.status).header('content-type', SCIM_CONTENT_TYPE);
    return reply.send(scimErrorBody(body.status, body.detail, body.scimType));
  });

  const noEndpoint = (request: FastifyRequest) =>
    new ScimError(404, `No SCIM endpoint ${request.method} ${request.url.split('?')[0]}`);

  app.setNotFoundHandler(async (request, reply) => {
    // Unknown SCIM paths still need a valid token to learn anything.
    if (!(await scim.authenticate(bearerToken(request)))) {
      reply.header('www-authenticate', 'Bearer realm="scim"');
      return reply
        .status(401)
        .header('content-type', SCIM_CONTENT_TYPE)
        .send(scimErrorBody(401, 'A valid SCIM bearer token is required'));
    }
    return reply
      .status(404)
      .header('content-type', SCIM_CONTENT_TYPE)
      .send(scimErrorBody(404, noEndpoint(request).message));
  });

  // "/Users/" reaches "/Users/:id" with an empty id: like any path that names nothing, a 404.
  app.addHook('preValidation', async (request) => {
    if ((request.params as { id?: unknown } | undefined)?.id === '') throw noEndpoint(request);
  });

  /** Runs a provisioning write and marks the connector's last successful sync before answering. */
  const write = async <T>(request: FastifyRequest, run: (ctx: ScimContext) => Promise<T>): Promise<T> => {
    const ctx = contextOf(request);
    const result = await run(ctx);
    await scim.recordSuccess(ctx);
    return result;
  };

  const created = (reply: FastifyReply, resource: Record<string, unknown>) => {
    const location = (resource.meta as { location?: string } | undefined)?.location;
    if (location) reply.header('location', location);
    return reply.status(201).send(resource);
  };

  // What every SCIM operation shares, as the description of those that need no more.
  app.addHook('onRoute', (route) => {
    if (route.schema && !route.schema.hide && !route.schema.description) {
      route.schema.description =
        "Authenticated by the organization's SCIM token (`Authorization: Bearer opscim_...`, from `POST /v1/scim/token`). Bodies and answers are `application/scim+json`; errors are SCIM errors (RFC 7644 section 3.12).";
    }
  });

  const kit: ScimRouteKit = { scim, contextOf, write, created };
  registerDiscoveryRoutes(app, scim.baseUrl, documentationUri);
  registerUserRoutes(app, kit);
  registerGroupRoutes(app, kit);
};
