import type { Database, Queryable } from '../../db/database.ts';
import { isForeignKeyViolation, isUniqueViolation } from '../../db/errors.ts';
import { ApiError, lacksRole, notFound, organizationNotFound } from '../../http/errors.ts';
import { newId } from '../../platform/ids.ts';
import { hashToken, randomToken } from '../../platform/tokens.ts';
import { emailSchema, personNameSchema } from '../identity/schemas.ts';
import type { Caller, IdentityService, Role } from '../identity/service.ts';
import { normalizeDomain } from '../sso/dns.ts';
import type { SsoService } from '../sso/service.ts';
import { listResponse, type Paging } from './documents.ts';
import { ScimError } from './errors.ts';
import { parseFilter } from './filter.ts';
import { applyPatch, type PatchOperation } from './patch.ts';
import { normalizeResource, pickEmail, pickName } from './resource.ts';
import { GROUP_SCHEMA, PATCH_OP_SCHEMA, USER_SCHEMA } from './schema.ts';
import { createScimStore, type ConnectorRow, type GroupMemberRef, type ScimGroupRow, type ScimUserRow } from './store.ts';

export interface ScimServiceDeps {
  db: Database;
  identity: IdentityService;
  sso: SsoService;
  /** PUBLIC_URL, no trailing slash */
  publicUrl: string;
}

/** Who is provisioning: resolved from the SCIM bearer token on every request (no caching, so rotation bites at once). */
export interface ScimContext {
  organizationId: string;
  connectorId: string;
}

type Doc = Record<string, unknown>;

const tokenPrefix = 'opscim_';
// Who may rotate the token: the roles of the route's check (routes.ts), checked again as it is written.
const tokenRotators: readonly Role[] = ['owner', 'admin'];
const tokenPattern = /^opscim_[A-Za-z0-9_-]{43}$/;

function isObject(value: unknown): value is Doc {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function optionalString(doc: Doc, name: string): string | null {
  const value = doc[name];
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') throw new ScimError(400, `${name} must be a string`, 'invalidValue');
  return value;
}

function requiredString(doc: Doc, name: string, max = 255): string {
  const value = doc[name];
  if (typeof value !== 'string' || value.trim() === '') throw new ScimError(400, `${name} is required`, 'invalidValue');
  if (value.length > max) throw new ScimError(400, `${name} is longer than ${max} characters`, 'invalidValue');
  return value.trim();
}

/** The e-mail domain must be the verified SSO domain or a subdomain of it: the IdP speaks only for its own domain. */
function emailInDomain(email: string, domain: string): boolean {
  const at = email.lastIndexOf('@');
  const emailDomain = normalizeDomain(email.slice(at + 1));
  return emailDomain !== null && (emailDomain === domain || emailDomain.endsWith(`.${domain}`));
}

export function createScimService(deps: ScimServiceDeps) {
  const { db, identity } = deps;
  const store = createScimStore();
  const baseUrl = `${deps.publicUrl}/scim/v2`;

  // ---- rendering ----

  const meta = (resourceType: 'User' | 'Group', row: { id: string; created_at: Date; updated_at: Date }) => ({
    resourceType,
    created: row.created_at.toISOString(),
    lastModified: row.updated_at.toISOString(),
    location: `${baseUrl}/${resourceType}s/${row.id}`,
    version: `W/"${row.updated_at.getTime()}"`,
  });

  function renderUser(row: ScimUserRow, groups: GroupMemberRef[]): Doc {
    const { schemas, groups: _groups, userName: _userName, externalId: _externalId, active: _active, ...rest } = row.resource;
    return {
      schemas: Array.isArray(schemas) ? schemas : [USER_SCHEMA],
      id: row.id,
      ...(row.external_id !== null ? { externalId: row.external_id } : {}),
      userName: row.user_name,
      ...rest,
      active: row.active,
      groups: groups.map((g) => ({ value: g.group_id, display: g.group_display_name, $ref: `${baseUrl}/Groups/${g.group_id}`, type: 'direct' })),
      meta: meta('User', row),
    };
  }

  function renderGroup(row: ScimGroupRow, members: GroupMemberRef[]): Doc {
    const { schemas: _schemas, displayName: _displayName, externalId: _externalId, members: _members, ...rest } = row.resource;
    return {
      schemas: [GROUP_SCHEMA],
      id: row.id,
      ...(row.external_id !== null ? { externalId: row.external_id } : {}),
      displayName: row.display_name,
      ...rest,
      members: members.map((m) => ({ value: m.scim_user_id, display: m.user_display, $ref: `${baseUrl}/Users/${m.scim_user_id}`, type: 'User' })),
      meta: meta('Group', row),
    };
  }

  async function userWithGroups(tx: Queryable, ctx: ScimContext, row: ScimUserRow): Promise<Doc> {
    return renderUser(row, await store.memberships(tx, ctx.organizationId, 'user', [row.id]));
  }

  async function groupWithMembers(tx: Queryable, ctx: ScimContext, row: ScimGroupRow): Promise<Doc> {
    return renderGroup(row, await store.memberships(tx, ctx.organizationId, 'group', [row.id]));
  }

  // ---- rules shared by create, replace and patch ----

  /**
   * The verified SSO domain, or null while there is none. Writes that give access need it (see
   * emailInDomain); taking access away never waits for it.
   */
  async function verifiedDomain(ctx: ScimContext): Promise<string | null> {
    return (await deps.sso.verifiedConnection(ctx.organizationId))?.domain ?? null;
  }

  function requireDomain(domain: string | null): string {
    if (domain === null) throw new ScimError(403, "The organization's SSO domain is not verified; provisioning is paused until it is");
    return domain;
  }

  async function requireVerifiedDomain(ctx: ScimContext): Promise<string> {
    return requireDomain(await verifiedDomain(ctx));
  }

  interface UserFields {
    userName: string;
    externalId: string | null;
    displayName: string | null;
    active: boolean | undefined;
  }

  function userFields(doc: Doc): UserFields {
    return {
      userName: requiredString(doc, 'userName'),
      externalId: optionalString(doc, 'externalId'),
      displayName: optionalString(doc, 'displayName'),
      active: typeof doc.active === 'boolean' ? doc.active : undefined,
    };
  }

  interface Account {
    email: string;
    name: string;
  }

  /**
   * The account an active user stands for, held to the rules of accounts made through /v1 (sign-up's
   * e-mail and name rules) and to the identity provider's verified domain.
   */
  function accountOf(doc: Doc, domain: string): Account {
    const emails = Array.isArray(doc.emails) ? doc.emails : [];
    // The primary e-mail becomes the account's, so two would leave it to chance (and RFC 7643 2.4 allows one).
    if (emails.filter((e) => isObject(e) && e.primary === true).length > 1) {
      throw new ScimError(400, 'At most one e-mail address can be primary', 'invalidValue');
    }
    const email = pickEmail(doc);
    if (!email) throw new ScimError(400, 'An e-mail address is needed: send userName as an e-mail address, or an emails value', 'invalidValue');
    if (!emailSchema.safeParse(email).success) throw new ScimError(400, `${email} is not a valid e-mail address`, 'invalidValue');
    if (!emailInDomain(email, domain)) {
      throw new ScimError(400, `The e-mail address ${email} is outside the organization's verified domain ${domain}`, 'invalidValue');
    }
    const name = personNameSchema.safeParse(pickName(doc) ?? email);
    if (!name.success) {
      throw new ScimError(400, `The name (displayName, else name) must be 1 to ${personNameSchema.maxLength} characters`, 'invalidValue');
    }
    return { email, name: name.data };
  }

  /** The account takes the name and e-mail of its SCIM user; another account's e-mail is a conflict. */
  async function syncAccount(tx: Queryable, userId: string, account: Account): Promise<void> {
    try {
      await identity.updateUserNameAndEmail(tx, userId, account);
    } catch (error) {
      if (error instanceof ApiError && error.code === 'email_taken') {
        throw new ScimError(409, `Another account already has the e-mail address ${account.email}`, 'uniqueness');
      }
      throw error;
    }
  }

  /**
   * Taken first by every transaction that may change a member, before any SCIM row: identity's member
   * changes (a removal, a transfer of ownership) then run wholly before or after it, so the member it
   * reads is current (an owner is never suspended or removed), and both lock rows in one order (a
   * removal's ON DELETE SET NULL of scim_users.member_id would otherwise deadlock with it).
   */
  const holdMemberChanges = (tx: Queryable, ctx: ScimContext) => identity.lockMemberChanges(tx, ctx.organizationId);

  /** Brings the member in line with `active`: suspended with sessions revoked, or active (re-added if removed meanwhile). */
  async function syncMember(tx: Queryable, ctx: ScimContext, userId: string, active: boolean): Promise<string | null> {
    // Found by person, not by scim_users.member_id: that is cleared when the member is removed and
    // does not follow a person who rejoins, whom a deactivation must still reach.
    let member = await identity.getMemberByUser(ctx.organizationId, userId, tx);
    if (!member && active) member = await identity.ensureMember(tx, ctx.organizationId, userId, 'member');
    if (!member) return null;
    if (!active && member.role === 'owner') {
      throw new ScimError(400, 'The organization owner cannot be suspended or removed through SCIM; transfer ownership first', 'mutability');
    }
    const status = active ? 'active' : 'suspended';
    if (member.status !== status) {
      await identity.setMemberStatus(tx, ctx.organizationId, member.id, status);
      if (!active) await identity.revokeUserSessions(tx, userId);
    }
    return member.id;
  }

  /**
   * Replaces a user with what `build` makes of its current row. The row is read locked, so a write
   * made from a stale copy cannot undo a concurrent one (a deactivation above all).
   */
  async function writeUser(ctx: ScimContext, id: string, build: (current: ScimUserRow) => Doc): Promise<Doc> {
    // An unknown user is 404 whatever the SSO domain's state (only then a paused connector is 403);
    // the row the write uses is read again, locked, inside the transaction.
    await loadUser(ctx, id);
    const domain = await verifiedDomain(ctx);
    let userName: string | undefined;
    try {
      return await db.transaction(async (tx) => {
        await holdMemberChanges(tx, ctx);
        const locked = await store.findUser(tx, ctx.organizationId, id, true);
        if (!locked) throw new ScimError(404, `User ${id} not found`);
        const doc = build(locked);
        const fields = userFields(doc);
        userName = fields.userName;
        const active = fields.active ?? locked.active;
        doc.active = active;
        // A write that leaves the user inactive only takes access away: it needs no verified domain and
        // is not held to the account's rules, so that no state of the domain or of the profile can keep
        // a departed person in. It does not touch the account either.
        if (active) await syncAccount(tx, locked.user_id, accountOf(doc, requireDomain(domain)));
        const memberId = await syncMember(tx, ctx, locked.user_id, active);
        const row = await store.updateUser(tx, ctx.organizationId, locked.id, {
          memberId,
          userName: fields.userName,
          externalId: fields.externalId,
          displayName: fields.displayName,
          active,
          resource: doc,
        });
        return userWithGroups(tx, ctx, row);
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw new ScimError(409, `userName ${userName} is already taken`, 'uniqueness');
      throw error;
    }
  }

  function loadUser(ctx: ScimContext, id: string): Promise<ScimUserRow> {
    return store.findUser(db, ctx.organizationId, id).then((row) => {
      if (!row) throw new ScimError(404, `User ${id} not found`);
      return row;
    });
  }

  function loadGroup(ctx: ScimContext, id: string): Promise<ScimGroupRow> {
    return store.findGroup(db, ctx.organizationId, id).then((row) => {
      if (!row) throw new ScimError(404, `Group ${id} not found`);
      return row;
    });
  }

  /** Member references of a group body: SCIM user ids of this organization, nothing else. */
  async function memberIds(tx: Queryable, ctx: ScimContext, doc: Doc): Promise<string[]> {
    const members = doc.members === undefined ? [] : doc.members;
    if (!Array.isArray(members)) throw new ScimError(400, 'members must be an array', 'invalidValue');
    const ids = members.map((m) => (isObject(m) && typeof m.value === 'string' ? m.value : null));
    if (ids.some((id) => id === null)) throw new ScimError(400, 'each member needs a string value (a User id)', 'invalidValue');
    const unique = [...new Set(ids as string[])];
    // Locked before the group's membership rows: a user's deletion holds its row, then deletes those
    // rows (ON DELETE CASCADE), so taking them first and the user's row after would deadlock with it.
    const known = new Set(await store.lockExistingUserIds(tx, ctx.organizationId, unique));
    const unknown = unique.filter((id) => !known.has(id));
    if (unknown.length > 0) throw unknownMembers(unknown);
    return unique;
  }

  function unknownMembers(ids: string[]): ScimError {
    return new ScimError(400, `Unknown member ${ids.slice(0, 5).join(', ')}: provision the users first`, 'invalidValue');
  }

  /** Sets a group's members; a listed user deleted since `memberIds` checked it is as unknown as one never provisioned. */
  async function setGroupMembers(tx: Queryable, ctx: ScimContext, groupId: string, ids: string[]): Promise<void> {
    try {
      await store.setGroupMembers(tx, ctx.organizationId, groupId, ids);
    } catch (error) {
      if (!isForeignKeyViolation(error)) throw error;
      const key = /\(scim_user_id\)=\(([^)]*)\)/.exec(String((error as { detail?: unknown }).detail ?? ''));
      throw unknownMembers(key ? [key[1]!] : ids);
    }
  }

  /** Adding members gives access, so it waits for a verified domain like provisioning users; removing them never does. */
  function requireDomainToAdd(domain: string | null, current: GroupMemberRef[], ids: string[]): void {
    const before = new Set(current.map((m) => m.scim_user_id));
    if (ids.some((id) => !before.has(id))) requireDomain(domain);
  }

  function groupFields(doc: Doc) {
    return { displayName: requiredString(doc, 'displayName'), externalId: optionalString(doc, 'externalId') };
  }

  /** What is stored of a group: its attributes without members (they live in scim_group_members). */
  function groupResource(doc: Doc): Doc {
    const copy = { ...doc };
    delete copy.members;
    return copy;
  }

  function parseOperations(body: unknown): PatchOperation[] {
    if (!isObject(body)) throw new ScimError(400, 'the body must be a PatchOp object', 'invalidSyntax');
    if (Array.isArray(body.schemas) && !body.schemas.includes(PATCH_OP_SCHEMA)) {
      throw new ScimError(400, `a PATCH body must carry the schema ${PATCH_OP_SCHEMA}`, 'invalidSyntax');
    }
    const operations = body.Operations ?? body.operations;
    if (!Array.isArray(operations) || operations.length === 0) throw new ScimError(400, 'Operations must be a non-empty array', 'invalidSyntax');
    if (operations.length > 1000) throw new ScimError(400, 'too many operations in one request', 'tooMany');
    return operations as PatchOperation[];
  }

  function filterOf(raw: string | undefined) {
    return raw === undefined || raw.trim() === '' ? undefined : parseFilter(raw);
  }

  return {
    baseUrl,

    // ---- the session-authenticated management routes ----

    /** Creates the connector when absent, then rotates its token. Needs a verified SSO domain. */
    async rotateToken(caller: Caller) {
      const organizationId = caller.organizationId;
      if (!organizationId) throw organizationNotFound();
      const sso = await deps.sso.verifiedConnection(organizationId);
      if (!sso) {
        throw new ApiError(409, 'sso_required', 'SCIM provisioning needs an SSO connection with a verified domain: PUT /v1/sso/connection, then POST /v1/sso/verify-domain');
      }
      const token = tokenPrefix + randomToken(32);
      const connector = await db.transaction(async (tx) => {
        // The route checked the role as the request began; a removal, suspension or demotion committed
        // since must not leave a working token behind. With the member row held, one in progress either
        // commits first and is seen here, or waits until this rotation, made while the right held, commits.
        const member = caller.memberId ? await identity.lockMember(tx, organizationId, caller.memberId) : undefined;
        if (member?.status !== 'active') throw organizationNotFound();
        if (!tokenRotators.includes(member.role)) throw lacksRole(tokenRotators);
        return store.upsertConnectorToken(tx, {
          id: newId('scim'),
          organizationId,
          providerId: sso.id,
          tokenHash: hashToken(token),
        });
      });
      return { connector, token, ssoReady: true };
    },

    async getConnection(caller: Caller) {
      const organizationId = caller.organizationId;
      if (!organizationId) throw organizationNotFound();
      const connector = await store.findConnector(db, organizationId);
      if (!connector) throw notFound('scim_connection_not_found', 'This organization has no SCIM connection; create one with POST /v1/scim/token');
      const ssoReady = (await deps.sso.verifiedConnection(organizationId)) !== undefined;
      return { connector, ssoReady };
    },

    // ---- the SCIM server ----

    async authenticate(token: string | undefined): Promise<ScimContext | null> {
      if (!token || !tokenPattern.test(token)) return null;
      const connector = await store.findConnectorByTokenHash(db, hashToken(token));
      return connector ? { organizationId: connector.organization_id, connectorId: connector.id } : null;
    },

    recordFailure: (ctx: ScimContext, action: string, message: string) => store.recordFailure(db, ctx.organizationId, action, message.slice(0, 1000)),
    recordSuccess: (ctx: ScimContext) => store.recordSuccess(db, ctx.organizationId),

    async listUsers(ctx: ScimContext, query: { filter?: string | undefined; paging: Paging }) {
      const { rows, total } = await store.listUsers(db, ctx.organizationId, filterOf(query.filter), query.paging.startIndex - 1, query.paging.count);
      const groups = await store.memberships(db, ctx.organizationId, 'user', rows.map((r) => r.id));
      const resources = rows.map((row) => renderUser(row, groups.filter((g) => g.scim_user_id === row.id)));
      return listResponse(resources, total, query.paging);
    },

    async getUser(ctx: ScimContext, id: string) {
      return userWithGroups(db, ctx, await loadUser(ctx, id));
    },

    async createUser(ctx: ScimContext, body: unknown): Promise<Doc> {
      const doc = normalizeResource('User', body);
      // Even an inactive user needs the domain: creating one makes or links an account.
      const domain = await requireVerifiedDomain(ctx);
      const fields = userFields(doc);
      const account = accountOf(doc, domain);
      const active = fields.active ?? true;
      doc.active = active;
      try {
        return await db.transaction(async (tx) => {
          await holdMemberChanges(tx, ctx);
          if (await store.findUserByUserName(tx, ctx.organizationId, fields.userName)) {
            throw new ScimError(409, `userName ${fields.userName} is already taken`, 'uniqueness');
          }
          const user = await identity.ensureUser(tx, account);
          if (await store.findUserByUserId(tx, ctx.organizationId, user.id)) {
            throw new ScimError(409, `Another SCIM user already provisions ${account.email}`, 'uniqueness');
          }
          // Sign-up does not prove that one owns the address, so an account someone made with a password
          // is not handed this membership (else anyone could sign up as a future hire and be provisioned
          // into the organization). It is linked when the organization already has it as a member, or
          // when it has no password: then it was made by provisioning, and nobody can sign in to it.
          if (user.password_hash !== null && !(await identity.getMemberByUser(ctx.organizationId, user.id, tx))) {
            throw new ScimError(
              409,
              `An account with the e-mail address ${account.email} already exists and is not a member of this organization: invite that person, then provision them`,
              'uniqueness',
            );
          }
          // A linked account takes the directory's name (its e-mail is this one already, maybe in other case).
          if (active) await syncAccount(tx, user.id, account);
          await identity.ensureMember(tx, ctx.organizationId, user.id, 'member');
          const memberId = await syncMember(tx, ctx, user.id, active);
          const row = await store.insertUser(tx, {
            id: newId('scimu'),
            organizationId: ctx.organizationId,
            userId: user.id,
            memberId,
            userName: fields.userName,
            externalId: fields.externalId,
            displayName: fields.displayName,
            active,
            resource: doc,
          });
          return renderUser(row, []);
        });
      } catch (error) {
        if (isUniqueViolation(error)) throw new ScimError(409, `userName ${fields.userName} is already taken`, 'uniqueness');
        throw error;
      }
    },

    async replaceUser(ctx: ScimContext, id: string, body: unknown): Promise<Doc> {
      return writeUser(ctx, id, () => normalizeResource('User', body));
    },

    async patchUser(ctx: ScimContext, id: string, body: unknown): Promise<Doc> {
      const operations = parseOperations(body);
      return writeUser(ctx, id, (existing) => {
        const current: Doc = { ...existing.resource, userName: existing.user_name, active: existing.active };
        if (existing.external_id !== null) current.externalId = existing.external_id;
        return normalizeResource('User', applyPatch('User', current, operations));
      });
    },

    /** Deleting a provisioned user removes them from the organization and revokes their sessions. */
    async deleteUser(ctx: ScimContext, id: string): Promise<void> {
      await db.transaction(async (tx) => {
        await holdMemberChanges(tx, ctx);
        const row = await store.findUser(tx, ctx.organizationId, id, true);
        if (!row) throw new ScimError(404, `User ${id} not found`);
        // By person, as in syncMember: the membership may be a newer one than scim_users.member_id names.
        const member = await identity.getMemberByUser(ctx.organizationId, row.user_id, tx);
        if (member?.role === 'owner') {
          throw new ScimError(400, 'The organization owner cannot be suspended or removed through SCIM; transfer ownership first', 'mutability');
        }
        if (member) {
          await identity.deleteMember(tx, ctx.organizationId, member.id);
          await identity.revokeUserSessions(tx, row.user_id);
        }
        await store.deleteUser(tx, ctx.organizationId, id);
      });
    },

    async listGroups(ctx: ScimContext, query: { filter?: string | undefined; paging: Paging; excludeMembers: boolean }) {
      const { rows, total } = await store.listGroups(db, ctx.organizationId, filterOf(query.filter), query.paging.startIndex - 1, query.paging.count);
      const members = query.excludeMembers ? [] : await store.memberships(db, ctx.organizationId, 'group', rows.map((r) => r.id));
      const resources = rows.map((row) => {
        const rendered = renderGroup(row, members.filter((m) => m.group_id === row.id));
        if (query.excludeMembers) delete rendered.members;
        return rendered;
      });
      return listResponse(resources, total, query.paging);
    },

    async getGroup(ctx: ScimContext, id: string) {
      return groupWithMembers(db, ctx, await loadGroup(ctx, id));
    },

    /** Groups are kept as metadata (groupMappingMode metadata_only): they do not become teams. */
    async createGroup(ctx: ScimContext, body: unknown): Promise<Doc> {
      const doc = normalizeResource('Group', body);
      await requireVerifiedDomain(ctx);
      const fields = groupFields(doc);
      return db.transaction(async (tx) => {
        const ids = await memberIds(tx, ctx, doc);
        const row = await store.insertGroup(tx, { id: newId('scimg'), organizationId: ctx.organizationId, ...fields, resource: groupResource(doc) });
        await setGroupMembers(tx, ctx, row.id, ids);
        return groupWithMembers(tx, ctx, row);
      });
    },

    async replaceGroup(ctx: ScimContext, id: string, body: unknown): Promise<Doc> {
      const domain = await verifiedDomain(ctx);
      return db.transaction(async (tx) => {
        // Locked, so a concurrent delete either waits for this write or has already made it a 404.
        if (!(await store.findGroup(tx, ctx.organizationId, id, true))) throw new ScimError(404, `Group ${id} not found`);
        const doc = normalizeResource('Group', body);
        const fields = groupFields(doc);
        const ids = await memberIds(tx, ctx, doc);
        requireDomainToAdd(domain, await store.memberships(tx, ctx.organizationId, 'group', [id]), ids);
        const row = await store.updateGroup(tx, ctx.organizationId, id, { ...fields, resource: groupResource(doc) });
        await setGroupMembers(tx, ctx, id, ids);
        return groupWithMembers(tx, ctx, row);
      });
    },

    async patchGroup(ctx: ScimContext, id: string, body: unknown): Promise<Doc> {
      const operations = parseOperations(body);
      const domain = await verifiedDomain(ctx);
      return db.transaction(async (tx) => {
        const existing = await store.findGroup(tx, ctx.organizationId, id, true);
        if (!existing) throw new ScimError(404, `Group ${id} not found`);
        const members = await store.memberships(tx, ctx.organizationId, 'group', [id]);
        const current: Doc = { ...existing.resource, displayName: existing.display_name, members: members.map((m) => ({ value: m.scim_user_id })) };
        if (existing.external_id !== null) current.externalId = existing.external_id;
        const patched = normalizeResource('Group', applyPatch('Group', current, operations));
        const fields = groupFields(patched);
        const ids = await memberIds(tx, ctx, patched);
        requireDomainToAdd(domain, members, ids);
        const row = await store.updateGroup(tx, ctx.organizationId, id, { ...fields, resource: groupResource(patched) });
        await setGroupMembers(tx, ctx, id, ids);
        return groupWithMembers(tx, ctx, row);
      });
    },

    async deleteGroup(ctx: ScimContext, id: string): Promise<void> {
      await loadGroup(ctx, id);
      await store.deleteGroup(db, ctx.organizationId, id);
    },
  };
}

export type ScimService = ReturnType<typeof createScimService>;
export type { ConnectorRow };
