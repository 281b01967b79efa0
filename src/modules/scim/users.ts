// SCIM Users: provisioning, replacing, patching and deprovisioning the organization's people. A user
// is a scim_users row, an account (users) and a membership; the identity provider is authoritative
// for the accounts of its verified domain.
import type { Queryable } from '../../db/database.ts';
import { isUniqueViolation } from '../../db/errors.ts';
import { ApiError } from '../../http/errors.ts';
import { newId } from '../../platform/ids.ts';
import { writeTransaction } from '../../platform/write-context.ts';
import { emailSchema, personNameSchema } from '../identity/index.ts';
import { normalizeDomain } from '../sso/index.ts';
import {
  filterOf,
  isObject,
  meta,
  optionalString,
  parseOperations,
  requireDomain,
  requiredString,
  requireVerifiedDomain,
  verifiedDomain,
  type Doc,
  type ScimConnector,
  type ScimContext,
  type ScimDeps,
} from './context.ts';
import { listResponse, type Paging } from './documents.ts';
import { ScimError } from './errors.ts';
import { applyPatch } from './patch.ts';
import { normalizeResource, pickEmail, pickName } from './resource.ts';
import { USER_SCHEMA } from './schema.ts';
import type { GroupMemberRef, ScimUserAttributes, ScimUserRow } from './store.ts';

/**
 * The attributes scim_users keeps in columns rather than in the resource document, as a document
 * spells them: the columns are what is true, so they are written into every document the service
 * renders or patches. (displayName is a column for filters, but stays in the document as sent.)
 */
function columnAttributes(row: ScimUserRow): { externalId?: string; userName: string; active: boolean } {
  return {
    ...(row.external_id !== null ? { externalId: row.external_id } : {}),
    userName: row.user_name,
    active: row.active,
  };
}

export function renderUser(baseUrl: string, row: ScimUserRow, groups: GroupMemberRef[]): Doc {
  const {
    schemas,
    groups: _groups,
    userName: _userName,
    externalId: _externalId,
    active: _active,
    ...rest
  } = row.resource;
  const { active, ...identifying } = columnAttributes(row);
  return {
    schemas: Array.isArray(schemas) ? schemas : [USER_SCHEMA],
    id: row.id,
    ...identifying,
    ...rest,
    active,
    groups: groups.map((g) => ({
      value: g.group_id,
      display: g.group_display_name,
      $ref: `${baseUrl}/Groups/${g.group_id}`,
      type: 'direct',
    })),
    meta: meta(baseUrl, 'User', row),
  };
}

/** What a user document sets of the column attributes; `active` left out keeps `activeWhenAbsent`. */
function userAttributes(doc: Doc, activeWhenAbsent: boolean): ScimUserAttributes {
  return {
    userName: requiredString(doc, 'userName'),
    externalId: optionalString(doc, 'externalId'),
    displayName: optionalString(doc, 'displayName'),
    active: typeof doc.active === 'boolean' ? doc.active : activeWhenAbsent,
  };
}

async function userWithGroups(deps: ScimDeps, tx: Queryable, ctx: ScimConnector, row: ScimUserRow): Promise<Doc> {
  return renderUser(deps.baseUrl, row, await deps.store.memberships(tx, ctx.organizationId, 'user', [row.id]));
}

/** The e-mail domain must be the verified SSO domain or a subdomain of it: the IdP speaks only for its own domain. */
function emailInDomain(email: string, domain: string): boolean {
  const at = email.lastIndexOf('@');
  const emailDomain = normalizeDomain(email.slice(at + 1));
  return emailDomain !== null && (emailDomain === domain || emailDomain.endsWith(`.${domain}`));
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
  if (!email)
    throw new ScimError(
      400,
      'An e-mail address is needed: send userName as an e-mail address, or an emails value',
      'invalidValue',
    );
  if (!emailSchema.safeParse(email).success)
    throw new ScimError(400, `${email} is not a valid e-mail address`, 'invalidValue');
  if (!emailInDomain(email, domain)) {
    throw new ScimError(
      400,
      `The e-mail address ${email} is outside the organization's verified domain ${domain}`,
      'invalidValue',
    );
  }
  const name = personNameSchema.safeParse(pickName(doc) ?? email);
  if (!name.success) {
    throw new ScimError(
      400,
      `The name (displayName, else name) must be 1 to ${personNameSchema.maxLength} characters`,
      'invalidValue',
    );
  }
  return { email, name: name.data };
}

/** The account takes the name and e-mail of its SCIM user; another account's e-mail is a conflict. */
async function syncAccount(deps: ScimDeps, tx: Queryable, userId: string, account: Account): Promise<void> {
  try {
    await deps.users.updateUserNameAndEmail(tx, userId, account);
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
const holdMemberChanges = (deps: ScimDeps, tx: Queryable, ctx: ScimConnector) =>
  deps.membership.lockMemberChanges(tx, ctx.organizationId);

const ownerUntouchable = () =>
  new ScimError(
    400,
    'The organization owner cannot be suspended or removed through SCIM; transfer ownership first',
    'mutability',
  );

/** Brings the member in line with `active`: suspended with sessions revoked, or active (re-added if removed meanwhile). */
async function syncMember(
  deps: ScimDeps,
  tx: Queryable,
  ctx: ScimConnector,
  userId: string,
  active: boolean,
): Promise<string | null> {
  // Found by person, not by scim_users.member_id: that is cleared when the member is removed and
  // does not follow a person who rejoins, whom a deactivation must still reach.
  let member = await deps.membership.getMemberByUser(ctx.organizationId, userId, tx);
  if (!member && active) member = await deps.membership.ensureMember(tx, ctx.organizationId, userId, 'member');
  if (!member) return null;
  if (!active && member.role === 'owner') throw ownerUntouchable();
  const status = active ? 'active' : 'suspended';
  if (member.status !== status) {
    await deps.membership.setMemberStatus(tx, ctx.organizationId, member.id, status);
    if (!active) await deps.membership.revokeUserSessions(tx, userId);
  }
  return member.id;
}

function loadUser(deps: ScimDeps, ctx: ScimConnector, id: string): Promise<ScimUserRow> {
  return deps.store.findUser(deps.db, ctx.organizationId, id).then((row) => {
    if (!row) throw new ScimError(404, `User ${id} not found`);
    return row;
  });
}

const userNameTaken = (userName: string | undefined) =>
  new ScimError(409, `userName ${userName} is already taken`, 'uniqueness');

/**
 * Replaces a user with what `build` makes of its current row. The row is read locked, so a write
 * made from a stale copy cannot undo a concurrent one (a deactivation above all).
 */
async function writeUser(
  deps: ScimDeps,
  ctx: ScimContext,
  id: string,
  build: (current: ScimUserRow) => Doc,
): Promise<Doc> {
  // An unknown user is 404 whatever the SSO domain's state (only then a paused connector is 403);
  // the row the write uses is read again, locked, inside the transaction.
  await loadUser(deps, ctx, id);
  const domain = await verifiedDomain(deps, ctx);
  let userName: string | undefined;
  try {
    return await writeTransaction(deps.db, ctx, async (tx) => {
      await holdMemberChanges(deps, tx, ctx);
      const locked = await deps.store.findUser(tx, ctx.organizationId, id, true);
      if (!locked) throw new ScimError(404, `User ${id} not found`);
      const doc = build(locked);
      const attributes = userAttributes(doc, locked.active);
      userName = attributes.userName;
      doc.active = attributes.active;
      // A write that leaves the user inactive only takes access away: it needs no verified domain and
      // is not held to the account's rules, so that no state of the domain or of the profile can keep
      // a departed person in. It does not touch the account either.
      if (attributes.active) await syncAccount(deps, tx, locked.user_id, accountOf(doc, requireDomain(domain)));
      const memberId = await syncMember(deps, tx, ctx, locked.user_id, attributes.active);
      const row = await deps.store.updateUser(tx, ctx.organizationId, locked.id, {
        memberId,
        ...attributes,
        resource: doc,
      });
      tx.audit({
        action: 'scim_user.updated',
        target: { type: 'scim_user', id: locked.id, name: attributes.userName },
        changes: { userName: attributes.userName, active: attributes.active },
      });
      return userWithGroups(deps, tx, ctx, row);
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw userNameTaken(userName);
    throw error;
  }
}

export async function listUsers(
  deps: ScimDeps,
  ctx: ScimConnector,
  query: { filter?: string | undefined; paging: Paging },
) {
  const { rows, total } = await deps.store.listUsers(
    deps.db,
    ctx.organizationId,
    filterOf(query.filter),
    query.paging.startIndex - 1,
    query.paging.count,
  );
  const groups = await deps.store.memberships(
    deps.db,
    ctx.organizationId,
    'user',
    rows.map((r) => r.id),
  );
  const resources = rows.map((row) =>
    renderUser(
      deps.baseUrl,
      row,
      groups.filter((g) => g.scim_user_id === row.id),
    ),
  );
  return listResponse(resources, total, query.paging);
}

export async function getUser(deps: ScimDeps, ctx: ScimConnector, id: string): Promise<Doc> {
  return userWithGroups(deps, deps.db, ctx, await loadUser(deps, ctx, id));
}

export async function createUser(deps: ScimDeps, ctx: ScimContext, body: unknown): Promise<Doc> {
  const doc = normalizeResource('User', body);
  // Even an inactive user needs the domain: creating one makes or links an account.
  const domain = await requireVerifiedDomain(deps, ctx);
  const attributes = userAttributes(doc, true);
  const account = accountOf(doc, domain);
  doc.active = attributes.active;
  try {
    return await writeTransaction(deps.db, ctx, async (tx) => {
      await holdMemberChanges(deps, tx, ctx);
      if (await deps.store.findUserByUserName(tx, ctx.organizationId, attributes.userName))
        throw userNameTaken(attributes.userName);
      const user = await deps.users.ensureUser(tx, account);
      if (await deps.store.findUserByUserId(tx, ctx.organizationId, user.id)) {
        throw new ScimError(409, `Another SCIM user already provisions ${account.email}`, 'uniqueness');
      }
      // Sign-up does not prove that one owns the address, so an account someone made with a password
      // is not handed this membership (else anyone could sign up as a future hire and be provisioned
      // into the organization). It is linked when the organization already has it as a member, or
      // when it has no password: then it was made by provisioning, and nobody can sign in to it.
      if (user.password_hash !== null && !(await deps.membership.getMemberByUser(ctx.organizationId, user.id, tx))) {
        throw new ScimError(
          409,
          `An account with the e-mail address ${account.email} already exists and is not a member of this organization: invite that person, then provision them`,
          'uniqueness',
        );
      }
      // A linked account takes the directory's name (its e-mail is this one already, maybe in other case).
      if (attributes.active) await syncAccount(deps, tx, user.id, account);
      await deps.membership.ensureMember(tx, ctx.organizationId, user.id, 'member');
      const memberId = await syncMember(deps, tx, ctx, user.id, attributes.active);
      const row = await deps.store.insertUser(tx, {
        id: newId('scimu'),
        organizationId: ctx.organizationId,
        userId: user.id,
        memberId,
        ...attributes,
        resource: doc,
      });
      tx.audit({
        action: 'scim_user.created',
        target: { type: 'scim_user', id: row.id, name: attributes.userName },
        changes: { userName: attributes.userName, active: attributes.active, email: account.email },
      });
      return renderUser(deps.baseUrl, row, []);
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw userNameTaken(attributes.userName);
    throw error;
  }
}

export function replaceUser(deps: ScimDeps, ctx: ScimContext, id: string, body: unknown): Promise<Doc> {
  return writeUser(deps, ctx, id, () => normalizeResource('User', body));
}

export function patchUser(deps: ScimDeps, ctx: ScimContext, id: string, body: unknown): Promise<Doc> {
  const operations = parseOperations(body);
  return writeUser(deps, ctx, id, (existing) => {
    const current: Doc = { ...existing.resource, ...columnAttributes(existing) };
    return normalizeResource('User', applyPatch('User', current, operations));
  });
}

/** Deleting a provisioned user removes them from the organization and revokes their sessions. */
export async function deleteUser(deps: ScimDeps, ctx: ScimContext, id: string): Promise<void> {
  const afterwards = await writeTransaction(deps.db, ctx, async (tx) => {
    const pending: Array<() => Promise<void>> = [];
    await holdMemberChanges(deps, tx, ctx);
    const row = await deps.store.findUser(tx, ctx.organizationId, id, true);
    if (!row) throw new ScimError(404, `User ${id} not found`);
    // By person, as in syncMember: the membership may be a newer one than scim_users.member_id names.
    const member = await deps.membership.getMemberByUser(ctx.organizationId, row.user_id, tx);
    if (member?.role === 'owner') throw ownerUntouchable();
    if (member) {
      for (const hook of deps.removalHooks ?? [])
        pending.push(await hook.beforeRemoval(tx, ctx.organizationId, member.id));
      // Recorded as SCIM's: SSO sign-in must not provision them back (just-in-time).
      await deps.membership.deleteMember(tx, ctx.organizationId, member.id, 'scim');
      await deps.membership.revokeUserSessions(tx, row.user_id);
    }
    await deps.store.deleteUser(tx, ctx.organizationId, id);
    tx.audit({ action: 'scim_user.deleted', target: { type: 'scim_user', id, name: row.user_name } });
    return pending;
  });
  // Committed: the hooks' follow-ups (best effort, such as revoking OAuth tokens) cannot undo the removal.
  for (const run of afterwards) await run();
}
