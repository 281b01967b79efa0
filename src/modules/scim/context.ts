// What every part of the SCIM service works with: who is provisioning (ScimContext), the service's
// dependencies (ScimDeps), and the small rules the users, groups and token parts share.
import type { Database } from '../../db/database.ts';
import type { WriteContext } from '../../platform/write-context.ts';
import type { MembershipAuthorization, MembershipSessions } from '../identity/index.ts';
import type { MemberRemovalHook } from '../members/index.ts';
import type { SsoDirectory } from '../sso/index.ts';
import type { UserDirectory } from '../users/index.ts';
import { ScimError } from './errors.ts';
import { parseFilter } from './filter.ts';
import type { PatchOperation } from './patch.ts';
import { PATCH_OP_SCHEMA } from './schema.ts';
import type { ScimStore } from './store.ts';

/** The connector a SCIM bearer token stands for (resolved on every request: no caching, so rotation bites at once). */
export interface ScimConnector {
  organizationId: string;
  connectorId: string;
}

/** Who is provisioning, and through which request: the context of the SCIM server's writes. */
export interface ScimContext extends ScimConnector, WriteContext {
  actor: { kind: 'scim'; organizationId: string; connectorId: string };
}

export interface ScimDeps {
  db: Database;
  store: ScimStore;
  membership: Pick<
    MembershipAuthorization,
    'holdActingMember' | 'lockMemberChanges' | 'getMemberByUser' | 'ensureMember' | 'setMemberStatus' | 'deleteMember'
  > &
    Pick<MembershipSessions, 'revokeUserSessions'>;
  /** ensureUser's password_hash tells an account someone signed up with from one made by provisioning. */
  users: Pick<UserDirectory, 'updateUserNameAndEmail' | 'ensureUser'>;
  sso: SsoDirectory;
  /** PUBLIC_URL/scim/v2 */
  baseUrl: string;
  /** What other modules do when a member is removed (the members module's hooks: MCP OAuth tokens revoked). */
  removalHooks?: MemberRemovalHook[] | undefined;
}

export type Doc = Record<string, unknown>;

export function isObject(value: unknown): value is Doc {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

export function optionalString(doc: Doc, name: string): string | null {
  const value = doc[name];
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') throw new ScimError(400, `${name} must be a string`, 'invalidValue');
  return value;
}

export function requiredString(doc: Doc, name: string, max = 255): string {
  const value = doc[name];
  if (typeof value !== 'string' || value.trim() === '') throw new ScimError(400, `${name} is required`, 'invalidValue');
  if (value.length > max) throw new ScimError(400, `${name} is longer than ${max} characters`, 'invalidValue');
  return value.trim();
}

/** A resource's `meta` (RFC 7643 3.1). */
export function meta(
  baseUrl: string,
  resourceType: 'User' | 'Group',
  row: { id: string; created_at: Date; updated_at: Date },
) {
  return {
    resourceType,
    created: row.created_at.toISOString(),
    lastModified: row.updated_at.toISOString(),
    location: `${baseUrl}/${resourceType}s/${row.id}`,
    version: `W/"${row.updated_at.getTime()}"`,
  };
}

/**
 * The verified SSO domain, or null while there is none. Writes that give access need it (see
 * emailInDomain); taking access away never waits for it.
 */
export async function verifiedDomain(deps: Pick<ScimDeps, 'sso'>, ctx: ScimConnector): Promise<string | null> {
  return (await deps.sso.verifiedConnection(ctx.organizationId))?.domain ?? null;
}

export function requireDomain(domain: string | null): string {
  if (domain === null)
    throw new ScimError(403, "The organization's SSO domain is not verified; provisioning is paused until it is");
  return domain;
}

export async function requireVerifiedDomain(deps: Pick<ScimDeps, 'sso'>, ctx: ScimConnector): Promise<string> {
  return requireDomain(await verifiedDomain(deps, ctx));
}

export function parseOperations(body: unknown): PatchOperation[] {
  if (!isObject(body)) throw new ScimError(400, 'the body must be a PatchOp object', 'invalidSyntax');
  if (Array.isArray(body.schemas) && !body.schemas.includes(PATCH_OP_SCHEMA)) {
    throw new ScimError(400, `a PATCH body must carry the schema ${PATCH_OP_SCHEMA}`, 'invalidSyntax');
  }
  const operations = body.Operations ?? body.operations;
  if (!Array.isArray(operations) || operations.length === 0)
    throw new ScimError(400, 'Operations must be a non-empty array', 'invalidSyntax');
  if (operations.length > 1000) throw new ScimError(400, 'too many operations in one request', 'tooMany');
  return operations as PatchOperation[];
}

export function filterOf(raw: string | undefined) {
  return raw === undefined || raw.trim() === '' ? undefined : parseFilter(raw);
}
