// Who is calling. The authentication hook (http/auth.ts) resolves it, every module reads it, and the
// write context (write-context.ts) names it as a write's actor. It lives in platform/, beneath http/ and
// modules/, so that the foundation never imports upward: platform/ and db/ import nothing from http/.

import type { PermissionKey } from './permissions.ts';

/** A member's role: a built-in one (`owner`, `admin`, `member`: platform/permissions.ts) or a custom role's id (`role_...`). */
export type Role = string;

/** Who is calling, as resolved from a session token or an organization API key. */
export interface Caller {
  kind: 'session' | 'api_key';
  userId: string | null;
  sessionId: string | null;
  apiKeyId: string | null;
  isInstanceAdmin: boolean;
  /** The session's active organization, or the API key's organization. */
  organizationId: string | null;
  /** The caller's active membership in that organization (null for API keys and ex-members). */
  memberId: string | null;
  role: Role | null;
  /** The keys the caller holds in that organization (none without one): what routes check, never the role's name. */
  permissions: ReadonlySet<PermissionKey>;
  /**
   * When and how the session's person last authenticated (sign-in, or re-authentication since);
   * absent for an API key and for a caller not resolved from a session token.
   */
  authenticatedAt?: Date;
  authMethod?: AuthMethod;
  /**
   * The person's name and e-mail (an API key: its name, no e-mail) as read when the request was
   * authenticated: what the audit log records of the actor, without reading them again.
   */
  name?: string | null;
  email?: string | null;
}

/** How a session's person authenticated: their password, or their organization's identity provider. */
export type AuthMethod = 'password' | 'sso';

/** A caller's standing in one organization (memberId is null for an API key). */
export interface Membership {
  organizationId: string;
  memberId: string | null;
  role: Role;
  /** The keys the caller holds there. */
  permissions: ReadonlySet<PermissionKey>;
}
