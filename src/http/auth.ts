import type { FastifyRequest, onRequestAsyncHookHandler, RouteOptions } from 'fastify';
import type { CallerContext, WriteContext } from '../platform/write-context.ts';
import type { Caller, CallerResolver, Role } from './caller.ts';
import { lacksRole, notAnActiveMember, organizationNotFound, unauthorized } from './errors.ts';

export type { Caller, Membership, Role } from './caller.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** Who a session token or an API key belongs to (decorated by the app). */
    callerResolver: CallerResolver;
  }
  interface FastifyRequest {
    /** Set by `authenticate()`; null on routes that do not authenticate. */
    caller: Caller | null;
  }
}

export interface AuthenticateOptions {
  /** Roles allowed in the active organization; implies `organization`. */
  roles?: readonly Role[];
  /** Accept an organization API key in `x-api-key` besides a session. */
  allowApiKey?: boolean;
  /** Require an active organization with the caller an active member of it. */
  organization?: boolean;
  /** What a session without a usable active organization gets (default 403 forbidden). */
  withoutOrganization?: 'forbidden' | 'organization_not_found';
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
export function authenticate(options: AuthenticateOptions = {}): onRequestAsyncHookHandler {
  const needsOrganization = options.organization || options.roles !== undefined;
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
    if (!needsOrganization) return;
    if (!caller.organizationId || !caller.role) {
      if (options.withoutOrganization === 'organization_not_found') throw organizationNotFound();
      throw notAnActiveMember();
    }
    if (options.roles && !options.roles.includes(caller.role)) throw lacksRole(options.roles);
  };
  securityRequirements.set(authenticateRequest, options.allowApiKey ? [{ session: [] }, { apiKey: [] }] : [{ session: [] }]);
  callerDescriptions.set(authenticateRequest, describeCaller(options));
  return authenticateRequest;
}

/** Who a route behind `authenticate(options)` lets in, said for the OpenAPI document. */
function describeCaller(options: AuthenticateOptions): string {
  const credential = options.allowApiKey ? 'a session token, or an organization API key (`x-api-key`),' : 'a session token';
  let who = `Needs ${credential} (401 \`unauthorized\` without a valid one)`;
  if (options.roles) who += `, of a member whose role in the active organization is ${options.roles.join(' or ')}`;
  else if (options.organization) who += ', of an active member of the active organization';
  if (options.roles || options.organization) {
    who += options.withoutOrganization === 'organization_not_found'
      ? '; without an active organization, 404 `organization_not_found`; otherwise not allowed, 403 `forbidden`.'
      : '; otherwise 403 `forbidden`.';
  } else who += '.';
  return who;
}

// What each hook made by `authenticate()` accepts, as OpenAPI security requirements (the
// schemes are declared in app.ts).
const securityRequirements = new WeakMap<object, Record<string, string[]>[]>();
const callerDescriptions = new WeakMap<object, string>();

/**
 * An onRoute hook: a route behind `authenticate()` declares in its OpenAPI schema the schemes that
 * hook accepts, so the document cannot drift from what the route enforces (and, when it has no
 * description of its own, who may call it).
 */
export function documentAuthentication(route: RouteOptions): void {
  const handlers = route.onRequest === undefined ? [] : [route.onRequest].flat();
  const security = handlers.map((handler) => securityRequirements.get(handler)).find((found) => found !== undefined);
  if (!security || !route.schema) return;
  // A GET's HEAD route shares its schema, so the same requirement may already be there.
  if (route.schema.security && route.schema.security !== security) throw new Error(`${route.method} ${route.url}: its security comes from authenticate(), do not declare it`);
  route.schema.security = security;
  // An operation without a description of its own is described by who may call it.
  const description = handlers.map((handler) => callerDescriptions.get(handler)).find((found) => found !== undefined);
  if (description && !route.schema.description) route.schema.description = description;
}

/** The caller set by `authenticate()`; use only in handlers behind it. */
export function callerOf(request: FastifyRequest): Caller {
  if (!request.caller) throw unauthorized();
  return request.caller;
}

/** The context of a write made through this request by nobody signed in yet (sign-in, sign-up, bootstrap). */
export function requestContextOf(request: FastifyRequest): WriteContext {
  const userAgent = request.headers['user-agent'];
  return { actor: { kind: 'anonymous' }, requestId: request.id, clientAddress: request.ip, userAgent: typeof userAgent === 'string' ? userAgent : null };
}

/** The context of a write made by this request's caller (see platform/write-context.ts). */
export function writeContextOf(request: FastifyRequest): CallerContext {
  const userAgent = request.headers['user-agent'];
  return { actor: callerOf(request), requestId: request.id, clientAddress: request.ip, userAgent: typeof userAgent === 'string' ? userAgent : null };
}
