import type { FastifyRequest, onRequestAsyncHookHandler, RouteOptions } from 'fastify';
import type { CallerContext, WriteContext } from '../platform/write-context.ts';
import type { Caller, CallerResolver } from './caller.ts';
import { isPermissionKey, PERMISSION_EXTENSION, type Requirement } from '../platform/permissions.ts';
import {
  forbidden,
  missingPermission,
  notAnActiveMember,
  organizationNotFound,
  reauthRequired,
  unauthorized,
} from './errors.ts';

export type { Caller } from './caller.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** Who a session token or an API key belongs to (decorated by the app). */
    callerResolver: CallerResolver;
    /** How recent a session's authentication must be for a privileged operation (decorated by the app). */
    authenticationPolicy: AuthenticationPolicy;
  }
  interface FastifyRequest {
    /** Set by `authenticate()`; null on routes that do not authenticate. */
    caller: Caller | null;
  }
}

export interface AuthenticationPolicy {
  /** REAUTH_MAX_AGE_SECONDS: a privileged operation needs an authentication at most this old; 0 turns the rule off. */
  reauthMaxAgeSeconds: number;
}

export interface AuthenticateOptions {
  /**
   * What the route requires, shown per operation in the OpenAPI (`x-permission`): a key of the permission
   * catalog (platform/permissions.ts) held in the active organization (403 `forbidden` with
   * `missingPermission` otherwise); `member`, an active member of the active organization; `signed-in`,
   * any caller, acting for themselves; `owner`, the organization's owner; `instance-admin`, an instance
   * administrator's session.
   */
  requires: Exclude<Requirement, 'public'>;
  /**
   * `service`: the route's service judges `requires`, in the organization its path names
   * (/v1/orgs/{organizationId}), once it has read the request, so the hook documents it and only
   * authenticates. By default the hook judges it, in the active organization.
   */
  judgedBy?: 'hook' | 'service';
  /** Accept an organization API key in `x-api-key` besides a session. */
  allowApiKey?: boolean;
  /** What a session without a usable active organization gets (default 403 forbidden). */
  withoutOrganization?: 'forbidden' | 'organization_not_found';
  /**
   * A privileged operation: the session's person must have authenticated (signed in, or re-authenticated)
   * within REAUTH_MAX_AGE_SECONDS, else 403 `reauth`. Judged after the permission, so a caller who may not
   * call the route at all hears that first. Never with `allowApiKey`: an API key has no person who could
   * authenticate again, so privileged operations are for people only. `'by-route'`: the route or its
   * service judges it, calling requireFreshAuthentication (or the FreshAuthenticationCheck it was handed),
   * and the hook only documents it. For a route of which only some calls are privileged (install-link
   * rotation, an admin removing another member, the shared credential of a connection), and for one under
   * /v1/orgs/{organizationId}, whose caller's membership and keys there only its service knows: so the
   * permission is judged first there too.
   */
  freshAuthentication?: boolean | 'by-route';
}

/** What the OpenAPI says of a route behind `authenticate({ freshAuthentication: true })`. */
export const freshAuthenticationDescription =
  'Privileged: needs a recent authentication. A session whose person last signed in or re-authenticated longer ago than ' +
  '`REAUTH_MAX_AGE_SECONDS` (900 by default) gets 403 `{error: "reauth", reason: "authentication_too_old", message}`; ' +
  'POST /v1/auth/reauthenticate (password) or POST /v1/auth/sso/start with `reauthenticate: true` refreshes it. ' +
  'API keys are never accepted here: a key is a long-lived machine credential with no person behind it who could re-authenticate.';

/**
 * 403 `reauth` unless the caller is a session whose person authenticated within REAUTH_MAX_AGE_SECONDS
 * (the rule behind `freshAuthentication`; a route whose privilege depends on its body, like install-link
 * rotation, calls it from its handler). Anything but a session is refused: only a person re-authenticates.
 */
export function requireFreshAuthentication(request: FastifyRequest): void {
  const caller = callerOf(request);
  if (caller.kind !== 'session') throw forbidden('This action needs a signed-in person, not an API key');
  const { reauthMaxAgeSeconds } = request.server.authenticationPolicy;
  if (reauthMaxAgeSeconds === 0) return;
  const authenticatedAt = caller.authenticatedAt?.getTime();
  if (authenticatedAt === undefined || Date.now() - authenticatedAt > reauthMaxAgeSeconds * 1000)
    throw reauthRequired(reauthMaxAgeSeconds);
}

/**
 * What a `freshAuthentication: 'by-route'` route hands its service: the service calls it once it knows
 * that this call is the privileged kind (an admin removing someone else, the shared credential rather
 * than the caller's own) and that the caller may make it at all (a member of the organization in the
 * path, with the role), so a caller without the right hears that first. It throws 403 `reauth` for a
 * session whose authentication is too old.
 */
export type FreshAuthenticationCheck = () => void;

/** The check a `'by-route'` route hands its service (see FreshAuthenticationCheck). */
export function freshAuthenticationCheck(request: FastifyRequest): FreshAuthenticationCheck {
  return () => requireFreshAuthentication(request);
}

export function bearerToken(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (!header) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}

/**
 * An onRequest hook that resolves the caller (one database round trip) and enforces the options.
 * Not signed in: 401 unauthorized. Signed in but not allowed: 403 forbidden. It runs before the body
 * is read, parsed or validated, so a caller who may not call the route learns that first (the spec:
 * not signed in is `unauthorized`, not owner or admin is `forbidden`), not what their input lacks,
 * and an anonymous caller's body is never read.
 */
export function authenticate(options: AuthenticateOptions): onRequestAsyncHookHandler {
  if (options.freshAuthentication && options.allowApiKey)
    throw new Error('authenticate(): freshAuthentication routes do not take API keys');
  const { requires } = options;
  const judgedHere = options.judgedBy !== 'service';
  const needsOrganization = judgedHere && requires !== 'signed-in' && requires !== 'instance-admin';
  const authenticateRequest: onRequestAsyncHookHandler = async function authenticateRequest(request) {
    const callers = request.server.callerResolver;
    let caller: Caller | null = null;
    const token = bearerToken(request);
    if (token) caller = await callers.resolveSession(token);
    else if (options.allowApiKey && typeof request.headers['x-api-key'] === 'string') {
      caller = await callers.resolveApiKey(request.headers['x-api-key']);
    }
    if (!caller) throw unauthorized();
    request.caller = caller;
    if (judgedHere && requires === 'instance-admin' && !caller.isInstanceAdmin)
      throw forbidden('Only instance administrators may do this');
    if (needsOrganization) {
      if (!caller.organizationId || !caller.role) {
        if (options.withoutOrganization === 'organization_not_found') throw organizationNotFound();
        throw notAnActiveMember();
      }
      if (requires === 'owner' && caller.role !== 'owner')
        throw forbidden('Only the owner of the organization may do this');
      if (isPermissionKey(requires) && !caller.permissions.has(requires)) throw missingPermission(requires);
    }
    if (options.freshAuthentication === true) requireFreshAuthentication(request);
  };
  securityRequirements.set(authenticateRequest, {
    security: options.allowApiKey ? [{ session: [] }, { apiKey: [] }] : [{ session: [] }],
    fresh: options.freshAuthentication !== undefined && options.freshAuthentication !== false,
    requires,
  });
  callerDescriptions.set(authenticateRequest, describeCaller(options));
  return authenticateRequest;
}

/** Who a route behind `authenticate(options)` lets in, said for the OpenAPI document. */
function describeCaller(options: AuthenticateOptions): string {
  const credential = options.allowApiKey
    ? 'a session token, or an organization API key (`x-api-key`),'
    : 'a session token';
  let who = `Needs ${credential} (401 \`unauthorized\` without a valid one)`;
  const { requires } = options;
  const where = options.judgedBy === 'service' ? 'the organization of the path' : 'the active organization';
  if (isPermissionKey(requires)) who += `, of a member holding the permission \`${requires}\` in ${where}`;
  else if (requires === 'member') who += `, of an active member of ${where}`;
  else if (requires === 'owner') who += `, of the owner of ${where}`;
  else if (requires === 'instance-admin') who += ', of an instance administrator';
  if (requires === 'signed-in') who += '.';
  else {
    who +=
      options.withoutOrganization === 'organization_not_found'
        ? '; without an active organization, 404 `organization_not_found`; otherwise not allowed, 403 `forbidden`.'
        : '; otherwise 403 `forbidden`.';
  }
  return who;
}

// What each hook made by `authenticate()` accepts, as OpenAPI security requirements (the
// schemes are declared in app.ts).
const securityRequirements = new WeakMap<
  object,
  { security: Record<string, string[]>[]; fresh: boolean; requires: Requirement }
>();
const callerDescriptions = new WeakMap<object, string>();

/** The OpenAPI extension that marks an operation needing a recent authentication (freshAuthentication). */
export const FRESH_AUTHENTICATION = 'x-requires-fresh-authentication';

/**
 * An onRoute hook: a route behind `authenticate()` declares in its OpenAPI schema the schemes that
 * hook accepts, so the document cannot drift from what the route enforces (and, when it has no
 * description of its own, who may call it).
 */
export function documentAuthentication(route: RouteOptions): void {
  const handlers = route.onRequest === undefined ? [] : [route.onRequest].flat();
  const found = handlers.map((handler) => securityRequirements.get(handler)).find((entry) => entry !== undefined);
  if (!found || !route.schema) return;
  const { security, fresh, requires } = found;
  // A GET's HEAD route shares its schema, so the same requirement may already be there.
  if (route.schema.security && route.schema.security !== security)
    throw new Error(`${route.method} ${route.url}: its security comes from authenticate(), do not declare it`);
  route.schema.security = security;
  (route.schema as Record<string, unknown>)[PERMISSION_EXTENSION] = requires;
  // An operation without a description of its own is described by who may call it.
  const description = handlers.map((handler) => callerDescriptions.get(handler)).find((entry) => entry !== undefined);
  if (description && !route.schema.description) route.schema.description = description;
  else if (isPermissionKey(requires))
    route.schema.description = `${route.schema.description ?? ''}\n\nNeeds the permission \`${requires}\` (403 \`forbidden\` with \`missingPermission\` otherwise).`;
  if (fresh) markFreshAuthentication(route.schema);
}

/** Documents a route as needing a recent authentication: the extension flag, and the rule appended to its description. */
function markFreshAuthentication(routeSchema: object): void {
  const schema = routeSchema as Record<string, unknown>;
  if (schema[FRESH_AUTHENTICATION]) return;
  schema[FRESH_AUTHENTICATION] = true;
  const description = typeof schema.description === 'string' ? `${schema.description}\n\n` : '';
  schema.description = description + freshAuthenticationDescription;
}

/** The caller set by `authenticate()`; use only in handlers behind it. */
export function callerOf(request: FastifyRequest): Caller {
  if (!request.caller) throw unauthorized();
  return request.caller;
}

/** The context of a write made through this request by nobody signed in yet (sign-in, sign-up, bootstrap). */
export function requestContextOf(request: FastifyRequest): WriteContext {
  const userAgent = request.headers['user-agent'];
  return {
    actor: { kind: 'anonymous' },
    requestId: request.id,
    clientAddress: request.ip,
    userAgent: typeof userAgent === 'string' ? userAgent : null,
  };
}

/** The context of a write made by this request's caller (see platform/write-context.ts). */
export function writeContextOf(request: FastifyRequest): CallerContext {
  const userAgent = request.headers['user-agent'];
  return {
    actor: callerOf(request),
    requestId: request.id,
    clientAddress: request.ip,
    userAgent: typeof userAgent === 'string' ? userAgent : null,
  };
}

/**
 * In the schema of a route without authenticate(): it needs no session or API key, either none at all or
 * a credential of its own (a password being signed in with, a SCIM connector's token, a webhook's
 * signature, an OAuth state): the OpenAPI says so (`x-permission: public`).
 */
export const publicAccess = { [PERMISSION_EXTENSION]: 'public' } as const;

/** In the schema of a route that checks the session in its own query (GET /v1/org): any signed-in person. */
export const signedInAccess = { [PERMISSION_EXTENSION]: 'signed-in' } as const;
